import CDMigrate

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// cdm_object: an instance handed to C. Text and blob values read through it are copied into
/// buffers it keeps per attribute, so their pointers stay valid while the handle lives.
final class ObjectEntry: HandleEntry {
    override class var kind: String { "cdm_object" }
    /// The instance the handle stands for: none only while the entry waits in its scope's pool
    /// (`ObjectEntryPool`), where no handle reaches it.
    private var held: ManagedObject?
    var object: ManagedObject { held ?? ObjectEntryPool.placeholder }
    /// Per attribute index (grown to the largest index read), the buffer handed out last for the
    /// attribute's text or bytes and its size: an array, not a dictionary, so that a handle that
    /// reads a value or two costs no hash table.
    private var attributeBuffers: [Buffer?] = []
    private var pathBuffers: [String: UnsafeMutableRawPointer] = [:]
    /// The text and bytes of the last cdm_object_get_fields, in one block.
    private var fieldsBuffer: UnsafeMutableRawPointer?

    private struct Buffer {
        let pointer: UnsafeMutableRawPointer
        let size: Int
    }

    /// An attribute buffer at most this large is kept by a pooled entry (`clear`) and reused for
    /// the next row's value of the attribute: a single-row hook reading a text a row then
    /// allocates nothing for it.
    static let keptBufferSize = 4096

    init(_ object: ManagedObject) { held = object }

    /// Makes an entry its scope released stand for another instance (`ObjectEntryPool`).
    func reuse(for object: ManagedObject) { held = object }

    /// Lets go of the instance and of the buffers of an entry its scope released and keeps for
    /// reuse (`ObjectEntryPool`): what it handed out died with its handle (its attribute buffers
    /// up to `keptBufferSize` bytes are kept, to be written again).
    func clear() {
        held = nil
        if fieldsBuffer != nil {
            free(fieldsBuffer)
            fieldsBuffer = nil
        }
        for i in attributeBuffers.indices {
            if let buffer = attributeBuffers[i], buffer.size > ObjectEntry.keptBufferSize {
                free(buffer.pointer)
                attributeBuffers[i] = nil
            }
        }
        if !pathBuffers.isEmpty {
            for (_, buffer) in pathBuffers { free(buffer) }
            pathBuffers.removeAll()
        }
    }

    /// Replaces the block of the last bulk read by a new one of `size` bytes.
    func newFieldsBuffer(_ size: Int) -> UnsafeMutableRawPointer? {
        free(fieldsBuffer)
        fieldsBuffer = malloc(max(size, 1))
        return fieldsBuffer
    }

    deinit {
        free(fieldsBuffer)
        for buffer in attributeBuffers { free(buffer?.pointer) }
        for (_, buffer) in pathBuffers { free(buffer) }
    }

    /// Copies bytes (NUL-terminated) into the buffer of an attribute (by index) or key path; nil
    /// when out of memory. An attribute's buffer is written again when large enough, else
    /// replaced; a key path's (or, never asked for, a negative index's) is kept by its text.
    func buffer(_ bytes: UnsafeBufferPointer<UInt8>, index: Int, path: String? = nil) -> UnsafeMutableRawPointer? {
        guard path == nil, index >= 0 else {
            guard let copy = CString.terminatedCopy(bytes) else { return nil }
            if let old = pathBuffers.updateValue(copy, forKey: path ?? "#\(index)") { free(old) }
            return copy
        }
        if index >= attributeBuffers.count {
            attributeBuffers.append(contentsOf: repeatElement(nil, count: index + 1 - attributeBuffers.count))
        }
        let size = bytes.count + 1
        let target: UnsafeMutableRawPointer
        if let kept = attributeBuffers[index], kept.size >= size {
            target = kept.pointer
        } else {
            // Rounded up, so that a text a little longer than the last one fits too.
            let rounded = size <= Int.max - 63 ? (size + 63) & ~63 : size
            guard let made = malloc(rounded) else { return nil }
            free(attributeBuffers[index]?.pointer)
            attributeBuffers[index] = Buffer(pointer: made, size: rounded)
            target = made
        }
        if let base = bytes.baseAddress { target.copyMemory(from: base, byteCount: bytes.count) }
        target.storeBytes(of: 0, toByteOffset: bytes.count, as: UInt8.self)
        return target
    }

    /// `buffer(_:index:path:)` for the bytes of an array.
    func buffer(_ bytes: [UInt8], index: Int, path: String?) -> UnsafeMutableRawPointer? {
        bytes.withUnsafeBufferPointer { buffer($0, index: index, path: path) }
    }

    /// `buffer(_:index:path:)` for text; returns the copy (nil when out of memory) and the
    /// text's length in bytes.
    func buffer(text: String, index: Int, path: String?) -> (UnsafeMutableRawPointer?, Int) {
        var text = text
        let (copy, count) = text.withUTF8 { (buffer($0, index: index, path: path), $0.count) }
        return copy == nil ? (nil, 0) : (copy, count)
    }

    /// Frees the buffer of an attribute whose value was just set: what a read handed out for
    /// the old value dies with it.
    func forgetBuffer(index: Int) {
        guard index >= 0, index < attributeBuffers.count else { return }
        free(attributeBuffers[index]?.pointer)
        attributeBuffers[index] = nil
    }

    var entityName: String { object.entity.name }
}

/// The families of typed getters and setters, and the attribute types each one takes.
enum Accessor: String {
    case int64, double, bool, date, text, blob, uuid, null

    func reads(_ type: AttributeType) -> Bool {
        switch self {
        case .int64: return type.isInteger
        case .double: return type == .double || type == .float
        case .bool: return type == .boolean
        case .date: return type == .date
        case .text: return type == .string || type == .uri || type == .decimal
        case .blob: return type == .binary || type == .transformable
        case .uuid: return type == .uuid
        case .null: return true
        }
    }

    /// Whether the setter writes an attribute of `type`. Every setter writes a transformable
    /// attribute: the engine keeps the value's keyed archive there, as Core Data's transformer does
    /// (or refuses it, naming the app's own transformer).
    func writes(_ type: AttributeType) -> Bool {
        if type == .transformable { return true }
        switch self {
        case .int64, .double, .bool: return type.isNumeric
        case .text: return type == .string || type == .uri || type == .decimal || type == .uuid
        case .blob: return type == .binary || type == .transformable || type == .uuid
        default: return reads(type)
        }
    }

    var readsWhat: String {
        switch self {
        case .int64: return "integer16/32/64 attributes"
        case .double: return "double and float attributes"
        case .bool: return "boolean attributes"
        case .date: return "date attributes"
        case .text: return "string, URI and decimal attributes"
        case .blob: return "binary and transformable attributes"
        case .uuid: return "UUID attributes"
        case .null: return "any attribute"
        }
    }
}

/// Resolving names and key paths against an instance's entity (statically, so that a wrong
/// name or type is reported even when the value happens to be null).
enum ObjectAccess {
    static func attribute(of entry: ObjectEntry, index: Int32) throws -> AttributeDescription {
        let attributes = entry.object.entity.attributes
        guard index >= 0, Int(index) < attributes.count else {
            throw MigrationError.notFound(
                "attribute index \(index) is out of range: entity '\(entry.entityName)' has \(attributes.count) attributes"
            )
        }
        return attributes[Int(index)]
    }

    /// The relationships a key path walks and the entity it arrives at with its last key.
    static func walk(_ entity: EntityDescription, _ keys: [String], path: String) throws -> (
        entity: EntityDescription, throughToMany: Bool
    ) {
        var current = entity
        var toMany = false
        for key in keys {
            guard let relationship = current.relationship(named: key) else {
                if current.attribute(named: key) != nil {
                    throw MigrationError.mismatch(
                        "'\(key)' in key path '\(path)' is an attribute of '\(current.name)', not a relationship")
                }
                throw MigrationError.notFound(
                    "entity '\(current.name)' has no relationship '\(key)' (key path '\(path)')")
            }
            guard let destination = relationship.destinationEntity else {
                throw MigrationError.notFound("relationship '\(current.name).\(key)' has no destination entity")
            }
            if relationship.isToMany { toMany = true }
            current = destination
        }
        return (current, toMany)
    }

    /// The attribute a getter's key (name or key path) names, and its value.
    static func read(_ entry: ObjectEntry, key: String, _ accessor: Accessor) throws -> (AttributeDescription, Value) {
        let keys = key.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        let (entity, toMany) = try walk(entry.object.entity, Array(keys.dropLast()), path: key)
        let last = keys.last ?? key
        guard let attribute = entity.attribute(named: last) else {
            if entity.relationship(named: last) != nil {
                throw MigrationError.mismatch(
                    "'\(entity.name).\(last)' is a relationship: read it with cdm_object_get_object or cdm_object_get_objects"
                )
            }
            throw MigrationError.notFound("entity '\(entity.name)' has no attribute '\(last)'")
        }
        if toMany {
            throw MigrationError.mismatch(
                "key path '\(key)' goes through a to-many relationship and gives a collection: read it with cdm_object_get_value"
            )
        }
        try check(attribute, accessor, reading: true)
        if keys.count == 1 { return (attribute, try stored(entry.object, attribute, accessor)) }
        if accessor == .blob && attribute.attributeType == .transformable {
            guard case .object(let owner) = try entry.object.value(forKeyPath: keys.dropLast().joined(separator: ".")),
                let own = owner.entity.attributesByName[attribute.name]
            else {
                return (attribute, .null)
            }
            return (attribute, try owner.storedValue(for: own))
        }
        return (attribute, try entry.object.value(forKeyPath: key))
    }

    /// An attribute's value for a typed getter: the blob getter reads a transformable attribute's
    /// stored bytes (cdm_object_get_value gives the object they hold).
    static func stored(_ object: ManagedObject, _ attribute: AttributeDescription, _ accessor: Accessor) throws -> Value
    {
        accessor == .blob && attribute.attributeType == .transformable
            ? try object.storedValue(for: attribute) : try object.value(for: attribute)
    }

    static func check(_ attribute: AttributeDescription, _ accessor: Accessor, reading: Bool) throws {
        let ok = reading ? accessor.reads(attribute.attributeType) : accessor.writes(attribute.attributeType)
        guard ok else {
            let owner = attribute.entity?.name ?? "?"
            throw MigrationError.mismatch(
                "attribute '\(owner).\(attribute.name)' is of type \(attribute.attributeType.rawValue); cdm_object_\(reading ? "get" : "set")_\(accessor.rawValue) \(reading ? "reads" : "writes") \(accessor.readsWhat)"
            )
        }
    }

    /// The attribute a setter's key names.
    static func writable(_ entry: ObjectEntry, key: String, _ accessor: Accessor) throws -> AttributeDescription {
        guard let attribute = entry.object.entity.attribute(named: key) else {
            if entry.object.entity.relationship(named: key) != nil {
                throw MigrationError.mismatch(
                    "'\(entry.entityName).\(key)' is a relationship: set it with cdm_object_set_object or cdm_object_add_object"
                )
            }
            throw MigrationError.notFound("entity '\(entry.entityName)' has no attribute '\(key)'")
        }
        try check(attribute, accessor, reading: false)
        return attribute
    }

    static func relationship(_ entry: ObjectEntry, key: String) throws -> RelationshipDescription {
        guard let relationship = entry.object.entity.relationship(named: key) else {
            if entry.object.entity.attribute(named: key) != nil {
                throw MigrationError.mismatch("'\(entry.entityName).\(key)' is an attribute, not a relationship")
            }
            throw MigrationError.notFound("entity '\(entry.entityName)' has no relationship '\(key)'")
        }
        return relationship
    }
}

// MARK: Reading

/// Reads an attribute (by key or index) for a typed getter; `write` gets nil for null. Inlined in
/// each getter, so that `write` is no closure called through a context. For an attribute named
/// plainly or by index, `direct` may answer first (setting what `write` would, but for
/// `isNull`): true when it did, and gives whether the value is null.
@inline(__always)
private func get(
    _ handle: OpaquePointer?, key: UnsafePointer<CChar>?, index: Int32?, _ accessor: Accessor,
    _ isNull: UnsafeMutablePointer<Int32>?, _ hasOut: Bool,
    direct: (ObjectEntry, AttributeDescription) -> Bool? = { _, _ in nil },
    _ write: (ObjectEntry, Value?, _ index: Int, _ path: String?) throws -> Void
) -> Int32 {
    withEntry(handle, ObjectEntry.self, "object") { entry in
        guard hasOut else { throw MigrationError.misuse("the value pointer is NULL") }
        let attribute: AttributeDescription
        let value: Value
        var path: String? = nil
        if let index = index {
            attribute = try ObjectAccess.attribute(of: entry, index: index)
            try ObjectAccess.check(attribute, accessor, reading: true)
            if let null = direct(entry, attribute) {
                isNull?.pointee = null ? 1 : 0
                return
            }
            value = try ObjectAccess.stored(entry.object, attribute, accessor)
        } else if let key = key, let scope = entry.scope,
            let plain = try scope.attribute(of: entry.object.entity, key: key)
        {
            // A plain attribute name (no key path): no splitting, no walk.
            attribute = plain
            try ObjectAccess.check(attribute, accessor, reading: true)
            if let null = direct(entry, attribute) {
                isNull?.pointee = null ? 1 : 0
                return
            }
            value = try ObjectAccess.stored(entry.object, attribute, accessor)
        } else {
            let name = try CString.argument(key, "the key")
            (attribute, value) = try ObjectAccess.read(entry, key: name, accessor)
            if name.utf8.contains(0x2E) { path = name }
        }
        isNull?.pointee = value.isNull ? 1 : 0
        try write(entry, value.isNull ? nil : value, attribute.index, path)
    }
}

private func bytes(of value: Value) -> [UInt8]? {
    switch value {
    case .string(let s), .uri(let s), .decimal(let s): return Array(s.utf8)
    case .binary(let b), .uuid(let b): return b
    default: return nil
    }
}

private func getInt64(
    _ o: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ index: Int32?, _ out: UnsafeMutablePointer<Int64>?,
    _ isNull: UnsafeMutablePointer<Int32>?
) -> Int32 {
    get(o, key: key, index: index, .int64, isNull, out != nil) { _, value, _, _ in
        out?.pointee = value?.integerValue ?? 0
    }
}
private func getDouble(
    _ o: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ index: Int32?, _ out: UnsafeMutablePointer<Double>?,
    _ isNull: UnsafeMutablePointer<Int32>?, _ accessor: Accessor
) -> Int32 {
    get(o, key: key, index: index, accessor, isNull, out != nil) { _, value, _, _ in
        out?.pointee = value?.doubleValue ?? 0
    }
}
private func getBool(
    _ o: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ index: Int32?, _ out: UnsafeMutablePointer<Int32>?,
    _ isNull: UnsafeMutablePointer<Int32>?
) -> Int32 {
    get(o, key: key, index: index, .bool, isNull, out != nil) { _, value, _, _ in
        out?.pointee = (value?.boolValue ?? false) ? 1 : 0
    }
}
/// `out` is the host's `const char **` or `const void **`: the address of one pointer.
@inline(__always)
private func getBytes(
    _ o: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ index: Int32?, _ out: UnsafeMutableRawPointer?,
    _ length: UnsafeMutablePointer<Int>?, _ isNull: UnsafeMutablePointer<Int32>?, _ accessor: Accessor
) -> Int32 {
    // A string attribute of a source instance read from the live row: its bytes straight into
    // the handle's buffer, when they are the text `value(for:)` would give.
    let direct = { (entry: ObjectEntry, attribute: AttributeDescription) -> Bool? in
        guard accessor == .text else { return nil }
        var null = false
        let read = entry.object.withLiveRowText(for: attribute) { text in
            guard let text = text else {
                null = true
                out?.storeBytes(of: nil, as: UnsafeRawPointer?.self)
                length?.pointee = 0
                return
            }
            let copy = entry.buffer(text, index: attribute.index)
            out?.storeBytes(of: UnsafeRawPointer(copy), as: UnsafeRawPointer?.self)
            length?.pointee = copy == nil ? 0 : text.count
        }
        return read ? null : nil
    }
    return get(o, key: key, index: index, accessor, isNull, out != nil, direct: direct) { entry, value, index, path in
        switch value {
        case .string(let s)?, .uri(let s)?, .decimal(let s)?:
            // Text straight into the handle's buffer, without an intermediate array.
            let (copy, count) = entry.buffer(text: s, index: index, path: path)
            out?.storeBytes(of: UnsafeRawPointer(copy), as: UnsafeRawPointer?.self)
            length?.pointee = copy == nil ? 0 : count
            return
        default:
            break
        }
        guard let value = value, let data = bytes(of: value) else {
            out?.storeBytes(of: nil, as: UnsafeRawPointer?.self)
            length?.pointee = 0
            return
        }
        out?.storeBytes(of: UnsafeRawPointer(entry.buffer(data, index: index, path: path)), as: UnsafeRawPointer?.self)
        length?.pointee = data.count
    }
}
private func getUUID(
    _ o: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ index: Int32?, _ out: UnsafeMutablePointer<UInt8>?,
    _ isNull: UnsafeMutablePointer<Int32>?
) -> Int32 {
    get(o, key: key, index: index, .uuid, isNull, out != nil) { _, value, _, _ in
        guard let out = out else { return }
        let data = value.flatMap(bytes(of:)) ?? []
        for i in 0..<16 { out[i] = i < data.count ? data[i] : 0 }
    }
}

@_cdecl("cdm_object_get_int64")
public func cdm_object_get_int64(
    _ o: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<Int64>?,
    _ isNull: UnsafeMutablePointer<Int32>?
) -> Int32 { getInt64(o, key, nil, out, isNull) }
@_cdecl("cdm_object_get_double")
public func cdm_object_get_double(
    _ o: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<Double>?,
    _ isNull: UnsafeMutablePointer<Int32>?
) -> Int32 { getDouble(o, key, nil, out, isNull, .double) }
@_cdecl("cdm_object_get_bool")
public func cdm_object_get_bool(
    _ o: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<Int32>?,
    _ isNull: UnsafeMutablePointer<Int32>?
) -> Int32 { getBool(o, key, nil, out, isNull) }
@_cdecl("cdm_object_get_date")
public func cdm_object_get_date(
    _ o: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<Double>?,
    _ isNull: UnsafeMutablePointer<Int32>?
) -> Int32 { getDouble(o, key, nil, out, isNull, .date) }
@_cdecl("cdm_object_get_text")
public func cdm_object_get_text(
    _ o: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<UnsafePointer<CChar>?>?,
    _ length: UnsafeMutablePointer<Int>?, _ isNull: UnsafeMutablePointer<Int32>?
) -> Int32 { getBytes(o, key, nil, UnsafeMutableRawPointer(out), length, isNull, .text) }
@_cdecl("cdm_object_get_blob")
public func cdm_object_get_blob(
    _ o: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<UnsafeRawPointer?>?,
    _ length: UnsafeMutablePointer<Int>?, _ isNull: UnsafeMutablePointer<Int32>?
) -> Int32 { getBytes(o, key, nil, UnsafeMutableRawPointer(out), length, isNull, .blob) }
@_cdecl("cdm_object_get_uuid")
public func cdm_object_get_uuid(
    _ o: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<UInt8>?,
    _ isNull: UnsafeMutablePointer<Int32>?
) -> Int32 { getUUID(o, key, nil, out, isNull) }

@_cdecl("cdm_object_get_int64_at")
public func cdm_object_get_int64_at(
    _ o: OpaquePointer?, _ index: Int32, _ out: UnsafeMutablePointer<Int64>?, _ isNull: UnsafeMutablePointer<Int32>?
) -> Int32 { getInt64(o, nil, index, out, isNull) }
@_cdecl("cdm_object_get_double_at")
public func cdm_object_get_double_at(
    _ o: OpaquePointer?, _ index: Int32, _ out: UnsafeMutablePointer<Double>?, _ isNull: UnsafeMutablePointer<Int32>?
) -> Int32 { getDouble(o, nil, index, out, isNull, .double) }
@_cdecl("cdm_object_get_bool_at")
public func cdm_object_get_bool_at(
    _ o: OpaquePointer?, _ index: Int32, _ out: UnsafeMutablePointer<Int32>?, _ isNull: UnsafeMutablePointer<Int32>?
) -> Int32 { getBool(o, nil, index, out, isNull) }
@_cdecl("cdm_object_get_date_at")
public func cdm_object_get_date_at(
    _ o: OpaquePointer?, _ index: Int32, _ out: UnsafeMutablePointer<Double>?, _ isNull: UnsafeMutablePointer<Int32>?
) -> Int32 { getDouble(o, nil, index, out, isNull, .date) }
@_cdecl("cdm_object_get_text_at")
public func cdm_object_get_text_at(
    _ o: OpaquePointer?, _ index: Int32, _ out: UnsafeMutablePointer<UnsafePointer<CChar>?>?,
    _ length: UnsafeMutablePointer<Int>?, _ isNull: UnsafeMutablePointer<Int32>?
) -> Int32 { getBytes(o, nil, index, UnsafeMutableRawPointer(out), length, isNull, .text) }
@_cdecl("cdm_object_get_blob_at")
public func cdm_object_get_blob_at(
    _ o: OpaquePointer?, _ index: Int32, _ out: UnsafeMutablePointer<UnsafeRawPointer?>?,
    _ length: UnsafeMutablePointer<Int>?, _ isNull: UnsafeMutablePointer<Int32>?
) -> Int32 { getBytes(o, nil, index, UnsafeMutableRawPointer(out), length, isNull, .blob) }
@_cdecl("cdm_object_get_uuid_at")
public func cdm_object_get_uuid_at(
    _ o: OpaquePointer?, _ index: Int32, _ out: UnsafeMutablePointer<UInt8>?, _ isNull: UnsafeMutablePointer<Int32>?
) -> Int32 { getUUID(o, nil, index, out, isNull) }

// MARK: Introspection and traversal

@_cdecl("cdm_object_entity_name")
public func cdm_object_entity_name(_ o: OpaquePointer?, _ name: UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> Int32 {
    withEntry(o, ObjectEntry.self, "object") { entry in
        guard let name = name else { throw MigrationError.misuse("the name pointer is NULL") }
        name.pointee = entry.scope?.string(entry.entityName)
    }
}

/// Writes what `fact` gives of the attribute `key` names in the instance's entity.
private func attributeFact(
    _ o: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<Int32>?, _ what: String,
    _ fact: (AttributeDescription) -> Int32
) -> Int32 {
    withEntry(o, ObjectEntry.self, "object") { entry in
        let out = try required(out, what)
        let name = try CString.argument(key, "the attribute name")
        guard let attribute = entry.object.entity.attribute(named: name) else {
            throw MigrationError.notFound("entity '\(entry.entityName)' has no attribute '\(name)'")
        }
        out.pointee = fact(attribute)
    }
}

@_cdecl("cdm_object_attribute_index")
public func cdm_object_attribute_index(
    _ o: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ index: UnsafeMutablePointer<Int32>?
) -> Int32 {
    attributeFact(o, key, index, "index") { Int32($0.index) }
}

@_cdecl("cdm_object_attribute_type")
public func cdm_object_attribute_type(
    _ o: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ type: UnsafeMutablePointer<Int32>?
) -> Int32 {
    attributeFact(o, key, type, "type") { Int32($0.attributeType.coreDataCode) }
}

@_cdecl("cdm_object_uri")
public func cdm_object_uri(_ o: OpaquePointer?, _ uri: UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> Int32 {
    withEntry(o, ObjectEntry.self, "object") { entry in
        guard let uri = uri else { throw MigrationError.misuse("the uri pointer is NULL") }
        uri.pointee = entry.scope?.string(entry.object.objectID.uriRepresentation)
    }
}

@_cdecl("cdm_object_get_value")
public func cdm_object_get_value(
    _ o: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<OpaquePointer?>?
) -> Int32 {
    withEntry(o, ObjectEntry.self, "object") { entry in
        guard let out = out, let scope = entry.scope else { throw MigrationError.misuse("the value pointer is NULL") }
        let name = try CString.argument(key, "the key")
        let keys = name.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        let (entity, _) = try ObjectAccess.walk(entry.object.entity, Array(keys.dropLast()), path: name)
        let last = keys.last ?? name
        guard entity.property(named: last) != nil else {
            throw MigrationError.notFound("entity '\(entity.name)' has no property '\(last)'")
        }
        out.pointee = scope.handle(ValueEntry(try entry.object.value(forKeyPath: name), writable: false))
    }
}

/// The relationship a traversal key path ends in (checked statically).
private func traverse(_ entry: ObjectEntry, _ name: String, toOne: Bool) throws -> Value {
    let keys = name.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    let (entity, toMany) = try ObjectAccess.walk(entry.object.entity, Array(keys.dropLast()), path: name)
    let last = keys.last ?? name
    guard let relationship = entity.relationship(named: last) else {
        if entity.attribute(named: last) != nil {
            throw MigrationError.mismatch("'\(entity.name).\(last)' is an attribute: read it with a typed getter")
        }
        throw MigrationError.notFound("entity '\(entity.name)' has no relationship '\(last)'")
    }
    if toOne && (toMany || relationship.isToMany) {
        throw MigrationError.mismatch(
            "'\(name)' of '\(entry.entityName)' is to-many: read it with cdm_object_get_objects")
    }
    return try entry.object.value(forKeyPath: name)
}

@_cdecl("cdm_object_get_object")
public func cdm_object_get_object(
    _ o: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<OpaquePointer?>?
) -> Int32 {
    withEntry(o, ObjectEntry.self, "object") { entry in
        guard let out = out, let scope = entry.scope else { throw MigrationError.misuse("the target pointer is NULL") }
        let value = try traverse(entry, try CString.argument(key, "the key"), toOne: true)
        out.pointee = value.object.map { scope.handle(for: $0) }
    }
}

@_cdecl("cdm_object_get_objects")
public func cdm_object_get_objects(
    _ o: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<UnsafePointer<OpaquePointer?>?>?,
    _ count: UnsafeMutablePointer<Int>?
) -> Int32 {
    withEntry(o, ObjectEntry.self, "object") { entry in
        guard let out = out, let scope = entry.scope else { throw MigrationError.misuse("the targets pointer is NULL") }
        let count = try required(count, "count")
        let value = try traverse(entry, try CString.argument(key, "the key"), toOne: false)
        let objects = value.elements.compactMap { $0.object }
        out.pointee = UnsafePointer(scope.handleArray(objects))
        count.pointee = objects.count
    }
}

// MARK: Writing

private func set(
    _ handle: OpaquePointer?, key: UnsafePointer<CChar>?, index: Int32?, _ accessor: Accessor,
    _ makeValue: (AttributeDescription) throws -> Value
) -> Int32 {
    withEntry(handle, ObjectEntry.self, "object") { entry in
        let attribute: AttributeDescription
        if let index = index {
            attribute = try ObjectAccess.attribute(of: entry, index: index)
            try ObjectAccess.check(attribute, accessor, reading: false)
        } else {
            attribute = try ObjectAccess.writable(entry, key: try CString.argument(key, "the key"), accessor)
        }
        let value = try makeValue(attribute)
        try entry.object.setValue(value, for: attribute)
        entry.forgetBuffer(index: attribute.index)
    }
}

/// Text for an attribute: decimals must be numbers; UUIDs and URIs are converted by the engine.
private func textValue(_ text: UnsafePointer<CChar>?, _ length: Int, _ attribute: AttributeDescription) throws -> Value
{
    let string = try CString.argument(text, length: length, "the text")
    if attribute.attributeType == .decimal {
        guard Double(string) != nil else {
            throw MigrationError.mismatch(
                "decimal attribute '\(attribute.entity?.name ?? "?").\(attribute.name)' cannot take the text '\(string)', which is not a number"
            )
        }
        return .decimal(string)
    }
    return .string(string)
}

private func blobValue(_ bytes: UnsafeRawPointer?, _ length: Int) throws -> [UInt8] {
    try HostBytes.copy(bytes, length: length, "the bytes pointer")
}

private func uuidValue(_ bytes: UnsafePointer<UInt8>?) throws -> Value {
    guard let bytes = bytes else { throw MigrationError.misuse("the UUID pointer is NULL") }
    return .uuid(Array(UnsafeBufferPointer(start: bytes, count: 16)))
}

@_cdecl("cdm_object_set_null")
public func cdm_object_set_null(_ o: OpaquePointer?, _ key: UnsafePointer<CChar>?) -> Int32 {
    // A to-one relationship can be emptied the same way.
    if let entry = try? ThreadState.current.entry(o, as: ObjectEntry.self, "object"),
        let key = key, let name = try? CString.argument(key, "the key"),
        let relationship = entry.object.entity.relationship(named: name)
    {
        return guarded(entry.sink) { try entry.object.setValue(.null, for: relationship) }
    }
    return set(o, key: key, index: nil, .null) { _ in .null }
}
@_cdecl("cdm_object_set_int64")
public func cdm_object_set_int64(_ o: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ v: Int64) -> Int32 {
    set(o, key: key, index: nil, .int64) { _ in .integer(v) }
}
@_cdecl("cdm_object_set_double")
public func cdm_object_set_double(_ o: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ v: Double) -> Int32 {
    set(o, key: key, index: nil, .double) { _ in .double(v) }
}
@_cdecl("cdm_object_set_bool")
public func cdm_object_set_bool(_ o: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ v: Int32) -> Int32 {
    set(o, key: key, index: nil, .bool) { _ in .bool(v != 0) }
}
@_cdecl("cdm_object_set_date")
public func cdm_object_set_date(_ o: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ v: Double) -> Int32 {
    set(o, key: key, index: nil, .date) { _ in .date(v) }
}
@_cdecl("cdm_object_set_text")
public func cdm_object_set_text(
    _ o: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ text: UnsafePointer<CChar>?, _ length: Int
) -> Int32 { set(o, key: key, index: nil, .text) { try textValue(text, length, $0) } }
@_cdecl("cdm_object_set_blob")
public func cdm_object_set_blob(
    _ o: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ bytes: UnsafeRawPointer?, _ length: Int
) -> Int32 { set(o, key: key, index: nil, .blob) { _ in .binary(try blobValue(bytes, length)) } }
@_cdecl("cdm_object_set_uuid")
public func cdm_object_set_uuid(_ o: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ bytes: UnsafePointer<UInt8>?)
    -> Int32
{ set(o, key: key, index: nil, .uuid) { _ in try uuidValue(bytes) } }

@_cdecl("cdm_object_set_null_at")
public func cdm_object_set_null_at(_ o: OpaquePointer?, _ index: Int32) -> Int32 {
    set(o, key: nil, index: index, .null) { _ in .null }
}
@_cdecl("cdm_object_set_int64_at")
public func cdm_object_set_int64_at(_ o: OpaquePointer?, _ index: Int32, _ v: Int64) -> Int32 {
    set(o, key: nil, index: index, .int64) { _ in .integer(v) }
}
@_cdecl("cdm_object_set_double_at")
public func cdm_object_set_double_at(_ o: OpaquePointer?, _ index: Int32, _ v: Double) -> Int32 {
    set(o, key: nil, index: index, .double) { _ in .double(v) }
}
@_cdecl("cdm_object_set_bool_at")
public func cdm_object_set_bool_at(_ o: OpaquePointer?, _ index: Int32, _ v: Int32) -> Int32 {
    set(o, key: nil, index: index, .bool) { _ in .bool(v != 0) }
}
@_cdecl("cdm_object_set_date_at")
public func cdm_object_set_date_at(_ o: OpaquePointer?, _ index: Int32, _ v: Double) -> Int32 {
    set(o, key: nil, index: index, .date) { _ in .date(v) }
}
@_cdecl("cdm_object_set_text_at")
public func cdm_object_set_text_at(_ o: OpaquePointer?, _ index: Int32, _ text: UnsafePointer<CChar>?, _ length: Int)
    -> Int32
{ set(o, key: nil, index: index, .text) { try textValue(text, length, $0) } }
@_cdecl("cdm_object_set_blob_at")
public func cdm_object_set_blob_at(_ o: OpaquePointer?, _ index: Int32, _ bytes: UnsafeRawPointer?, _ length: Int)
    -> Int32
{ set(o, key: nil, index: index, .blob) { _ in .binary(try blobValue(bytes, length)) } }
@_cdecl("cdm_object_set_uuid_at")
public func cdm_object_set_uuid_at(_ o: OpaquePointer?, _ index: Int32, _ bytes: UnsafePointer<UInt8>?) -> Int32 {
    set(o, key: nil, index: index, .uuid) { _ in try uuidValue(bytes) }
}

// MARK: JSON view and release

@_cdecl("cdm_object_to_json")
public func cdm_object_to_json(_ o: OpaquePointer?, _ out: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32
{
    withEntry(o, ObjectEntry.self, "object") { entry in
        guard let out = out else { throw MigrationError.misuse("the json pointer is NULL") }
        out.pointee = CString.copy(try ValueJSON.json(of: entry.object).serialized())
    }
}
