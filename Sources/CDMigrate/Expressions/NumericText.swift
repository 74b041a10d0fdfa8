/// NSString's lenient number reading (`intValue`, `doubleValue`, `boolValue`): leading
/// whitespace is skipped, the longest numeric prefix is read, and text with none reads as 0.
enum NumericText {
    static func leadingInteger(_ s: String) -> Int64 {
        var result: Int64 = 0
        var negative = false
        var started = false
        var sawSign = false
        for c in s.unicodeScalars {
            if !started && !sawSign && (c == " " || c == "\t" || c == "\n" || c == "\r") { continue }
            if !started && !sawSign && (c == "+" || c == "-") {
                negative = c == "-"
                sawSign = true
                continue
            }
            guard c.value >= 48 && c.value <= 57 else { break }
            started = true
            let digit = Int64(c.value - 48)
            let (m, o1) = result.multipliedReportingOverflow(by: 10)
            let (r, o2) = negative ? m.subtractingReportingOverflow(digit) : m.addingReportingOverflow(digit)
            // NSString saturates on overflow.
            if o1 || o2 { return negative ? Int64.min : Int64.max }
            result = r
        }
        return result
    }

    static func leadingDouble(_ s: String) -> Double {
        let chars = Array(s.utf8)
        var i = 0
        while i < chars.count, chars[i] == 32 || chars[i] == 9 || chars[i] == 10 || chars[i] == 13 { i += 1 }
        let start = i
        func digits() -> Int {
            let from = i
            while i < chars.count, chars[i] >= 48, chars[i] <= 57 { i += 1 }
            return i - from
        }
        if i < chars.count, chars[i] == 43 || chars[i] == 45 { i += 1 }
        var count = digits()
        if i < chars.count, chars[i] == 46 {
            i += 1
            count += digits()
        }
        guard count > 0 else { return 0 }
        var end = i
        if i < chars.count, chars[i] == 101 || chars[i] == 69 {
            i += 1
            if i < chars.count, chars[i] == 43 || chars[i] == 45 { i += 1 }
            if digits() > 0 { end = i }
        }
        return Double(String(decoding: chars[start..<end], as: UTF8.self)) ?? 0
    }

    /// YES for text starting (after whitespace, a sign and zeros) with Y, y, T, t or a digit 1–9.
    static func leadingBool(_ s: String) -> Bool {
        var sawSign = false
        for c in s.unicodeScalars {
            if c == " " || c == "\t" || c == "\n" || c == "\r" {
                if sawSign { return false }
                continue
            }
            if (c == "+" || c == "-") && !sawSign {
                sawSign = true
                continue
            }
            if c == "0" {
                sawSign = true
                continue
            }
            return "YyTt123456789".unicodeScalars.contains(c)
        }
        return false
    }
}
