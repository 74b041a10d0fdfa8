import CDMigrate

/// The JSON view of values and instances for hosts that prefer JSON to typed getters: values
/// JSON has no type for become text in their usual notation.
enum ValueJSON {
    /// How a date is written: ISO 8601 text (the default), or seconds since 2001-01-01 as a
    /// number (a batch's columns, which hosts turn into their own date type in one pass).
    enum DateNotation {
        case iso8601
        case referenceSeconds
    }

    static func json(_ value: Value, dates: DateNotation = .iso8601) -> JSON {
        switch value {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .integer(let i): return .integer(i)
        case .double(let d): return d.isFinite ? .double(d) : .null
        case .decimal(let s), .string(let s), .uri(let s): return .string(s)
        case .date(let d):
            switch dates {
            case .iso8601: return .string(DateConversion.formatISO8601(d))
            case .referenceSeconds: return d.isFinite ? .double(d) : .null
            }
        case .binary(let bytes): return .string(Base64.encode(bytes))
        case .uuid(let bytes): return .string(Value.uuidString(bytes))
        case .object(let object): return .string(object.objectID.uriRepresentation)
        case .collection(let values): return .array(values.map { json($0, dates: dates) })
        // JSON objects key by text only: a dictionary's entries as [key, value] pairs keep numeric keys.
        case .dictionary(let entries):
            return .array(entries.map { .array([json($0.key, dates: dates), json($0.value, dates: dates)]) })
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
