/// A value as cdmigrate handles it: an attribute value, an instance, or a collection.
///
/// Dates are seconds since 2001-01-01 00:00:00 UTC (Core Data's reference date), as stored.
public enum Value: CustomStringConvertible {
    case null
    case bool(Bool)
    case integer(Int64)
    case double(Double)
    /// A decimal number, kept as its canonical text so no precision is lost on the way.
    case decimal(String)
    case string(String)
    case date(Double)
    case binary([UInt8])
    /// 16 bytes.
    case uuid([UInt8])
    case uri(String)
    /// An instance: a relationship's value, or `SELF` in an expression.
    ///
    /// The one place where Core depends on another folder (`Store/ManagedObject.swift`): values
    /// hold instances the way Core Data's `id` values do, so that expressions, policies and
    /// relationship values pass them like any other value (docs/architecture.md).
    case object(ManagedObject)
    /// A to-many relationship's value or any other collection (ordered when it came from one).
    case collection([Value])
    /// An NSDictionary a transformable attribute's archive holds, its entries in archive order
    /// (keys are strings or numbers, as Core Data's archives of `[Int: String]`/`[String: …]` hold).
    case dictionary([(key: Value, value: Value)])
    /// The running migration: `$manager` passed as an argument (`FUNCTION($entityPolicy,
    /// "childrenFor:manager:", $source.children, $manager)`), where Core Data passes the
    /// `NSMigrationManager`. A policy method receives the manager itself as its `manager`
    /// parameter; no attribute or relationship takes this value.
    case migrationManager

    /// Seconds between 1970-01-01 and 2001-01-01.
    public static let referenceDateOffset: Double = 978_307_200

    /// Whether the value is `.null` (Core Data: nil or `NSNull`).
    public var isNull: Bool { if case .null = self { return true } else { return false } }

    /// The instance, when the value is one.
    public var object: ManagedObject? { if case .object(let object) = self { return object } else { return nil } }

    /// The elements of a collection, the value itself for a single value, none for null.
    public var elements: [Value] {
        switch self {
        case .null: return []
        case .collection(let values): return values
        default: return [self]
        }
    }

    /// The numeric value of integers, doubles, decimals, booleans and dates.
    public var doubleValue: Double? {
        switch self {
        case .bool(let b): return b ? 1 : 0
        case .integer(let i): return Double(i)
        case .double(let d), .date(let d): return d
        case .decimal(let s): return Double(s)
        default: return nil
        }
    }

    /// The integer value of numbers (doubles truncated toward zero, as `intValue` does).
    public var integerValue: Int64? {
        switch self {
        case .bool(let b): return b ? 1 : 0
        case .integer(let i): return i
        case .double(let d), .date(let d):
            guard d.isFinite, d >= -9.2e18, d <= 9.2e18 else { return nil }
            return Int64(d)
        case .decimal(let s):
            if let i = Int64(s) { return i }
            guard let d = Double(s), d.isFinite, d >= -9.2e18, d <= 9.2e18 else { return nil }
            return Int64(d)
        default: return nil
        }
    }

    /// The string, when the value is one.
    public var stringValue: String? { if case .string(let s) = self { return s } else { return nil } }

    /// Objective-C truthiness: nil, NO and zero are false.
    public var boolValue: Bool {
        switch self {
        case .null: return false
        case .bool(let b): return b
        case .integer(let i): return i != 0
        case .double(let d): return d != 0
        case .decimal(let s): return (Double(s) ?? 0) != 0
        case .string(let s):
            return ["y", "Y", "t", "T", "1", "2", "3", "4", "5", "6", "7", "8", "9"].contains(
                s.first.map(String.init) ?? "")
        default: return true
        }
    }

    /// The kind's name for messages: "string", "integer", "object", ….
    public var typeName: String {
        switch self {
        case .null: return "nil"
        case .bool: return "boolean"
        case .integer: return "integer"
        case .double: return "double"
        case .decimal: return "decimal"
        case .string: return "string"
        case .date: return "date"
        case .binary: return "binary"
        case .uuid: return "UUID"
        case .uri: return "URI"
        case .object: return "instance"
        case .collection: return "collection"
        case .dictionary: return "dictionary"
        case .migrationManager: return "migration manager"
        }
    }

    /// The value as text, for messages.
    public var description: String {
        switch self {
        case .null: return "nil"
        case .bool(let b): return b ? "YES" : "NO"
        case .integer(let i): return String(i)
        case .double(let d): return Value.format(d)
        case .decimal(let s): return s
        case .string(let s): return s
        case .date(let d): return Value.format(d) + " (seconds since 2001)"
        case .binary(let bytes): return "<\(bytes.count) bytes>"
        case .uuid(let bytes): return Value.uuidString(bytes)
        case .uri(let s): return s
        case .object(let object): return object.objectID.uriRepresentation
        case .collection(let values): return "(" + values.map { $0.description }.joined(separator: ", ") + ")"
        case .dictionary(let entries):
            return "{" + entries.map { "\($0.key.description) = \($0.value.description)" }.joined(separator: "; ") + "}"
        case .migrationManager: return "$manager"
        }
    }

    /// Shortest text for a double: integral values without a fraction, as NSNumber prints them.
    package static func format(_ d: Double) -> String {
        if d.isFinite && d == d.rounded() && abs(d) < 1e15 { return String(Int64(d)) }
        return String(d)
    }

    /// The canonical upper-case 8-4-4-4-12 form of 16 bytes.
    package static func uuidString(_ bytes: [UInt8]) -> String {
        let hex = Array("0123456789ABCDEF")
        var out = ""
        for (i, b) in bytes.enumerated() {
            if i == 4 || i == 6 || i == 8 || i == 10 { out.append("-") }
            out.append(hex[Int(b >> 4)])
            out.append(hex[Int(b & 0xF)])
        }
        return out
    }

    /// Parses the 8-4-4-4-12 form (either case); nil when malformed.
    /// Also takes the 32 hex digits without dashes; dashes elsewhere and non-ASCII digits are refused.
    package static func uuidBytes(_ text: String) -> [UInt8]? {
        let chars = Array(text.utf8)
        let dashes = chars.count == 36 ? [8, 13, 18, 23] : []
        guard chars.count == 32 || chars.count == 36 else { return nil }
        var bytes: [UInt8] = []
        var high: UInt8? = nil
        for (i, c) in chars.enumerated() {
            if dashes.contains(i) {
                guard c == UInt8(ascii: "-") else { return nil }
                continue
            }
            let v: UInt8
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): v = c - 48
            case UInt8(ascii: "a")...UInt8(ascii: "f"): v = c - 87
            case UInt8(ascii: "A")...UInt8(ascii: "F"): v = c - 55
            default: return nil
            }
            if let h = high {
                bytes.append(h << 4 | v)
                high = nil
            } else {
                high = v
            }
        }
        return bytes
    }
}

extension Value: Equatable {
    /// Instances compare by identity; numbers of different kinds compare by value (as NSNumber does).
    public static func == (lhs: Value, rhs: Value) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case (.string(let a), .string(let b)): return a == b
        case (.binary(let a), .binary(let b)): return a == b
        case (.uuid(let a), .uuid(let b)): return a == b
        case (.uri(let a), .uri(let b)): return a == b
        case (.date(let a), .date(let b)): return a == b
        case (.object(let a), .object(let b)): return a === b || a.objectID == b.objectID
        case (.collection(let a), .collection(let b)): return a == b
        case (.dictionary(let a), .dictionary(let b)): return Value.sameEntries(a, b)
        case (.migrationManager, .migrationManager): return true
        case (.decimal(let a), .decimal(let b)) where a == b: return true
        default:
            switch (lhs, rhs) {
            case (.integer(let a), .integer(let b)): return a == b
            case (.bool, _), (.integer, _), (.double, _), (.decimal, _):
                if case .date = rhs { return false }
                guard let a = lhs.doubleValue, let b = rhs.doubleValue else { return false }
                if case .string = rhs { return false }
                return a == b
            default: return false
            }
        }
    }
}

extension Value {
    /// Whether two dictionaries hold the same entries, in any order (as `isEqualToDictionary:`).
    static func sameEntries(_ a: [(key: Value, value: Value)], _ b: [(key: Value, value: Value)]) -> Bool {
        guard a.count == b.count else { return false }
        for entry in a {
            guard let match = b.first(where: { $0.key == entry.key }), match.value == entry.value else { return false }
        }
        return true
    }

    /// The entry under `key` of a dictionary (nil when there is none or the value is no dictionary).
    public func entry(forKey key: Value) -> Value? {
        guard case .dictionary(let entries) = self else { return nil }
        return entries.first(where: { $0.key == key })?.value
    }
}

extension Value: Hashable {
    /// Hashes consistently with `==`.
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case .bool, .integer, .double, .decimal: hasher.combine(doubleValue ?? 0)
        case .string(let s): hasher.combine(s)
        case .date(let d): hasher.combine(d)
        case .binary(let b), .uuid(let b): hasher.combine(b)
        case .uri(let s): hasher.combine(s)
        case .object(let o): hasher.combine(o.objectID)
        case .collection(let values): hasher.combine(values)
        case .dictionary(let entries):
            // Order-independent, as `==` is: the count and an unordered sum of entry hashes.
            hasher.combine(entries.count)
            var sum = 0
            for entry in entries {
                var h = Hasher()
                h.combine(entry.key)
                h.combine(entry.value)
                sum = sum &+ h.finalize()
            }
            hasher.combine(sum)
        case .migrationManager: hasher.combine(1)
        }
    }
}

extension Value: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByNilLiteral
{
    /// `"text"` as `.string`.
    public init(stringLiteral value: String) { self = .string(value) }
    /// `42` as `.integer`.
    public init(integerLiteral value: Int64) { self = .integer(value) }
    /// `4.2` as `.double`.
    public init(floatLiteral value: Double) { self = .double(value) }
    /// `true` as `.bool`.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// `nil` as `.null`.
    public init(nilLiteral: ()) { self = .null }
}
