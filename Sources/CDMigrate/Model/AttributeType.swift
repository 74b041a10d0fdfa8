/// Core Data's attribute types (NSAttributeType), with the names the model JSON uses.
public enum AttributeType: String, CaseIterable {
    case integer16, integer32, integer64, decimal, double, float, string, boolean, date, binary, uuid, uri, transformable

    /// Core Data's NSAttributeType raw value, which goes into version hashes.
    public var coreDataCode: Int {
        switch self {
        case .integer16: return 100
        case .integer32: return 200
        case .integer64: return 300
        case .decimal: return 400
        case .double: return 500
        case .float: return 600
        case .string: return 700
        case .boolean: return 800
        case .date: return 900
        case .binary: return 1000
        case .uuid: return 1100
        case .uri: return 1200
        case .transformable: return 1800
        }
    }

    /// The declared column type Core Data writes for this attribute type.
    public var sqlColumnType: String {
        switch self {
        case .integer16, .integer32, .integer64, .boolean: return "INTEGER"
        case .decimal: return "DECIMAL"
        case .double, .float: return "FLOAT"
        case .string, .uri: return "VARCHAR"
        case .date: return "TIMESTAMP"
        case .binary, .transformable, .uuid: return "BLOB"
        }
    }

    public var isInteger: Bool { self == .integer16 || self == .integer32 || self == .integer64 }
    public var isNumeric: Bool { isInteger || self == .decimal || self == .double || self == .float || self == .boolean }

    /// The range an integer type can hold.
    public var integerRange: ClosedRange<Int64>? {
        switch self {
        case .integer16: return Int64(Int16.min)...Int64(Int16.max)
        case .integer32: return Int64(Int32.min)...Int64(Int32.max)
        case .integer64: return Int64.min...Int64.max
        default: return nil
        }
    }

    /// Accepts the JSON names and Core Data's own spellings ("Integer 16", "String", "Binary Data", "UUID", …).
    public init?(name: String) {
        if let t = AttributeType(rawValue: name) { self = t; return }
        let folded = String(name.lowercased().filter { $0 != " " && $0 != "_" })
        switch folded {
        case "integer16", "int16": self = .integer16
        case "integer32", "int32": self = .integer32
        case "integer64", "int64": self = .integer64
        case "decimal": self = .decimal
        case "double": self = .double
        case "float": self = .float
        case "string": self = .string
        case "boolean", "bool": self = .boolean
        case "date": self = .date
        case "binary", "binarydata", "data": self = .binary
        case "uuid": self = .uuid
        case "uri": self = .uri
        case "transformable": self = .transformable
        default: return nil
        }
    }
}
