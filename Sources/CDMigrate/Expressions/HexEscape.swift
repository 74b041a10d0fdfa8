/// The hexadecimal digits of an escape (`\xHH`, `\uHHHH`, `\UHHHHHHHH`, `\x{H…}`), read the same
/// way in an expression's string literals (`ExpressionLexer`) and in regular expressions
/// (`RegularExpression`, for MATCHES).
enum HexEscape {
    /// How many digits the fixed-width escape `\<kind>` takes: `x` 2, `u` 4, `U` 8.
    static func width(_ kind: Character) -> Int { kind == "x" ? 2 : (kind == "u" ? 4 : 8) }

    /// The value of the hexadecimal digits at `position` in `text`, at most `maximum` of them
    /// (at most 8, so the value fits), and how many there were.
    static func digits<Element>(in text: [Element], at position: Int, maximum: Int,
                                digit: (Element) -> Int?) -> (value: UInt32, count: Int) {
        var value: UInt32 = 0
        var count = 0
        while count < min(maximum, 8), position + count < text.count, let v = digit(text[position + count]), v < 16 {
            value = value * 16 + UInt32(v)
            count += 1
        }
        return (value, count)
    }
}
