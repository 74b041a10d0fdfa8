import CDMigrate

// Dictionaries a host makes (appended to the C API): what a policy method returns, or sets on an
// instance, for a transformable attribute whose app keeps an NSDictionary (`[Int: URL]`).

/// Runs `body` on a writable value handle (a host function's result, a member of one, or a value
/// from cdm_object_new_value); CDM_MISUSE for an argument or an expression's result.
func withWritableValue(_ v: OpaquePointer?, _ body: (ValueEntry) throws -> Void) -> Int32 {
    withEntry(v, ValueEntry.self, "value") { entry in
        guard entry.writable else {
            throw MigrationError.misuse(
                "only a host function's result value, a member of it or a value from cdm_object_new_value can be set, not an argument or an expression's result"
            )
        }
        try body(entry)
    }
}

@_cdecl("cdm_value_set_dictionary")
public func cdm_value_set_dictionary(_ v: OpaquePointer?) -> Int32 {
    withWritableValue(v) { entry in entry.value = .dictionary([]) }
}

@_cdecl("cdm_value_dictionary_add_new")
public func cdm_value_dictionary_add_new(
    _ v: OpaquePointer?, _ key: UnsafeMutablePointer<OpaquePointer?>?,
    _ member: UnsafeMutablePointer<OpaquePointer?>?
) -> Int32 {
    withEntry(v, ValueEntry.self, "value") { entry in
        let keyOut = try required(key, "key")
        let valueOut = try required(member, "entry_value")
        keyOut.pointee = nil
        valueOut.pointee = nil
        guard entry.writable else {
            throw MigrationError.misuse(
                "only a host function's result value, a member of it or a value from cdm_object_new_value can be set, not an argument or an expression's result"
            )
        }
        guard case .dictionary(var entries) = entry.value else {
            throw MigrationError.mismatch(
                "the value is \(entry.value.typeName == "nil" ? "null" : "a \(entry.value.typeName)"), not a dictionary: call cdm_value_set_dictionary first"
            )
        }
        guard let scope = entry.scope else { throw MigrationError.misuse("the value's callback has returned") }
        entry.value = .null  // one reference to the entries while they grow
        entries.append((key: .null, value: .null))
        entry.value = .dictionary(entries)
        let index = entries.count - 1
        keyOut.pointee = scope.handle(ValueEntry(memberOf: entry, at: .key(index)))
        valueOut.pointee = scope.handle(ValueEntry(memberOf: entry, at: .entryValue(index)))
    }
}

@_cdecl("cdm_value_set_uri")
public func cdm_value_set_uri(_ v: OpaquePointer?, _ text: UnsafePointer<CChar>?, _ length: Int) -> Int32 {
    withWritableValue(v) { entry in entry.value = .uri(try CString.argument(text, length: length, "the URI")) }
}
