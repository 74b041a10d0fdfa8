import CDMigrate

// Dictionaries a host makes (appended to the C API): what a policy method returns, or sets on an
// instance, for a transformable attribute whose app keeps an NSDictionary (`[Int: URL]`).

@_cdecl("cdm_value_set_dictionary")
public func cdm_value_set_dictionary(_ v: OpaquePointer?) -> Int32 {
    withWritableValue(v) { entry in entry.value = .dictionary([]) }
}

@_cdecl("cdm_value_dictionary_add_new")
public func cdm_value_dictionary_add_new(
    _ v: OpaquePointer?, _ key: UnsafeMutablePointer<OpaquePointer?>?,
    _ member: UnsafeMutablePointer<OpaquePointer?>?
) -> Int32 {
    key?.pointee = nil
    member?.pointee = nil
    return withWritableValue(v) { entry in
        let keyOut = try required(key, "key")
        let valueOut = try required(member, "entry_value")
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
