/// A property list value (what Core Data keeps in `Z_METADATA.Z_PLIST`).
public enum PropertyListValue: Equatable {
    case string(String)
    case integer(Int64)
    case real(Double)
    case bool(Bool)
    /// Seconds since 2001-01-01 UTC.
    case date(Double)
    case data([UInt8])
    case array([PropertyListValue])
    /// Keys in document order.
    case dictionary([(key: String, value: PropertyListValue)])
    /// NSKeyedArchiver's object references (CF$UID).
    case uid(UInt64)

    public static func == (lhs: PropertyListValue, rhs: PropertyListValue) -> Bool {
        switch (lhs, rhs) {
        case (.string(let a), .string(let b)): return a == b
        case (.integer(let a), .integer(let b)): return a == b
        case (.real(let a), .real(let b)): return a == b
        case (.bool(let a), .bool(let b)): return a == b
        case (.date(let a), .date(let b)): return a == b
        case (.data(let a), .data(let b)): return a == b
        case (.array(let a), .array(let b)): return a == b
        case (.uid(let a), .uid(let b)): return a == b
        case (.dictionary(let a), .dictionary(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        default: return false
        }
    }

    public subscript(key: String) -> PropertyListValue? {
        if case .dictionary(let members) = self { return members.first(where: { $0.key == key })?.value }
        return nil
    }
}

/// Apple's binary property list format (`bplist00`), read and written without Foundation.
public enum BinaryPropertyList {
    /// Decodes a `bplist00` document; malformed input is an error, never a crash.
    public static func decode(_ bytes: [UInt8]) throws -> PropertyListValue {
        throw MigrationError(.io, "binary property lists are not readable yet")
    }

    /// Encodes a value as a `bplist00` document.
    public static func encode(_ value: PropertyListValue) -> [UInt8] {
        return []
    }
}
