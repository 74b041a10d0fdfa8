import CDMigrate

/// Typed values in MigrationManager.userInfo for C policies: what Core Data policies keep in
/// `manager.userInfo` (counters, names, flags, instances), shared by every policy, host function
/// and pass of one run and emptied when the run ends. They are stored as engine values, so value
/// expressions read them too (`$manager.userInfo.key`), as Swift policies' values are.
enum PolicyUserInfo {
    static func set(_ ctx: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ makeValue: () throws -> Value) -> Int32 {
        withContext(ctx) { context, _ in
            let name = try CString.argument(key, "the user info key")
            context.manager.userInfo[name] = try makeValue()
        }
    }
}

@_cdecl("cdm_context_set_user_info_null")
public func cdm_context_set_user_info_null(_ ctx: OpaquePointer?, _ key: UnsafePointer<CChar>?) -> Int32 {
    PolicyUserInfo.set(ctx, key) { .null }
}

@_cdecl("cdm_context_set_user_info_int64")
public func cdm_context_set_user_info_int64(_ ctx: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ value: Int64)
    -> Int32
{
    PolicyUserInfo.set(ctx, key) { .integer(value) }
}

@_cdecl("cdm_context_set_user_info_double")
public func cdm_context_set_user_info_double(_ ctx: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ value: Double)
    -> Int32
{
    PolicyUserInfo.set(ctx, key) { .double(value) }
}

@_cdecl("cdm_context_set_user_info_bool")
public func cdm_context_set_user_info_bool(_ ctx: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ value: Int32) -> Int32
{
    PolicyUserInfo.set(ctx, key) { .bool(value != 0) }
}

@_cdecl("cdm_context_set_user_info_text")
public func cdm_context_set_user_info_text(
    _ ctx: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ text: UnsafePointer<CChar>?, _ length: Int
) -> Int32 {
    PolicyUserInfo.set(ctx, key) { .string(try CString.argument(text, length: length, "the text")) }
}

@_cdecl("cdm_context_set_user_info_object")
public func cdm_context_set_user_info_object(
    _ ctx: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ object: OpaquePointer?
) -> Int32 {
    PolicyUserInfo.set(ctx, key) {
        guard let object = object else { return .null }
        return .object(try ThreadState.current.entry(object, as: ObjectEntry.self, "object").object)
    }
}

@_cdecl("cdm_context_get_user_info_value")
public func cdm_context_get_user_info_value(
    _ ctx: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<OpaquePointer?>?
) -> Int32 {
    withContext(ctx) { context, scope in
        let out = try required(out, "value")
        out.pointee = nil
        let name = try CString.argument(key, "the user info key")
        guard let entry = context.manager.userInfo[name] else { return }
        if entry is HostPointer {
            throw MigrationError.mismatch(
                "user info '\(name)' holds a host pointer: read it with cdm_context_get_user_info")
        }
        guard let value = entry as? Value else {
            throw MigrationError.mismatch(
                "user info '\(name)' holds a \(type(of: entry)) set by Swift code, not a value")
        }
        out.pointee = scope.handle(ValueEntry(value, writable: false))
    }
}
