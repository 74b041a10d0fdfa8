import CDMigrate

/// The commands build their `--json` documents as dictionaries (`[String: Any]`) and print them
/// with the engine's JSON writer; a migration's report inside them is the engine's own encoding
/// (MigrationReport.json), key for key.
extension JSON {
    /// The value as dictionaries, arrays, strings, numbers and booleans (`JSON.null` for null).
    var anyValue: Any {
        switch self {
        case .null: return JSON.null
        case .bool(let value): return value
        case .integer(let value): return Int(truncatingIfNeeded: value)
        case .double(let value): return value
        case .string(let value): return value
        case .array(let values): return values.map(\.anyValue)
        case .object(let members):
            var object: [String: Any] = [:]
            for (key, value) in members { object[key] = value.anyValue }
            return object
        }
    }

    /// The members of an object as a dictionary ([:] for any other value).
    var dictionaryValue: [String: Any] { anyValue as? [String: Any] ?? [:] }

    /// A document built of dictionaries (keys sorted, so output is stable), arrays, strings,
    /// numbers, booleans and JSON values; anything else is written as its description.
    init(document value: Any) {
        switch value {
        case let json as JSON: self = json
        case let text as String: self = .string(text)
        case let flag as Bool: self = .bool(flag)
        case let number as Int: self = .integer(Int64(number))
        case let number as Int64: self = .integer(number)
        case let number as Int32: self = .integer(Int64(number))
        case let number as Double: self = .double(number)
        case let object as [String: Any]:
            self = .object(object.keys.sorted().map { (key: $0, value: JSON(document: object[$0] ?? JSON.null)) })
        case let values as [Any]: self = .array(values.map { JSON(document: $0) })
        default: self = .string("\(value)")
        }
    }
}
