import CDMigrate

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// What cdm_model, cdm_mapping, cdm_migration and cdm_store share: a retained Swift object behind
/// an opaque pointer, which keeps its last error. Every live one is in `LiveHandles`, so a pointer
/// of another kind (a mapping passed as a model, a callback's short-lived handle, a freed
/// handle) is told apart and refused with CDM_MISUSE instead of being used as the wrong object.
class LongLivedHandle: ErrorSink {
    /// The C type's name ("cdm_model"), for messages.
    class var kind: String { "cdm handle" }

    override init() {
        super.init()
        LiveHandles.insert(self)
    }

    deinit { LiveHandles.remove(self) }

    var pointer: OpaquePointer { OpaquePointer(Unmanaged.passRetained(self).toOpaque()) }

    /// The live handle of this kind, or nil (NULL, another kind, not a live handle). No error is recorded.
    static func unretained(_ pointer: OpaquePointer?) -> Self? {
        LiveHandles.handle(pointer) as? Self
    }

    /// Frees a handle of this kind; NULL is harmless, anything else is refused (as the thread's last error).
    static func release(_ pointer: OpaquePointer?, _ what: String) {
        guard pointer != nil else { return }
        do {
            _ = try required(pointer, what)
            Unmanaged<LongLivedHandle>.fromOpaque(UnsafeRawPointer(pointer.unsafelyUnwrapped)).release()
        } catch {
            recordError(error, nil)
        }
    }

    /// The handle, or CDM_MISUSE (kept as the thread's last error) naming what is wrong: NULL,
    /// a handle of another kind (naming both kinds), or no live handle at all.
    static func required(_ pointer: OpaquePointer?, _ what: String) throws -> Self {
        guard let pointer = pointer else { throw MigrationError.misuse("the \(what) handle is NULL") }
        if let live = LiveHandles.handle(pointer) {
            if let handle = live as? Self { return handle }
            throw MigrationError.misuse("the \(what) handle is a \(Swift.type(of: live).kind), not a \(kind)")
        }
        if let entry = ThreadState.current.table.lookup(pointer) {
            throw MigrationError.misuse("the \(what) handle is a \(Swift.type(of: entry).kind), not a \(kind)")
        }
        throw MigrationError.misuse("the \(what) handle is not a live \(kind) (freed, or not a handle of this library)")
    }
}

/// The addresses of every live long-lived handle, shared by all threads.
enum LiveHandles {
    private static let handles = LockedValue<Set<UInt>>([])

    private static func address(_ handle: LongLivedHandle) -> UInt {
        UInt(bitPattern: Unmanaged.passUnretained(handle).toOpaque())
    }

    static func insert(_ handle: LongLivedHandle) {
        handles.withLock { _ = $0.insert(address(handle)) }
    }

    static func remove(_ handle: LongLivedHandle) {
        handles.withLock { _ = $0.remove(address(handle)) }
    }

    /// The live handle at `pointer`, or nil when no live handle is there.
    static func handle(_ pointer: OpaquePointer?) -> LongLivedHandle? {
        guard let pointer = pointer else { return nil }
        let live = handles.withLock { $0.contains(UInt(bitPattern: pointer)) }
        guard live else { return nil }
        return Unmanaged<LongLivedHandle>.fromOpaque(UnsafeRawPointer(pointer)).takeUnretainedValue()
    }
}

/// Runs a C entry point on a long-lived handle: errors are kept by the handle and the thread; a
/// NULL handle, or one of another kind, only by the thread.
@inline(__always)
func withHandle<T: LongLivedHandle>(
    _ pointer: OpaquePointer?, _ type: T.Type, _ what: String, _ body: (T) throws -> Void
) -> Int32 {
    let handle: T
    do {
        handle = try T.required(pointer, what)
    } catch {
        return recordError(error, nil)
    }
    return guarded(handle) { try body(handle) }
}

/// Stores a new handle in `out` (as constructors do, also on failure) and returns its result.
func construct<T: LongLivedHandle>(
    _ out: UnsafeMutablePointer<OpaquePointer?>?, _ handle: T, _ body: (T) throws -> Void
) -> Int32 {
    guard let out = out else {
        return recordError(MigrationError.misuse("the out pointer is NULL"), nil)
    }
    let code = guarded(handle) { try body(handle) }
    out.pointee = handle.pointer
    return code
}

/// A required out-pointer: NULL is CDM_MISUSE naming it.
@inline(__always)
func required<T>(_ pointer: UnsafeMutablePointer<T>?, _ what: String) throws -> UnsafeMutablePointer<T> {
    guard let pointer = pointer else { throw MigrationError.misuse("the \(what) pointer is NULL") }
    return pointer
}
