/// Core Data's attribute types (NSAttributeType), with the names the model JSON uses.
///
/// `undefined` and `objectID` are only for transient attributes (as in Core Data); `composite`
/// (iOS 17's NSCompositeAttributeDescription) is read so that a model naming it loads, but only a
/// transient one is accepted: cdmigrate does not store composite attributes.
public enum AttributeType: String, CaseIterable {
    case integer16, integer32, integer64, decimal, double, float, string, boolean, date, binary, uuid, uri,
        transformable
    case undefined, objectID, composite

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
        case .undefined: return 0
        case .objectID: return 2000
        case .composite: return 2100
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
        case .undefined, .objectID, .composite: return "BLOB"  // transient only: never a column
        }
    }

    /// Whether the type is `integer16`, `integer32` or `integer64`.
    public var isInteger: Bool { self == .integer16 || self == .integer32 || self == .integer64 }
    /// Whether the type holds a number (the integers, decimal, double, float, boolean).
    public var isNumeric: Bool {
        isInteger || self == .decimal || self == .double || self == .float || self == .boolean
    }

    /// The range an integer type can hold.
    public var integerRange: ClosedRange<Int64>? {
        switch self {
        case .integer16: return Int64(Int16.min)...Int64(Int16.max)
        case .integer32: return Int64(Int32.min)...Int64(Int32.max)
        case .integer64: return Int64.min...Int64.max
        default: return nil
        }
    }

    /// Whether a stored (non-transient) attribute may have this type.
    public var isStorable: Bool { self != .undefined && self != .objectID && self != .composite }

    /// Accepts the JSON names and Core Data's own spellings ("Integer 16", "String", "Binary Data", "UUID",
    /// and every `attributeType` Xcode writes: "Undefined", "ObjectID", "Composite", …).
    public init?(name: String) {
        if let t = AttributeType(rawValue: name) {
            self = t
            return
        }
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
        case "undefined": self = .undefined
        case "objectid": self = .objectID
        case "composite": self = .composite
        default: return nil
        }
    }
}
