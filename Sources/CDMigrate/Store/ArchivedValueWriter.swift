/// Archives attribute values (defaults) as Foundation's classes keep them in a keyed archive: the
/// mirror of what `KeyedArchive` decodes into `ArchiveValue`s.
///
/// NSNumber as a plain integer, real or boolean; NSString as a string; NSData as plain data;
/// NSDate (`NS.time`); NSUUID (`NS.uuidbytes`); NSURL (`NS.base` `$null`, `NS.relative`);
/// NSDecimalNumber (`NS.exponent`, `NS.length`, `NS.negative`, `NS.compact`, `NS.mantissa.bo` 1,
/// `NS.mantissa`: 16 bytes, little-endian 16-bit words).
enum ArchivedValueWriter {
    /// The archived object for a value of an attribute of `type`; `$null` for no value and for
    /// values that are no attribute's (instances, collections).
    static func object(_ value: Value, type: AttributeType, _ writer: KeyedArchiveWriter) -> PropertyListValue {
        switch value {
        case .null, .object, .collection, .dictionary, .migrationManager:
            return KeyedArchiveWriter.null
        case .bool(let b):
            return writer.number(type == .boolean ? .bool(b) : .integer(b ? 1 : 0))
        case .integer(let i):
            return writer.number(type == .boolean ? .bool(i != 0) : .integer(i))
        case .double(let d):
            return writer.number(.real(d))
        case .decimal(let text):
            guard let decimal = DecimalParts(text) else { return writer.string(text) }
            return writer.encode(nil, classes: ["NSDecimalNumber", "NSNumber", "NSValue"]) {
                [
                    ("NS.exponent", .integer(Int64(decimal.exponent))), ("NS.length", .integer(Int64(decimal.length))),
                    ("NS.negative", .bool(decimal.negative)), ("NS.compact", .bool(true)),
                    ("NS.mantissa.bo", .integer(1)), ("NS.mantissa", .data(decimal.mantissaBytes)),
                ]
            }
        case .string(let s):
            return writer.string(s)
        case .date(let seconds):
            return writer.encode(nil, classes: ["NSDate"]) { [("NS.time", .real(seconds))] }
        case .binary(let bytes):
            return writer.data(bytes)
        case .uuid(let bytes):
            guard bytes.count == 16 else { return KeyedArchiveWriter.null }
            return writer.encode(nil, classes: ["NSUUID"]) { [("NS.uuidbytes", .data(bytes))] }
        case .uri(let s):
            return writer.encode(nil, classes: ["NSURL"]) {
                [("NS.base", KeyedArchiveWriter.null), ("NS.relative", writer.string(s))]
            }
        }
    }
}

/// A decimal number's text as NSDecimal's parts: a mantissa of up to 38 digits in eight 16-bit
/// words, a base-10 exponent (-128…127) and a sign. Digits beyond 38 are dropped (NSDecimal's
/// own precision); text that is not a plain decimal number gives nil.
struct DecimalParts {
    var words: [UInt16] = Array(repeating: 0, count: 8)
    var exponent = 0
    var negative = false

    /// The number of mantissa words in use (NSDecimal's `_length`).
    var length: Int {
        var used = words.count
        while used > 0 && words[used - 1] == 0 { used -= 1 }
        return used
    }

    /// The 16 bytes of `NS.mantissa`, little-endian words.
    var mantissaBytes: [UInt8] {
        words.flatMap { [UInt8(truncatingIfNeeded: $0), UInt8(truncatingIfNeeded: $0 >> 8)] }
    }

    init?(_ text: String) {
        var scalars = Array(text.unicodeScalars)
        guard !scalars.isEmpty, scalars.count <= 4096 else { return nil }
        if scalars[0] == "-" || scalars[0] == "+" {
            negative = scalars[0] == "-"
            scalars.removeFirst()
        }
        var digits: [UInt8] = []
        var fractionDigits = 0
        var seenPoint = false
        var index = 0
        while index < scalars.count {
            let c = scalars[index]
            if c == "." {
                guard !seenPoint else { return nil }
                seenPoint = true
            } else if c.value >= 48 && c.value <= 57 {
                digits.append(UInt8(c.value - 48))
                if seenPoint { fractionDigits += 1 }
            } else {
                break
            }
            index += 1
        }
        guard !digits.isEmpty else { return nil }
        var exponentValue = 0
        if index < scalars.count {
            guard scalars[index] == "e" || scalars[index] == "E" else { return nil }
            let rest = String(String.UnicodeScalarView(scalars[(index + 1)...]))
            guard let e = Int(rest), e >= -10_000, e <= 10_000 else { return nil }
            exponentValue = e
        }
        var exponent = exponentValue - fractionDigits
        while let first = digits.first, first == 0, digits.count > 1 { digits.removeFirst() }
        while digits.count > 1, digits.last == 0 {
            digits.removeLast()
            exponent += 1
        }
        while digits.count > 38 {
            digits.removeLast()
            exponent += 1
        }
        if digits == [0] {
            exponent = 0
            negative = false
        }
        guard exponent >= -128, exponent <= 127 else { return nil }
        self.exponent = exponent
        // words = words * 10 + digit, over 128 bits (38 digits always fit).
        for digit in digits {
            var carry = UInt32(digit)
            for i in words.indices {
                let product = UInt32(words[i]) * 10 + carry
                words[i] = UInt16(truncatingIfNeeded: product)
                carry = product >> 16
            }
        }
    }
}
