import CDMigrate

/// The JSON view of values and instances for hosts that prefer JSON to typed getters: values
/// JSON has no type for become text in their usual notation.
enum ValueJSON {
    static func json(_ value: Value) -> JSON {
        switch value {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .integer(let i): return .integer(i)
        case .double(let d): return d.isFinite ? .double(d) : .null
        case .decimal(let s), .string(let s), .uri(let s): return .string(s)
        case .date(let d): return .string(DateConversion.formatISO8601(d))
        case .binary(let bytes): return .string(Base64.encode(bytes))
        case .uuid(let bytes): return .string(Value.uuidString(bytes))
        case .object(let object): return .string(object.objectID.uriRepresentation)
        case .collection(let values): return .array(values.map(json))
        // JSON objects key by text only: a dictionary's entries as [key, value] pairs keep numeric keys.
        case .dictionary(let entries): return .array(entries.map { .array([json($0.key), json($0.value)]) })
        case .migrationManager: return .string("$manager")
        }
    }

    static func json(of object: ManagedObject) throws -> JSON {
        let attributes = try object.attributeDictionary().map { (key: $0.key, value: json($0.value)) }
        return .object([
            ("entity", .string(object.entity.name)),
            ("uri", .string(object.objectID.uriRepresentation)),
            ("attributes", .object(attributes)),
        ])
    }
}
