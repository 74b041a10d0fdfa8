/// `CAST(value, "NSString" | "NSNumber" | "NSDate" | "NSDecimalNumber" | "NSData" | "NSUUID" | "NSURL")`.
///
/// Dates and numbers convert through seconds since 2001, as `NSDate`'s
/// `timeIntervalSinceReferenceDate` does; text becomes a date when it is ISO 8601 (or Core Data's
/// printed form `2020-01-01 10:00:00 +0000`) or a number of seconds.
enum ExpressionCast {
    static let typeNames: Set<String> = [
        "NSString", "NSNumber", "NSDate", "NSDecimalNumber", "NSData", "NSUUID", "NSURL", "Class",
    ]

    static func cast(_ value: Value, to type: String) throws -> Value {
        if value.isNull { return .null }
        func fail() -> MigrationError {
            return MigrationError(.expressionEvaluation, "cannot CAST \(value.aTypeName) value ('\(value)') to \(type)")
        }
        switch type {
        case "NSString":
            if case .string = value { return value }
            return .string(SelectorTable.describe(value))
        case "NSNumber":
            switch value {
            case .integer, .double, .bool: return value
            case .decimal(let s): return Int64(s).map(Value.integer) ?? .double(Double(s) ?? 0)
            case .date(let d): return .double(d)
            case .string(let s):
                let text = s.trimmingWhitespace
                if let i = Int64(text) { return .integer(i) }
                return .double(NumericText.leadingDouble(text))
            default: throw fail()
            }
        case "NSDecimalNumber":
            switch value {
            case .decimal: return value
            case .integer(let i): return .decimal(String(i))
            case .double(let d): return .decimal(Value.format(d))
            case .bool(let b): return .decimal(b ? "1" : "0")
            case .date(let d): return .decimal(Value.format(d))
            case .string(let s):
                let text = s.trimmingWhitespace
                guard Double(text) != nil else { throw fail() }
                return .decimal(text)
            default: throw fail()
            }
        case "NSDate":
            switch value {
            case .date: return value
            case .integer, .double, .decimal, .bool: return .date(value.doubleValue ?? 0)
            case .string(let s):
                if let d = parseDate(s.trimmingWhitespace) { return .date(d) }
                throw fail()
            default: throw fail()
            }
        case "NSData":
            switch value {
            case .binary: return value
            case .uuid(let bytes): return .binary(bytes)
            case .string(let s): return .binary(Base64.decode(s) ?? Array(s.utf8))
            default: throw fail()
            }
        case "NSUUID":
            switch value {
            case .uuid: return value
            case .string(let s): if let bytes = Value.uuidBytes(s) { return .uuid(bytes) }
            case .binary(let bytes) where bytes.count == 16: return .uuid(bytes)
            default: break
            }
            throw fail()
        case "NSURL":
            switch value {
            case .uri: return value
            case .string(let s): return .uri(s)
            default: throw fail()
            }
        case "Class":
            throw MigrationError(
                .expressionEvaluation,
                "CAST(\"\(value)\", \"Class\") names a host class and can only be the target of FUNCTION")
        default:
            throw MigrationError(
                .expressionEvaluation,
                "unknown CAST type '\(type)' (expected one of \(typeNames.sorted().joined(separator: ", ")))")
        }
    }

    /// ISO 8601, NSDate's description (`2020-01-01 10:00:00 +0000`), or seconds since 2001.
    static func parseDate(_ text: String) -> Double? {
        if let d = DateConversion.parseISO8601(text) { return d }
        // "YYYY-MM-DD HH:MM:SS +0000": drop the space before the zone.
        var chars = Array(text)
        if chars.count > 6, chars[chars.count - 6] == " ",
            chars[chars.count - 5] == "+" || chars[chars.count - 5] == "-"
        {
            chars.remove(at: chars.count - 6)
            if let d = DateConversion.parseISO8601(String(chars)) { return d }
        }
        return Double(text)
    }
}

extension String {
    var trimmingWhitespace: String {
        guard let first = firstIndex(where: { !$0.isWhitespace }), let last = lastIndex(where: { !$0.isWhitespace })
        else { return "" }
        return String(self[first...last])
    }
}
