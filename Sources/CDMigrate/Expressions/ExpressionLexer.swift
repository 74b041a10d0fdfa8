/// Splits NSExpression / NSPredicate format text into tokens, each with its character offset.
///
/// Keywords are not decided here (they are case-insensitive identifiers the parser recognises),
/// except that `#name` marks an identifier that must never be taken as a keyword, as in Core Data.
struct ExpressionToken: Equatable {
    enum Kind: Equatable {
        case identifier(String)
        /// An identifier written `#name`: always a key, never a keyword.
        case escapedIdentifier(String)
        /// `$name`, without the `$`.
        case variable(String)
        case string(String)
        case integer(Int64)
        case double(Double)
        /// `%@`, `%K`, `%d`, `%i`, `%ld`, `%lld`, `%u`, `%f`, `%g`, `%lf`, `%e` (the conversion letter, `@` or `K` or `d` or `f`).
        case format(Character)
        /// Punctuation and operators: `( ) { } [ ] , . : + - * / ** == = != <> < <= > >= =< => && || !`.
        case symbol(String)
        case end
    }

    var kind: Kind
    /// Zero-based character offset in the text.
    var offset: Int
    /// Zero-based UTF-8 byte offset in the text (what the C API reports).
    var byteOffset: Int = 0

    /// How the token reads in error messages.
    var display: String {
        switch kind {
        case .identifier(let s): return "'\(s)'"
        case .escapedIdentifier(let s): return "'#\(s)'"
        case .variable(let s): return "'$\(s)'"
        case .string(let s): return "string \"\(s)\""
        case .integer(let i): return "number \(i)"
        case .double(let d): return "number \(Value.format(d))"
        case .format(let c): return c == "@" || c == "K" ? "'%\(c)'" : "'%\(c)'"
        case .symbol(let s): return "'\(s)'"
        case .end: return "end of text"
        }
    }
}

struct ExpressionLexer {
    let text: String
    private let chars: [Character]
    private var position = 0
    /// The character and UTF-8 offsets of the last token's start, to count bytes once per character.
    private var counted = (characters: 0, bytes: 0)

    init(_ text: String) {
        self.text = text
        self.chars = Array(text)
    }

    /// All tokens, ending with `.end`.
    static func tokenize(_ text: String) throws -> [ExpressionToken] {
        var lexer = ExpressionLexer(text)
        var tokens: [ExpressionToken] = []
        while true {
            let token = try lexer.next()
            tokens.append(token)
            if token.kind == .end { return tokens }
        }
    }

    func error(expected: String, found: String, at offset: Int) -> MigrationError {
        return MigrationError(
            .expressionSyntax, "expected \(expected) but found \(found) at character \(offset) in '\(text)'",
            offset: offset,
            byteOffset: MigrationError.utf8Offset(ofCharacter: offset, in: text))
    }

    private func peek(_ ahead: Int = 0) -> Character? {
        let i = position + ahead
        return i < chars.count ? chars[i] : nil
    }

    private static func isIdentifierStart(_ c: Character) -> Bool {
        return c == "_" || c.isLetter
    }

    private static func isIdentifierPart(_ c: Character) -> Bool {
        return c == "_" || c.isLetter || c.isNumber
    }

    private mutating func identifier() -> String {
        var name = ""
        while let c = peek(), ExpressionLexer.isIdentifierPart(c) {
            name.append(c)
            position += 1
        }
        return name
    }

    mutating func next() throws -> ExpressionToken {
        while let c = peek(), c.isWhitespace { position += 1 }
        let start = position
        while counted.characters < start {
            counted.bytes += chars[counted.characters].utf8.count
            counted.characters += 1
        }
        let startByte = counted.bytes
        guard let c = peek() else { return ExpressionToken(kind: .end, offset: start, byteOffset: startByte) }
        func token(_ kind: ExpressionToken.Kind) -> ExpressionToken {
            ExpressionToken(kind: kind, offset: start, byteOffset: startByte)
        }

        if ExpressionLexer.isIdentifierStart(c) { return token(.identifier(identifier())) }
        if c == "@", let n = peek(1), ExpressionLexer.isIdentifierStart(n) {
            // Collection operators in key paths (`@count`, `@sum`): keys, not keywords.
            position += 1
            return token(.escapedIdentifier("@" + identifier()))
        }
        if c == "#" {
            position += 1
            guard let n = peek(), ExpressionLexer.isIdentifierStart(n) else {
                throw error(
                    expected: "a name after '#'", found: peek().map { "'\($0)'" } ?? "end of text", at: position)
            }
            return token(.escapedIdentifier(identifier()))
        }
        if c == "$" {
            position += 1
            guard let n = peek(), ExpressionLexer.isIdentifierStart(n) else {
                throw error(
                    expected: "a variable name after '$'", found: peek().map { "'\($0)'" } ?? "end of text",
                    at: position)
            }
            return token(.variable(identifier()))
        }
        if c == "\"" || c == "'" { return token(.string(try string(quote: c))) }
        if c.isASCII && c.isNumber { return token(try number()) }
        if c == ".", let n = peek(1), n.isASCII, n.isNumber { return token(try number()) }
        if c == "%" { return token(try format()) }

        let two = peek(1).map { String(c) + String($0) } ?? ""
        if ["**", "==", "!=", "<>", "<=", ">=", "=<", "=>", "&&", "||"].contains(two) {
            position += 2
            return token(.symbol(two))
        }
        if "(){}[],.:+-*/=<>!".contains(c) {
            position += 1
            return token(.symbol(String(c)))
        }
        throw error(expected: "an expression", found: "'\(c)'", at: start)
    }

    private mutating func format() throws -> ExpressionToken.Kind {
        let start = position
        position += 1
        // Length modifiers of printf conversions are accepted and ignored: arguments are Values.
        while let c = peek(), c == "l" || c == "h" || c == "q" || c == "z" { position += 1 }
        guard let c = peek() else {
            throw error(expected: "a format conversion after '%'", found: "end of text", at: position)
        }
        position += 1
        switch c {
        case "@", "K": return .format(c)
        case "d", "i", "u", "D", "U", "x", "X", "o", "c": return .format("d")
        case "f", "g", "e", "F", "G", "E": return .format("f")
        case "%":
            if position - start == 2 { return .symbol("%") }
            fallthrough
        default:
            throw error(expected: "a format conversion (%@, %K, %d or %f)", found: "'%\(c)'", at: start)
        }
    }

    private mutating func string(quote: Character) throws -> String {
        let start = position
        position += 1
        var value = ""
        while true {
            guard let c = peek() else {
                throw error(
                    expected: "a closing \(quote) for the string at character \(start)", found: "end of text",
                    at: position)
            }
            position += 1
            if c == quote { return value }
            if c != "\\" {
                value.append(c)
                continue
            }
            let escapeStart = position - 1
            guard let e = peek() else {
                throw error(expected: "an escaped character after '\\'", found: "end of text", at: position)
            }
            position += 1
            if let scalar = e.unicodeScalars.first, e.unicodeScalars.count == 1,
                let control = EscapeSequence.control(scalar)
            {
                value.unicodeScalars.append(control)
                continue
            }
            switch e {
            case "0": value.append("\0")
            case "b": value.append("\u{8}")
            case "v": value.append("\u{B}")
            case "x", "u":
                let width = EscapeSequence.width(e)
                let (code, count) = EscapeSequence.digits(in: chars, at: position, maximum: width) { $0.hexDigitValue }
                position += count
                guard count == width else {
                    throw error(
                        expected: "\(width) hexadecimal digits after '\\\(e)'",
                        found: peek().map { "'\($0)'" } ?? "end of text", at: position)
                }
                guard let scalar = Unicode.Scalar(code) else {
                    throw error(
                        expected: "a Unicode scalar value", found: "'\\\(e)\(String(code, radix: 16))'", at: escapeStart
                    )
                }
                value.unicodeScalars.append(scalar)
            default:
                // \\, \", \' and any other character stand for themselves.
                value.append(e)
            }
        }
    }

    private mutating func number() throws -> ExpressionToken.Kind {
        let start = position
        if peek() == "0", let p = peek(1), "xXoObB".contains(p) {
            position += 2
            let radix = "xX".contains(p) ? 16 : ("oO".contains(p) ? 8 : 2)
            var digits = ""
            while let c = peek(), c.isHexDigit || c == "_" {
                digits.append(c)
                position += 1
            }
            guard !digits.isEmpty, let v = Int64(digits, radix: radix) else {
                throw error(
                    expected: "a base-\(radix) number", found: "'\(String(chars[start..<position]))'", at: start)
            }
            return .integer(v)
        }
        var text = ""
        var isDouble = false
        while let c = peek(), c.isASCII, c.isNumber {
            text.append(c)
            position += 1
        }
        if peek() == ".", let n = peek(1), n.isASCII, n.isNumber {
            isDouble = true
            text.append(".")
            position += 1
            while let c = peek(), c.isASCII, c.isNumber {
                text.append(c)
                position += 1
            }
        } else if peek() == ".", !(peek(1).map(ExpressionLexer.isIdentifierStart) ?? false) {
            // "1." is a double; "1.foo" is left for the parser to reject.
            isDouble = true
            position += 1
        }
        if let e = peek(), e == "e" || e == "E" {
            var k = 1
            if let s = peek(1), s == "+" || s == "-" { k = 2 }
            if let d = peek(k), d.isASCII, d.isNumber {
                isDouble = true
                text.append("e")
                if k == 2, let s = peek(1) { text.append(s) }
                position += k
                while let c = peek(), c.isASCII, c.isNumber {
                    text.append(c)
                    position += 1
                }
            }
        }
        if let c = peek(), ExpressionLexer.isIdentifierStart(c) {
            throw error(expected: "an operator after the number", found: "'\(c)'", at: position)
        }
        if !isDouble, let i = Int64(text) { return .integer(i) }
        guard let d = Double(text.hasPrefix(".") ? "0" + text : text) else {
            throw error(expected: "a number", found: "'\(text)'", at: start)
        }
        return .double(d)
    }
}
