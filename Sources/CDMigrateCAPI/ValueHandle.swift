import CDMigrate

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Where a writable member handle writes: a collection's element, or a dictionary entry's key or value.
enum MemberSlot {
    case element(Int)
    case key(Int)
    case entryValue(Int)
}

/// cdm_value: an expression's result or a host function's argument (read-only), or a host
/// function's result (writable).
final class ValueEntry: HandleEntry {
    override class var kind: String { "cdm_value" }
    /// The value; setting it sets it in the container too (once per level: `stored` changes
    /// without that, so a nested member's change costs one pass up its containers).
    var value: Value {
        get { stored }
        set {
            stored = newValue
            container?.replaceMember(memberSlot, with: newValue)
        }
    }
    private var stored: Value
    let writable: Bool
    /// For a member made by cdm_value_append_new or cdm_value_dictionary_add_new: the collection
    /// or dictionary it belongs to, and where in it.
    private weak var container: ValueEntry?
    private var memberSlot = MemberSlot.element(0)
    private var buffer: UnsafeMutableRawPointer?

    init(_ value: Value, writable: Bool) {
        self.stored = value
        self.writable = writable
    }

    /// A writable member of `container`'s collection or dictionary at `slot`: what is set on it
    /// is set there.
    init(memberOf container: ValueEntry, at slot: MemberSlot) {
        self.stored = .null
        self.writable = true
        self.container = container
        self.memberSlot = slot
    }

    private func replaceMember(_ slot: MemberSlot, with member: Value) {
        switch (slot, stored) {
        case (.element(let index), .collection(var values)) where index < values.count:
            stored = .null  // one reference to the array while it changes
            values[index] = member
            value = .collection(values)
        case (.key(let index), .dictionary(var entries)) where index < entries.count:
            stored = .null
            entries[index].key = member
            value = .dictionary(entries)
        case (.entryValue(let index), .dictionary(var entries)) where index < entries.count:
            stored = .null
            entries[index].value = member
            value = .dictionary(entries)
        default: return
        }
    }

    deinit { free(buffer) }

    func keep(_ bytes: [UInt8]) -> UnsafeMutableRawPointer? {
        var terminated = bytes
        terminated.append(0)
        free(buffer)
        buffer = CString.copyBytes(terminated)
        return buffer
    }

    var typeCode: Int32 { ValueTypeCode.of(value) }

    func mismatch(_ wanted: String) -> MigrationError {
        MigrationError.mismatch(
            "the value is \(value.typeName == "nil" ? "null" : "a \(value.typeName)"), not \(wanted)")
    }
}

private func read(_ v: OpaquePointer?, _ body: (ValueEntry) throws -> Void) -> Int32 {
    withEntry(v, ValueEntry.self, "value", body)
}

/// A reader with a required out-pointer, checked before the value is.
private func read<T>(
    _ v: OpaquePointer?, _ out: UnsafeMutablePointer<T>?, _ what: String,
    _ body: (ValueEntry, UnsafeMutablePointer<T>) throws -> Void
) -> Int32 {
    withEntry(v, ValueEntry.self, "value") { entry in try body(entry, try required(out, what)) }
}

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

private func write(_ v: OpaquePointer?, _ make: () throws -> Value) -> Int32 {
    withWritableValue(v) { entry in entry.value = try make() }
}

@_cdecl("cdm_value_type")
public func cdm_value_type(_ v: OpaquePointer?) -> Int32 {
    var type: Int32 = -1
    _ = read(v) { type = $0.typeCode }
    return type
}

@_cdecl("cdm_value_int64")
public func cdm_value_int64(_ v: OpaquePointer?, _ out: UnsafeMutablePointer<Int64>?) -> Int32 {
    read(v, out, "out") { entry, out in
        switch entry.value {
        case .integer, .bool, .double, .decimal:
            guard let i = entry.value.integerValue else {
                throw MigrationError.mismatch("the value \(entry.value) does not fit in 64 bits")
            }
            out.pointee = i
        default: throw entry.mismatch("a number")
        }
    }
}

@_cdecl("cdm_value_double")
public func cdm_value_double(_ v: OpaquePointer?, _ out: UnsafeMutablePointer<Double>?) -> Int32 {
    read(v, out, "out") { entry, out in
        switch entry.value {
        case .integer, .bool, .double, .decimal: out.pointee = entry.value.doubleValue ?? 0
        default: throw entry.mismatch("a number")
        }
    }
}

@_cdecl("cdm_value_bool")
public func cdm_value_bool(_ v: OpaquePointer?, _ out: UnsafeMutablePointer<Int32>?) -> Int32 {
    read(v, out, "out") { entry, out in
        switch entry.value {
        case .integer, .bool, .double, .decimal: out.pointee = entry.value.boolValue ? 1 : 0
        default: throw entry.mismatch("a number or boolean")
        }
    }
}

@_cdecl("cdm_value_date")
public func cdm_value_date(_ v: OpaquePointer?, _ out: UnsafeMutablePointer<Double>?) -> Int32 {
    read(v, out, "out") { entry, out in
        guard case .date(let d) = entry.value else { throw entry.mismatch("a date") }
        out.pointee = d
    }
}

@_cdecl("cdm_value_text")
public func cdm_value_text(
    _ v: OpaquePointer?, _ out: UnsafeMutablePointer<UnsafePointer<CChar>?>?, _ length: UnsafeMutablePointer<Int>?
) -> Int32 {
    read(v, out, "text") { entry, out in
        switch entry.value {
        case .string(let s), .uri(let s), .decimal(let s):
            let bytes = Array(s.utf8)
            out.pointee = entry.keep(bytes).map { UnsafePointer($0.assumingMemoryBound(to: CChar.self)) }
            length?.pointee = bytes.count
        default: throw entry.mismatch("text")
        }
    }
}

@_cdecl("cdm_value_blob")
public func cdm_value_blob(
    _ v: OpaquePointer?, _ out: UnsafeMutablePointer<UnsafeRawPointer?>?, _ length: UnsafeMutablePointer<Int>?
) -> Int32 {
    read(v, out, "bytes") { entry, out in
        switch entry.value {
        case .binary(let bytes), .uuid(let bytes):
            out.pointee = UnsafeRawPointer(entry.keep(bytes))
            length?.pointee = bytes.count
        default: throw entry.mismatch("binary data")
        }
    }
}

@_cdecl("cdm_value_uuid")
public func cdm_value_uuid(_ v: OpaquePointer?, _ out: UnsafeMutablePointer<UInt8>?) -> Int32 {
    read(v, out, "UUID") { entry, out in
        guard case .uuid(let bytes) = entry.value, bytes.count == 16 else { throw entry.mismatch("a UUID") }
        for i in 0..<16 { out[i] = bytes[i] }
    }
}

@_cdecl("cdm_value_object")
public func cdm_value_object(_ v: OpaquePointer?, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    read(v, out, "object") { entry, out in
        guard case .object(let object) = entry.value else { throw entry.mismatch("an instance") }
        guard let scope = entry.scope else { throw MigrationError.misuse("the value's callback has returned") }
        out.pointee = scope.handle(for: object)
    }
}

@_cdecl("cdm_value_count")
public func cdm_value_count(_ v: OpaquePointer?, _ out: UnsafeMutablePointer<Int>?) -> Int32 {
    read(v, out, "count") { entry, out in out.pointee = entry.value.elements.count }
}

@_cdecl("cdm_value_element_at")
public func cdm_value_element_at(_ v: OpaquePointer?, _ i: Int, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    read(v, out, "element") { entry, out in
        let elements = entry.value.elements
        guard i >= 0, i < elements.count else {
            throw MigrationError.notFound("element \(i) is out of range: the value has \(elements.count)")
        }
        guard let scope = entry.scope else { throw MigrationError.misuse("the value's callback has returned") }
        out.pointee = scope.handle(ValueEntry(elements[i], writable: false))
    }
}

/// The entries of a dictionary value (`CDM_VALUE_DICTIONARY`); a mismatch for any other value.
private func dictionaryEntries(_ value: Value) throws -> [(key: Value, value: Value)] {
    guard case .dictionary(let entries) = value else {
        throw MigrationError(.mismatch, "the value is a \(value.typeName), not a dictionary")
    }
    return entries
}

@_cdecl("cdm_value_dictionary_count")
public func cdm_value_dictionary_count(_ v: OpaquePointer?, _ out: UnsafeMutablePointer<Int>?) -> Int32 {
    read(v, out, "count") { entry, out in out.pointee = try dictionaryEntries(entry.value).count }
}

/// Entry `i`'s key (`key == true`) or value of a dictionary value, as a read-only handle.
private func dictionaryMember(
    _ v: OpaquePointer?, _ i: Int, _ out: UnsafeMutablePointer<OpaquePointer?>?, key: Bool
) -> Int32 {
    read(v, out, key ? "key" : "value") { entry, out in
        let entries = try dictionaryEntries(entry.value)
        guard i >= 0, i < entries.count else {
            throw MigrationError.notFound("entry \(i) is out of range: the dictionary has \(entries.count)")
        }
        guard let scope = entry.scope else { throw MigrationError.misuse("the value's callback has returned") }
        out.pointee = scope.handle(ValueEntry(key ? entries[i].key : entries[i].value, writable: false))
    }
}

@_cdecl("cdm_value_dictionary_key_at")
public func cdm_value_dictionary_key_at(_ v: OpaquePointer?, _ i: Int, _ out: UnsafeMutablePointer<OpaquePointer?>?)
    -> Int32
{ dictionaryMember(v, i, out, key: true) }

@_cdecl("cdm_value_dictionary_value_at")
public func cdm_value_dictionary_value_at(
    _ v: OpaquePointer?, _ i: Int, _ out: UnsafeMutablePointer<OpaquePointer?>?
) -> Int32 { dictionaryMember(v, i, out, key: false) }

@_cdecl("cdm_value_to_json")
public func cdm_value_to_json(_ v: OpaquePointer?, _ out: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32
{
    read(v) { entry in
        guard let out = out else { throw MigrationError.misuse("the json pointer is NULL") }
        out.pointee = CString.copy(ValueJSON.json(entry.value).serialized())
    }
}

@_cdecl("cdm_value_set_null")
public func cdm_value_set_null(_ v: OpaquePointer?) -> Int32 { write(v) { .null } }
@_cdecl("cdm_value_set_int64")
public func cdm_value_set_int64(_ v: OpaquePointer?, _ x: Int64) -> Int32 { write(v) { .integer(x) } }
@_cdecl("cdm_value_set_double")
public func cdm_value_set_double(_ v: OpaquePointer?, _ x: Double) -> Int32 { write(v) { .double(x) } }
@_cdecl("cdm_value_set_bool")
public func cdm_value_set_bool(_ v: OpaquePointer?, _ x: Int32) -> Int32 { write(v) { .bool(x != 0) } }
@_cdecl("cdm_value_set_date")
public func cdm_value_set_date(_ v: OpaquePointer?, _ x: Double) -> Int32 { write(v) { .date(x) } }
@_cdecl("cdm_value_set_text")
public func cdm_value_set_text(_ v: OpaquePointer?, _ text: UnsafePointer<CChar>?, _ length: Int) -> Int32 {
    write(v) { .string(try CString.argument(text, length: length, "the text")) }
}
@_cdecl("cdm_value_set_decimal")
public func cdm_value_set_decimal(_ v: OpaquePointer?, _ text: UnsafePointer<CChar>?) -> Int32 {
    write(v) {
        let digits = try CString.argument(text, "the decimal text")
        guard ModelReader.isDecimalText(digits) else {
            throw MigrationError.mismatch(
                "'\(digits)' is not a decimal number (plain decimal notation, like -12.50 or 3e-2)")
        }
        return .decimal(digits)
    }
}
@_cdecl("cdm_value_set_blob")
public func cdm_value_set_blob(_ v: OpaquePointer?, _ bytes: UnsafeRawPointer?, _ length: Int) -> Int32 {
    write(v) { .binary(try HostBytes.copy(bytes, length: length, "the bytes pointer")) }
}
@_cdecl("cdm_value_set_object")
public func cdm_value_set_object(_ v: OpaquePointer?, _ object: OpaquePointer?) -> Int32 {
    write(v) {
        guard let object = object else { return .null }
        return .object(try ThreadState.current.entry(object, as: ObjectEntry.self, "object").object)
    }
}

// Collections as a function's result (appended to the C API).

/// The members of the collection a writable value holds; CDM_MISMATCH for any other value.
private func collection(of entry: ValueEntry) throws -> [Value] {
    guard case .collection(let values) = entry.value else {
        throw MigrationError.mismatch(
            "the result is \(entry.value.typeName == "nil" ? "null" : "a \(entry.value.typeName)"), not a collection: call cdm_value_set_collection first"
        )
    }
    return values
}

/// Appends `element` to the collection the writable `v` holds.
private func append(_ v: OpaquePointer?, _ element: () throws -> Value?) -> Int32 {
    withWritableValue(v) { entry in
        var values = try collection(of: entry)
        guard let value = try element() else { return }
        entry.value = .null  // one reference to the array while it grows
        values.append(value)
        entry.value = .collection(values)
    }
}

@_cdecl("cdm_value_set_collection")
public func cdm_value_set_collection(_ v: OpaquePointer?) -> Int32 { write(v) { .collection([]) } }

@_cdecl("cdm_value_append_object")
public func cdm_value_append_object(_ v: OpaquePointer?, _ object: OpaquePointer?) -> Int32 {
    append(v) {
        guard let object = object else { return nil }
        return .object(try ThreadState.current.entry(object, as: ObjectEntry.self, "object").object)
    }
}

@_cdecl("cdm_value_append_new")
public func cdm_value_append_new(_ v: OpaquePointer?, _ element: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    element?.pointee = nil
    return withWritableValue(v) { entry in
        let out = try required(element, "element")
        var values = try collection(of: entry)
        guard let scope = entry.scope else { throw MigrationError.misuse("the value's callback has returned") }
        entry.value = .null  // one reference to the array while it grows
        values.append(.null)
        entry.value = .collection(values)
        out.pointee = scope.handle(ValueEntry(memberOf: entry, at: .element(values.count - 1)))
    }
}

@_cdecl("cdm_value_append")
public func cdm_value_append(_ v: OpaquePointer?, _ element: OpaquePointer?) -> Int32 {
    append(v) {
        guard let element = element else { throw MigrationError.misuse("the element is NULL") }
        return try ThreadState.current.entry(element, as: ValueEntry.self, "element").value
    }
}
