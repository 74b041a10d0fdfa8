/// Whether bytes are well-formed UTF-8 (Unicode's definition, table 3-7: no overlong forms,
/// surrogates or values above U+10FFFF), checked without making a String.
enum UTF8Check {
    static func isValid(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool { firstInvalidByte(bytes) == nil }

    /// The first byte that does not start (or continue) a valid sequence; nil when all are valid.
    static func firstInvalidByte(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        guard let base = bytes.baseAddress else { return nil }
        let raw = UnsafeRawPointer(base)
        var i = 0
        let n = bytes.count
        // ASCII eight bytes at a time (a byte with its high bit set ends a run): the common case of text.
        func highBits(at offset: Int) -> UInt64 {
            UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) & 0x8080_8080_8080_8080
        }
        while i < n {
            if n - i >= 8 {
                let high = highBits(at: i)
                if high == 0 {
                    i += 8
                    continue
                }
                i += high.trailingZeroBitCount >> 3  // the first byte that is not ASCII
            } else if n >= 8 {
                // The last bytes, as the last eight bytes less the 1 to 7 before i (checked already).
                let high = highBits(at: n - 8) >> UInt64((8 - (n - i)) * 8)
                if high == 0 { return nil }
                i += high.trailingZeroBitCount >> 3
            }
            let lead = bytes[i]
            if lead < 0x80 {
                i += 1
                continue
            }
            let length: Int
            var low: UInt8 = 0x80
            var high: UInt8 = 0xBF
            switch lead {
            case 0xC2...0xDF: length = 2
            case 0xE0:
                length = 3
                low = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: length = 3
            case 0xED:
                length = 3
                high = 0x9F
            case 0xF0:
                length = 4
                low = 0x90
            case 0xF1...0xF3: length = 4
            case 0xF4:
                length = 4
                high = 0x8F
            default: return i
            }
            guard i + 1 < n, bytes[i + 1] >= low, bytes[i + 1] <= high else { return i }
            var k = 2
            while k < length {
                guard i + k < n, bytes[i + k] & 0xC0 == 0x80 else { return i }
                k += 1
            }
            i += length
        }
        return nil
    }
}
