/// The Objective-C messages a `FUNCTION(value, "selector", …)` expression can send to a value,
/// implemented for cdmigrate's values with Foundation's results.
///
/// Lengths and indexes count UTF-16 code units, as NSString does, but never split a Unicode
/// scalar. Unlike Foundation, `substringToIndex:` and `substringFromIndex:` clamp an index past
/// the end instead of raising, so "the first 80 characters" works on shorter text.
enum SelectorTable {
    static func perform(_ selector: String, on receiver: Value, arguments: [Value]) throws -> Value {
        if receiver.isNull { return .null }
        switch selector {
        case "valueForKey:":
            return try KeyValueCoding.value(receiver, keys: [try key(arguments, selector)][...])
        case "valueForKeyPath:":
            let path = try key(arguments, selector)
            return try KeyValueCoding.value(
                receiver, keys: path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)[...])
        case "description":
            if case .collection(let items) = receiver {
                return .string(
                    "(" + (try ExpressionValueLimits.joined(items.map(describe), separator: ", ", selector)) + ")")
            }
            return .string(describe(receiver))
        case "self":
            return receiver
        default:
            break
        }
        let result: Value?
        switch receiver {
        case .string(let s): result = try stringSelector(selector, s, arguments)
        case .integer, .double, .bool, .decimal: result = numberSelector(selector, receiver)
        case .date(let d): result = dateSelector(selector, d)
        case .collection(let items): result = try collectionSelector(selector, items, arguments)
        case .object(let object):
            // A getter named like a property (`FUNCTION($source, "name")`).
            if !selector.contains(":"),
                object.entity.attributesByName[selector] != nil || object.entity.relationshipsByName[selector] != nil
            {
                result = try KeyValueCoding.value(receiver, keys: [selector][...])
            } else {
                result = nil
            }
        case .uuid(let bytes): result = selector == "UUIDString" ? .string(Value.uuidString(bytes)) : nil
        case .binary(let bytes): result = selector == "length" ? .integer(Int64(bytes.count)) : nil
        case .uri(let s): result = selector == "absoluteString" ? .string(s) : nil
        default: result = nil
        }
        guard let value = result else {
            throw MigrationError(
                .expressionEvaluation,
                "unknown selector '\(selector)' for \(receiver.aTypeName) receiver ('\(describe(receiver))')")
        }
        return value
    }

    private static func key(_ arguments: [Value], _ selector: String) throws -> String {
        guard arguments.count == 1, case .string(let key) = arguments[0] else {
            throw MigrationError(
                .expressionEvaluation,
                "\(selector) needs one key string, not \(arguments.map { $0.typeName }.joined(separator: ", "))")
        }
        return key
    }

    private static func string(_ arguments: [Value], _ index: Int, _ selector: String) throws -> String {
        guard index < arguments.count, case .string(let s) = arguments[index] else {
            let found = index < arguments.count ? "\(arguments[index].aTypeName) value" : "nothing"
            throw MigrationError(.expressionEvaluation, "\(selector) needs a string argument, not \(found)")
        }
        return s
    }

    private static func integer(_ arguments: [Value], _ index: Int, _ selector: String) throws -> Int64 {
        guard index < arguments.count, let i = arguments[index].integerValue else {
            let found = index < arguments.count ? "\(arguments[index].aTypeName) value" : "nothing"
            throw MigrationError(.expressionEvaluation, "\(selector) needs a number argument, not \(found)")
        }
        return i
    }

    /// The index in `s` after `units` UTF-16 code units, clamped to the text and rounded down
    /// to a whole Unicode scalar.
    static func utf16Index(_ s: String, _ units: Int64) -> String.Index {
        guard units > 0 else { return s.startIndex }
        var count: Int64 = 0
        var index = s.unicodeScalars.startIndex
        while index < s.unicodeScalars.endIndex {
            let width = Int64(s.unicodeScalars[index].utf16.count)
            if count + width > units { break }
            count += width
            index = s.unicodeScalars.index(after: index)
        }
        return index
    }

    private static func stringSelector(_ selector: String, _ s: String, _ args: [Value]) throws -> Value? {
        switch selector {
        // Case mapping can lengthen a string (ß becomes SS) up to three times.
        case "uppercaseString":
            try ExpressionValueLimits.checkString(bytes: s.utf8.count, selector)
            return .string(s.uppercased())
        case "lowercaseString":
            try ExpressionValueLimits.checkString(bytes: s.utf8.count, selector)
            return .string(s.lowercased())
        case "capitalizedString":
            try ExpressionValueLimits.checkString(bytes: s.utf8.count, selector)
            return .string(capitalized(s))
        case "length": return .integer(Int64(s.utf16.count))
        case "substringToIndex:":
            return .string(String(s.unicodeScalars[..<utf16Index(s, try integer(args, 0, selector))]))
        case "substringFromIndex:":
            return .string(String(s.unicodeScalars[utf16Index(s, try integer(args, 0, selector))...]))
        case "componentsSeparatedByString:":
            let separator = try string(args, 0, selector)
            guard !separator.isEmpty else { return .collection([.string(s)]) }
            var parts: [Value] = []
            var rest = s[...]
            while let range = rest.firstRange(of: separator) {
                try ExpressionValueLimits.checkCollection(count: parts.count + 1, selector)
                parts.append(.string(String(rest[..<range.lowerBound])))
                rest = rest[range.upperBound...]
            }
            parts.append(.string(String(rest)))
            return .collection(parts)
        case "stringByReplacingOccurrencesOfString:withString:":
            return .string(
                try ExpressionValueLimits.replacing(
                    s, try string(args, 0, selector), with: try string(args, 1, selector), selector))
        case "stringByAppendingString:":
            let tail = try string(args, 0, selector)
            try ExpressionValueLimits.checkString(bytes: s.utf8.count.addingClampedToMax(tail.utf8.count), selector)
            return .string(s + tail)
        case "isEqualToString:":
            if args.first?.isNull == true { return .bool(false) }
            return .bool(s == (try string(args, 0, selector)))
        // Foundation answers NO for an empty prefix, suffix or substring.
        case "hasPrefix:":
            let p = try string(args, 0, selector)
            return .bool(!p.isEmpty && s.hasPrefix(p))
        case "hasSuffix:":
            let p = try string(args, 0, selector)
            return .bool(!p.isEmpty && s.hasSuffix(p))
        case "containsString:":
            let p = try string(args, 0, selector)
            return .bool(!p.isEmpty && s.contains(p))
        case "intValue":
            let i = NumericText.leadingInteger(s)
            return .integer(min(max(i, Int64(Int32.min)), Int64(Int32.max)))
        case "integerValue", "longLongValue": return .integer(NumericText.leadingInteger(s))
        case "doubleValue": return .double(NumericText.leadingDouble(s))
        case "floatValue": return .double(Double(Float(NumericText.leadingDouble(s))))
        case "boolValue": return .bool(NumericText.leadingBool(s))
        case "stringValue": return .string(s)
        default: return nil
        }
    }

    /// NSString's capitalizedString: the first letter of each word upper-case, the rest lower-case.
    static func capitalized(_ s: String) -> String {
        var out = ""
        var atWordStart = true
        for c in s {
            if c.isWhitespace || c.isPunctuation && c != "'" {
                out.append(c)
                atWordStart = true
            } else {
                out += atWordStart ? c.uppercased() : c.lowercased()
                atWordStart = false
            }
        }
        return out
    }

    private static func numberSelector(_ selector: String, _ n: Value) -> Value? {
        switch selector {
        case "intValue":
            let i = n.integerValue ?? 0
            return .integer(Int64(Int32(truncatingIfNeeded: i)))
        case "integerValue", "longLongValue", "longValue", "unsignedIntegerValue": return .integer(n.integerValue ?? 0)
        case "doubleValue": return .double(n.doubleValue ?? 0)
        case "floatValue": return .double(Double(Float(n.doubleValue ?? 0)))
        case "boolValue": return .bool(n.boolValue)
        case "stringValue": return .string(describe(n))
        case "decimalValue": return try? ExpressionCast.cast(n, to: "NSDecimalNumber")
        default: return nil
        }
    }

    private static func dateSelector(_ selector: String, _ d: Double) -> Value? {
        switch selector {
        case "timeIntervalSince1970": return .double(d + Value.referenceDateOffset)
        case "timeIntervalSinceReferenceDate": return .double(d)
        default: return nil
        }
    }

    private static func collectionSelector(_ selector: String, _ items: [Value], _ args: [Value]) throws -> Value? {
        switch selector {
        case "count": return .integer(Int64(items.count))
        case "firstObject", "anyObject": return items.first ?? .null
        case "lastObject": return items.last ?? .null
        case "allObjects", "array", "allValues": return .collection(items)
        case "objectAtIndex:":
            let i = try integer(args, 0, selector)
            guard i >= 0, i < Int64(items.count) else {
                throw MigrationError(
                    .expressionEvaluation, "objectAtIndex: index \(i) is beyond a collection of \(items.count)")
            }
            return items[Int(i)]
        case "componentsJoinedByString:":
            let separator = try string(args, 0, selector)
            return .string(try ExpressionValueLimits.joined(items.map(describe), separator: separator, selector))
        case "containsObject:":
            guard let needle = args.first else { return nil }
            return .bool(items.contains(needle))
        default: return nil
        }
    }

    /// `description` as Foundation prints values: numbers plainly, booleans 1/0, dates
    /// `2001-01-01 00:00:00 +0000`, strings as they are.
    static func describe(_ value: Value) -> String {
        switch value {
        case .string(let s): return s
        case .bool(let b): return b ? "1" : "0"
        case .date(let d): return dateDescription(d)
        case .null: return "<null>"
        case .collection(let items): return "(" + items.map(describe).joined(separator: ", ") + ")"
        default: return value.description
        }
    }

    static func dateDescription(_ referenceSeconds: Double) -> String {
        let unix = (referenceSeconds + Value.referenceDateOffset).rounded(.down)
        guard unix.isFinite, abs(unix) < 1e15 else { return Value.format(referenceSeconds) }
        let total = Int64(unix)
        let days = total >= 0 ? total / 86400 : (total - 86399) / 86400
        let second = total - days * 86400
        let (y, m, d) = DateConversion.civilFromDays(Int(days))
        func pad(_ n: Int64, _ width: Int) -> String {
            let s = String(n)
            return String(repeating: "0", count: max(0, width - s.count)) + s
        }
        return
            "\(pad(Int64(y), 4))-\(pad(Int64(m), 2))-\(pad(Int64(d), 2)) \(pad(second / 3600, 2)):\(pad(second / 60 % 60, 2)):\(pad(second % 60, 2)) +0000"
    }
}

extension Value {
    /// "a string", "an integer": the kind of value for messages.
    var aTypeName: String {
        let name = typeName
        return ("aeiouAEIOU".contains(name.first ?? "x") ? "an " : "a ") + name
    }
}
