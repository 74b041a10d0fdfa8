/// An Xcode model's `defaultValueString` read as momc reads it.
///
/// momc turns the text into the attribute's type with Foundation's lenient conversions
/// (`NSString.integerValue`, `doubleValue`, `floatValue`, `boolValue`): leading whitespace is
/// skipped, the longest number at the start is taken and the rest ignored, text with no number at
/// its start is 0 (NO), and an integer too large saturates. So a model whose Integer 16 attribute
/// kept `defaultValueString="NO"` from a Boolean past compiles, with the default 0. Each such
/// reading is kept here too, with a warning naming the text and the value taken
/// (docs/coming-from-core-data.md).
struct XcodeDefaultValue {
    /// The value, as the JSON reader would have been given it (text for the types read from
    /// text, such as Decimal, which the JSON reader then checks).
    var json: JSON
    /// Why the text is odd and what was made of it; nil for ordinary text.
    var note: String?

    init(_ text: String, type: AttributeType) {
        switch type {
        case .integer16, .integer32, .integer64:
            let read = Self.integerValue(text)
            var value = read
            var notes: [String] = []
            if Int64(text) == nil {
                notes.append(
                    "default value '\(text)' is not an integer; read as momc reads it (NSString.integerValue): \(read)")
            }
            if let range = type.integerRange, !range.contains(read) {
                value = min(max(read, range.lowerBound), range.upperBound)
                notes.append(
                    "default value \(read) does not fit in \(type.rawValue); the nearest value it holds, \(value), is taken"
                )
            }
            json = .integer(value)
            note = notes.isEmpty ? nil : notes.joined(separator: "; ")
        case .double, .float, .date:
            var value = Self.doubleValue(text)
            var notes: [String] = []
            if Double(text) == nil {
                notes.append(
                    "default value '\(text)' is not a number; read as momc reads it (NSString.doubleValue): \(Value.format(value))"
                )
            }
            if type == .float, abs(value) > Double(Float.greatestFiniteMagnitude) {
                let nearest = value < 0 ? -Double(Float.greatestFiniteMagnitude) : Double(Float.greatestFiniteMagnitude)
                notes.append(
                    "default value \(Value.format(value)) does not fit in float; the nearest value it holds, \(Value.format(nearest)), is taken"
                )
                value = nearest
            }
            json = .double(value)
            note = notes.isEmpty ? nil : notes.joined(separator: "; ")
        case .boolean:
            let value = Self.boolValue(text)
            json = .bool(value)
            switch text {
            case "YES", "NO", "1", "0", "true", "false": note = nil
            default:
                note =
                    "default value '\(text)' is not YES or NO; read as momc reads it (NSString.boolValue): \(value ? "YES" : "NO")"
            }
        case .decimal, .string, .uri, .uuid, .binary, .transformable, .undefined, .objectID, .composite:
            json = .string(text)
            note = nil
        }
    }

    // MARK: Foundation's lenient conversions

    private static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || (byte >= 0x09 && byte <= 0x0D) }

    /// `NSString.integerValue` (64-bit): whitespace skipped, an optional sign, the digits that
    /// follow; 0 without any; `Int64.max`/`Int64.min` on overflow.
    static func integerValue(_ text: String) -> Int64 {
        let bytes = Array(text.utf8)
        var i = 0
        while i < bytes.count, isSpace(bytes[i]) { i += 1 }
        var negative = false
        if i < bytes.count, bytes[i] == UInt8(ascii: "-") || bytes[i] == UInt8(ascii: "+") {
            negative = bytes[i] == UInt8(ascii: "-")
            i += 1
        }
        var magnitude: UInt64 = 0
        var overflow = false
        while i < bytes.count, bytes[i] >= 0x30, bytes[i] <= 0x39 {
            let (times, o1) = magnitude.multipliedReportingOverflow(by: 10)
            let (plus, o2) = times.addingReportingOverflow(UInt64(bytes[i] - 0x30))
            if o1 || o2 {
                overflow = true
                break
            }
            magnitude = plus
            i += 1
        }
        if negative {
            if overflow || magnitude > UInt64(Int64.max) + 1 { return Int64.min }
            return magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude)
        }
        if overflow || magnitude > UInt64(Int64.max) { return Int64.max }
        return Int64(magnitude)
    }

    /// `NSString.doubleValue`: whitespace skipped, the longest decimal number at the start
    /// (sign, digits, a point, an exponent); 0 without any.
    static func doubleValue(_ text: String) -> Double {
        let bytes = Array(text.utf8)
        var i = 0
        while i < bytes.count, isSpace(bytes[i]) { i += 1 }
        let start = i
        func digits() -> Int {
            let from = i
            while i < bytes.count, bytes[i] >= 0x30, bytes[i] <= 0x39 { i += 1 }
            return i - from
        }
        if i < bytes.count, bytes[i] == UInt8(ascii: "-") || bytes[i] == UInt8(ascii: "+") { i += 1 }
        var count = digits()
        if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
            i += 1
            count += digits()
        }
        guard count > 0 else { return 0 }
        var end = i
        if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
            i += 1
            if i < bytes.count, bytes[i] == UInt8(ascii: "-") || bytes[i] == UInt8(ascii: "+") { i += 1 }
            if digits() > 0 { end = i }
        }
        var number = String(decoding: bytes[start..<end], as: UTF8.self)
        if number.hasSuffix(".") { number += "0" }  // "1." is 1
        return Double(number) ?? 0
    }

    /// `NSString.boolValue`: whitespace skipped, then an optional sign and leading zeros; YES on
    /// "Y", "y", "T", "t" or a digit 1–9, NO otherwise.
    static func boolValue(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        var i = 0
        while i < bytes.count, isSpace(bytes[i]) { i += 1 }
        if i < bytes.count, bytes[i] == UInt8(ascii: "-") || bytes[i] == UInt8(ascii: "+") { i += 1 }
        while i < bytes.count, bytes[i] == UInt8(ascii: "0") { i += 1 }
        guard i < bytes.count else { return false }
        switch bytes[i] {
        case UInt8(ascii: "Y"), UInt8(ascii: "y"), UInt8(ascii: "T"), UInt8(ascii: "t"): return true
        case 0x31...0x39: return true
        default: return false
        }
    }
}
