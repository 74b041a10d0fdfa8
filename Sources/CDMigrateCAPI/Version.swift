#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CSQLite

@_cdecl("cdm_libversion")
public func cdm_libversion() -> UnsafePointer<CChar> { CString.interned(LibraryVersion.text) }

@_cdecl("cdm_libversion_number")
public func cdm_libversion_number() -> Int32 { LibraryVersion.number }

@_cdecl("cdm_sqlite_version")
public func cdm_sqlite_version() -> UnsafePointer<CChar> { sqlite3_libversion() }

@_cdecl("cdm_free")
public func cdm_free(_ pointer: UnsafeMutableRawPointer?) { free(pointer) }

/// Lets the C tests check that the structs of the header and of the Swift side agree.
@_cdecl("cdm_internal_abi_check")
public func cdm_internal_abi_check(_ policySize: Int, _ progressSize: Int) -> Int32 {
    (policySize == MemoryLayout<PolicyHooks>.size && progressSize == MemoryLayout<ProgressRecord>.size) ? 0 : 1
}
