import CSQLite

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

@_cdecl("cdm_libversion")
public func cdm_libversion() -> UnsafePointer<CChar> { CString.interned(LibraryVersion.text) }

@_cdecl("cdm_libversion_number")
public func cdm_libversion_number() -> Int32 { LibraryVersion.number }

@_cdecl("cdm_sqlite_version")
public func cdm_sqlite_version() -> UnsafePointer<CChar> { sqlite3_libversion() }

@_cdecl("cdm_free")
public func cdm_free(_ pointer: UnsafeMutableRawPointer?) { free(pointer) }
