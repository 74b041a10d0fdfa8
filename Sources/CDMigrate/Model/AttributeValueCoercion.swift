/// Converts a value to an attribute's type when setting it, where the conversion loses nothing
/// a Core Data user would care about (numbers between numeric types, text into a URI or UUID);
/// anything else is an error naming the attribute.
///
/// Integers are not clipped to their type's size here: validation reports a value out of range
/// (1610/1620) with the others, as Core Data does.
enum AttributeValueCoercion {
    static func coerce(_ value: Value, to attribute: AttributeDescription) throws -> Value {
        if value.isNull { return .null }
        let type = attribute.attributeType
        func fail() -> MigrationError {
            let owner = attribute.entity?.name ?? "?"
            return MigrationError(
                .invalidArgument,
                "attribute '\(owner).\(attribute.name)' of type \(type.rawValue) cannot take the \(value.typeName) value '\(value)'"
            )
        }
        switch type {
        case .integer16, .integer32, .integer64:
            switch value {
            case .integer: return value
            case .bool, .double, .decimal:
                guard let i = value.integerValue else { throw fail() }
                return .integer(i)
            default: throw fail()
            }
        case .double, .float:
            switch value {
            case .double: return value
            case .integer, .bool, .decimal:
                guard let d = value.doubleValue else { throw fail() }
                return .double(d)
            default: throw fail()
            }
        case .decimal:
            switch value {
            case .decimal: return value
            case .integer(let i): return .decimal(String(i))
            case .double(let d): return .decimal(Value.format(d))
            case .bool(let b): return .decimal(b ? "1" : "0")
            default: throw fail()
            }
        case .boolean:
            switch value {
            case .bool: return value
            case .integer, .double, .decimal: return .bool(value.boolValue)
            default: throw fail()
            }
        case .string:
            guard case .string = value else { throw fail() }
            return value
        case .date:
            switch value {
            case .date: return value
            case .double(let d): return .date(d)
            case .integer(let i): return .date(Double(i))
            default: throw fail()
            }
        case .binary, .transformable:
            switch value {
            case .binary: return value
            case .uuid(let bytes): return .binary(bytes)
            default: throw fail()
            }
        case .uuid:
            switch value {
            case .uuid: return value
            case .binary(let bytes) where bytes.count == 16: return .uuid(bytes)
            case .string(let s):
                guard let bytes = Value.uuidBytes(s) else { throw fail() }
                return .uuid(bytes)
            default: throw fail()
            }
        case .uri:
            switch value {
            case .uri: return value
            case .string(let s): return .uri(s)
            default: throw fail()
            }
        case .undefined, .objectID, .composite:
            return value  // transient attributes of these types hold whatever the code puts there
        }
    }
}
