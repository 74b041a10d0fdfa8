import CDMigrate

// Any value set on an instance's attribute (setValue:forKey: with a composite object), appended to
// the C API: a host builds the value (a dictionary, an array) in a writable value handle first.

@_cdecl("cdm_object_new_value")
public func cdm_object_new_value(_ o: OpaquePointer?, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    withEntry(o, ObjectEntry.self, "object") { entry in
        let out = try required(out, "value")
        out.pointee = nil
        guard let scope = entry.scope else { throw MigrationError.misuse("the instance's callback has returned") }
        out.pointee = scope.handle(ValueEntry(.null, writable: true))
    }
}

@_cdecl("cdm_object_set_value")
public func cdm_object_set_value(_ o: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ v: OpaquePointer?) -> Int32 {
    withEntry(o, ObjectEntry.self, "object") { entry in
        let name = try CString.argument(key, "the key")
        let value = try ThreadState.current.entry(v, as: ValueEntry.self, "value").value
        let attribute = try ObjectAccess.writable(entry, key: name, .null)
        switch value {
        case .object, .migrationManager:
            throw MigrationError.mismatch(
                "attribute '\(entry.entityName).\(name)' cannot take the \(value.typeName) value '\(value)'")
        default: break
        }
        try entry.object.setValue(value, for: attribute)
        entry.forgetBuffer(index: attribute.index)
    }
}
