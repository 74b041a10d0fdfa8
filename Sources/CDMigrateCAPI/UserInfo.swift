import CDMigrate

/// A host pointer in MigrationManager.userInfo: its destroy function runs when the entry is
/// replaced or removed, or when the migration ends (the manager clears userInfo) or is freed.
final class HostPointer {
    let pointer: UnsafeMutableRawPointer
    let destroy: DestroyFunction?

    init(_ pointer: UnsafeMutableRawPointer, _ destroy: DestroyFunction?) {
        self.pointer = pointer
        self.destroy = destroy
    }

    deinit { destroy?(pointer) }
}

enum UserInfo {
    /// Sets (NULL: removes) a key. Ownership of the pointer passes on in every case, as with registrations.
    static func set(
        _ manager: MigrationManager?, _ key: UnsafePointer<CChar>?, _ pointer: UnsafeMutableRawPointer?,
        _ destroy: DestroyFunction?
    ) throws {
        // Wrapped at once, so a failure below destroys it exactly once too.
        let box = pointer.map { HostPointer($0, destroy) }
        guard let manager = manager else { throw MigrationError.misuse("the migration handle holds no migration") }
        let name = try CString.argument(key, "the user info key")
        manager.userInfo[name] = box
    }

    /// Between the runs of a chain: into what every step's userInfo starts with.
    static func set(
        _ chain: ChainSetup, _ key: UnsafePointer<CChar>?, _ pointer: UnsafeMutableRawPointer?,
        _ destroy: DestroyFunction?
    ) throws {
        let box = pointer.map { HostPointer($0, destroy) }
        let name = try CString.argument(key, "the user info key")
        chain.userInfo[name] = box
    }

    static func get(
        _ manager: MigrationManager?, _ key: UnsafePointer<CChar>?,
        _ out: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
    ) throws {
        guard let out = out else { throw MigrationError.misuse("the pointer out is NULL") }
        out.pointee = nil
        guard let manager = manager else { throw MigrationError.misuse("the migration handle holds no migration") }
        try get(manager.userInfo, key, out)
    }

    static func get(
        _ userInfo: [String: Any], _ key: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    ) throws {
        out.pointee = nil
        let name = try CString.argument(key, "the user info key")
        guard let entry = userInfo[name] else { return }
        guard let box = entry as? HostPointer else {
            if entry is Value {
                throw MigrationError.mismatch(
                    "user info '\(name)' holds a typed value: read it with cdm_context_get_user_info_value")
            }
            throw MigrationError.mismatch(
                "user info '\(name)' holds a \(type(of: entry)) set by Swift code, not a host pointer")
        }
        out.pointee = box.pointer
    }
}

@_cdecl("cdm_context_set_user_info")
public func cdm_context_set_user_info(
    _ ctx: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ pointer: UnsafeMutableRawPointer?,
    _ destroy: DestroyFunction?
) -> Int32 {
    var taken = false
    let code = withContext(ctx) { context, _ in
        taken = true
        try UserInfo.set(context.manager, key, pointer, destroy)
    }
    if !taken, let pointer = pointer { destroy?(pointer) }
    return code
}

@_cdecl("cdm_context_get_user_info")
public func cdm_context_get_user_info(
    _ ctx: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
) -> Int32 {
    withContext(ctx) { context, _ in try UserInfo.get(context.manager, key, out) }
}

@_cdecl("cdm_migration_set_user_info")
public func cdm_migration_set_user_info(
    _ migration: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ pointer: UnsafeMutableRawPointer?,
    _ destroy: DestroyFunction?
) -> Int32 {
    var taken = false
    let code = withHandle(migration, MigrationHandle.self, "migration") { handle in
        taken = true
        if let chain = handle.chain, !handle.running { return try UserInfo.set(chain, key, pointer, destroy) }
        try UserInfo.set(handle.manager, key, pointer, destroy)
    }
    if !taken, let pointer = pointer { destroy?(pointer) }
    return code
}

@_cdecl("cdm_migration_get_user_info")
public func cdm_migration_get_user_info(
    _ migration: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
) -> Int32 {
    withHandle(migration, MigrationHandle.self, "migration") { handle in
        if let chain = handle.chain, !handle.running {
            guard let out = out else { throw MigrationError.misuse("the pointer out is NULL") }
            return try UserInfo.get(chain.userInfo, key, out)
        }
        try UserInfo.get(handle.manager, key, out)
    }
}
