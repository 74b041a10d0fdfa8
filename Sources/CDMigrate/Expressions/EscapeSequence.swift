/// What a backslash escape stands for where an expression's string literals (`ExpressionLexer`)
/// and regular expressions (`RegularExpression`, for MATCHES) read it the same way: the control
/// characters both know, and the hexadecimal digits of `\xHH`, `\uHHHH`, `\UHHHHHHHH`, `\x{H…}`.
enum EscapeSequence {
    /// `\n`, `\t`, `\r`, `\f` and `\a`; each reader adds its own (`\0`, `\b`, `\v` in string
    /// literals, `\e` in regular expressions, where `\b` is a word boundary).
    static func control(_ letter: Unicode.Scalar) -> Unicode.Scalar? {
        switch letter {
        case "n": return "\n"
        case "t": return "\t"
        case "r": return "\r"
        case "f": return "\u{C}"
        case "a": return "\u{7}"
        default: return nil
        }
    }

    /// How many digits the fixed-width escape `\<kind>` takes: `x` 2, `u` 4, `U` 8.
    static func width(_ kind: Character) -> Int { kind == "x" ? 2 : (kind == "u" ? 4 : 8) }

    /// The value of the hexadecimal digits at `position` in `text`, at most `maximum` of them
    /// (at most 8, so the value fits), and how many there were.
    static func digits<Element>(
        in text: [Element], at position: Int, maximum: Int,
        digit: (Element) -> Int?
    ) -> (value: UInt32, count: Int) {
        var value: UInt32 = 0
        var count = 0
        while count < min(maximum, 8), position + count < text.count, let v = digit(text[position + count]), v < 16 {
            value = value * 16 + UInt32(v)
            count += 1
        }
        return (value, count)
    }
}
