import CDMigrate

/// What cdm_model, cdm_mapping, cdm_migration and cdm_store share: a retained Swift object behind
/// an opaque pointer, which keeps its last error.
class LongLivedHandle: ErrorSink {
    var pointer: OpaquePointer { OpaquePointer(Unmanaged.passRetained(self).toOpaque()) }

    static func unretained(_ pointer: OpaquePointer?) -> Self? {
        guard let pointer = pointer else { return nil }
        return Unmanaged<Self>.fromOpaque(UnsafeRawPointer(pointer)).takeUnretainedValue()
    }

    static func release(_ pointer: OpaquePointer?) {
        guard let pointer = pointer else { return }
        Unmanaged<LongLivedHandle>.fromOpaque(UnsafeRawPointer(pointer)).release()
    }

    /// The handle, or CDM_MISUSE (kept as the thread's last error) for NULL.
    static func required(_ pointer: OpaquePointer?, _ what: String) throws -> Self {
        guard let handle = unretained(pointer) else { throw MigrationError.misuse("the \(what) handle is NULL") }
        return handle
    }
}

/// Runs a C entry point on a long-lived handle: errors are kept by the handle and the thread.
@inline(__always)
func withHandle<T: LongLivedHandle>(_ pointer: OpaquePointer?, _ type: T.Type, _ what: String, _ body: (T) throws -> Void) -> Int32 {
    guard let handle = T.unretained(pointer) else {
        return recordError(MigrationError.misuse("the \(what) handle is NULL"), nil)
    }
    return guarded(handle) { try body(handle) }
}

/// Stores a new handle in `out` (as constructors do, also on failure) and returns its result.
func construct<T: LongLivedHandle>(_ out: UnsafeMutablePointer<OpaquePointer?>?, _ handle: T, _ body: (T) throws -> Void) -> Int32 {
    guard let out = out else {
        return recordError(MigrationError.misuse("the out pointer is NULL"), nil)
    }
    let code = guarded(handle) { try body(handle) }
    out.pointee = handle.pointer
    return code
}
