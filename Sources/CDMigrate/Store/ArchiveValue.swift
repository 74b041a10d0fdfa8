/// A value decoded from an NSKeyedArchiver archive: Foundation's plain types as values, and
/// any other class (an NSEntityDescription, an NSEntityMapping, …) as a reference to its
/// archived object, to be read field by field through `KeyedArchive.object(_:)`.
///
/// Instances of other classes stay references, so a graph with cycles (an entity pointing at
/// its model, which lists the entity) decodes without ever recursing through them.
package indirect enum ArchiveValue: Equatable, CustomStringConvertible {
    /// `$null`, or an absent key.
    case null
    case string(String)
    case integer(Int64)
    case real(Double)
    /// NSDecimalNumber, in plain decimal notation (`-12.5`).
    case decimal(String)
    case bool(Bool)
    case data([UInt8])
    /// NSDate: seconds since 2001-01-01 UTC.
    case date(Double)
    /// NSUUID's 16 bytes.
    case uuid([UInt8])
    /// NSURL, made absolute where it has a base.
    case url(String)
    /// NSArray, NSSet and NSOrderedSet (sets in archive order).
    case array([ArchiveValue])
    /// NSDictionary, in archive order.
    case dictionary([(key: ArchiveValue, value: ArchiveValue)])
    /// An instance of a class the reader does not turn into a value.
    case object(KeyedArchive.Reference, className: String)

    package static func == (lhs: ArchiveValue, rhs: ArchiveValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case (.string(let a), .string(let b)): return a == b
        case (.integer(let a), .integer(let b)): return a == b
        case (.real(let a), .real(let b)): return a == b
        case (.decimal(let a), .decimal(let b)): return a == b
        case (.bool(let a), .bool(let b)): return a == b
        case (.data(let a), .data(let b)): return a == b
        case (.date(let a), .date(let b)): return a == b
        case (.uuid(let a), .uuid(let b)): return a == b
        case (.url(let a), .url(let b)): return a == b
        case (.array(let a), .array(let b)): return a == b
        case (.dictionary(let a), .dictionary(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        case (.object(let a, let ca), .object(let b, let cb)): return a == b && ca == cb
        default: return false
        }
    }

    /// A property list's plain value (string, number, boolean, data, date) as an archive value;
    /// nil for arrays, dictionaries and object references, which the archive reads on its own.
    package init?(plain value: PropertyListValue) {
        switch value {
        case .string(let s): self = .string(s)
        case .integer(let i): self = .integer(i)
        case .real(let d): self = .real(d)
        case .bool(let b): self = .bool(b)
        case .data(let d): self = .data(d)
        case .date(let d): self = .date(d)
        case .array, .dictionary, .uid: return nil
        }
    }

    /// A value that is not a container (everything but arrays, dictionaries and object
    /// references) as cdmigrate's `Value`; nil for containers, which each reader treats its own way.
    package var plainValue: Value? {
        switch self {
        case .null: return .null
        case .string(let s): return .string(s)
        case .integer(let i): return .integer(i)
        case .real(let d): return .double(d)
        case .decimal(let s): return .decimal(s)
        case .bool(let b): return .bool(b)
        case .data(let bytes): return .binary(bytes)
        case .date(let d): return .date(d)
        case .uuid(let bytes): return .uuid(bytes)
        case .url(let s): return .uri(s)
        case .array, .dictionary, .object: return nil
        }
    }

    package var isNull: Bool { if case .null = self { return true } else { return false } }

    package var stringValue: String? { if case .string(let s) = self { return s } else { return nil } }

    /// Integers and booleans (NSNumber keeps both as numbers); reals only when whole.
    package var integerValue: Int64? {
        switch self {
        case .integer(let i): return i
        case .bool(let b): return b ? 1 : 0
        case .real(let d) where d.rounded() == d && abs(d) < 9.2e18: return Int64(d)
        default: return nil
        }
    }

    package var boolValue: Bool? {
        switch self {
        case .bool(let b): return b
        case .integer(let i): return i != 0
        case .real(let d): return d != 0
        default: return nil
        }
    }

    package var arrayValue: [ArchiveValue]? { if case .array(let a) = self { return a } else { return nil } }

    package var dictionaryValue: [(key: ArchiveValue, value: ArchiveValue)]? {
        if case .dictionary(let d) = self { return d } else { return nil }
    }

    /// The entry of a dictionary under a string key.
    package subscript(key: String) -> ArchiveValue? {
        guard case .dictionary(let members) = self else { return nil }
        return members.first(where: { $0.key == .string(key) })?.value
    }

    /// The referenced object of a non-Foundation class.
    package var reference: KeyedArchive.Reference? {
        if case .object(let r, _) = self { return r } else { return nil }
    }

    /// A short type name for messages.
    package var typeName: String {
        switch self {
        case .null: return "null"
        case .string: return "string"
        case .integer: return "integer"
        case .real: return "real"
        case .decimal: return "decimal"
        case .bool: return "boolean"
        case .data: return "data"
        case .date: return "date"
        case .uuid: return "UUID"
        case .url: return "URL"
        case .array: return "array"
        case .dictionary: return "dictionary"
        case .object(_, let className): return className
        }
    }

    package var description: String {
        switch self {
        case .null: return "$null"
        case .string(let s): return "\"\(s)\""
        case .integer(let i): return String(i)
        case .real(let d): return String(d)
        case .decimal(let s): return s
        case .bool(let b): return b ? "true" : "false"
        case .data(let bytes): return "<\(bytes.count) bytes>"
        case .date(let d): return "date(\(d))"
        case .uuid(let bytes): return "uuid(\(bytes.count) bytes)"
        case .url(let s): return "url(\(s))"
        case .array(let a): return "[" + a.map { $0.description }.joined(separator: ", ") + "]"
        case .dictionary(let d): return "{" + d.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + "}"
        case .object(let r, let className): return "<\(className) @\(r.index)>"
        }
    }
}
