/// The regular expressions of NSPredicate's MATCHES (ICU syntax), matched against a whole string
/// by a bounded automaton instead of a backtracking engine.
///
/// Why not Swift's `Regex`: it backtracks, so a pattern such as `(a+)+b` takes exponential time
/// on a run of `a`s and cannot be interrupted, and its parser recurses on nested groups. Here the
/// pattern compiles to a Thompson NFA program that is simulated over all states at once (a Pike
/// VM without captures, since MATCHES only asks whether the whole string matches): the work is
/// at most the text's length times the program's size, whatever the pattern. Three bounds keep
/// hostile patterns and data harmless:
/// - groups nest at most `maximumDepth` levels (the parser recurses over them);
/// - a program has at most `maximumProgramSize` instructions (counted repetition such as
///   `(a{1000}){1000}` is refused as it unrolls);
/// - one match takes at most `stepLimit` steps plus `stepsPerCharacter` per character of the
///   text (so long texts with plain patterns always finish), then fails with an
///   `.expressionEvaluation` error naming the pattern; a cancellation check runs every few
///   thousand steps.
///
/// Supported, as ICU reads it: literals and escapes (`\n \t \r \f \a \e \0oo \xhh \x{h…} \uhhhh
/// \Q…\E`, escaped punctuation), `.`, classes `[…]` with ranges, negation, nested classes and
/// `[:alpha:]`-style names, `\d \D \w \W \s \S`, `\p{…}` / `\P{…}` for general categories,
/// groups `(…)`, `(?:…)`, `(?<name>…)`, flags `(?i)`, `(?s)`, `(?m)` and `(?ism:…)`,
/// alternation, `* + ? {n} {n,} {n,m}` and their lazy forms, anchors `^ $ \A \z \Z \b \B`.
/// Matching is by Unicode scalar (code point), as ICU matches. Refused with a clear error:
/// backreferences, lookaround, atomic groups and possessive quantifiers, which an automaton
/// cannot match exactly.
struct RegularExpression {
    static let maximumDepth = 64
    static let maximumProgramSize = 20_000
    static let stepLimit = 4_000_000
    static let stepsPerCharacter = 64
    /// Steps between two cancellation checks.
    static let cancellationInterval = 4_096

    let pattern: String
    private let program: [Instruction]

    enum Assertion {
        case lineStart(multiline: Bool)
        case lineEnd(multiline: Bool)
        case textStart, textEnd, textEndBeforeNewline
        case wordBoundary, notWordBoundary
    }

    enum Instruction {
        case scalar(Unicode.Scalar)
        /// A scalar compared after simple case folding (the scalar is folded already).
        case foldedScalar(Unicode.Scalar)
        case any(dotAll: Bool)
        case set(ScalarSet, caseInsensitive: Bool)
        case assert(Assertion)
        case split(Int, Int)
        case jump(Int)
        case match
    }

    /// A class: ranges and named classes, possibly negated.
    struct ScalarSet {
        var ranges: [ClosedRange<UInt32>] = []
        var classes: [(NamedClass, negated: Bool)] = []
        var subsets: [ScalarSet] = []
        var negated = false

        /// Case-insensitive sets are closed over case before negation, as ICU builds them:
        /// `(?i)[^abc]` matches neither `b` nor `B`.
        func contains(_ u: Unicode.Scalar, caseInsensitive: Bool) -> Bool {
            func member(_ u: Unicode.Scalar) -> Bool {
                if ranges.contains(where: { $0.contains(u.value) }) { return true }
                if classes.contains(where: { $0.0.contains(u) != $0.negated }) { return true }
                return subsets.contains { $0.contains(u, caseInsensitive: caseInsensitive) }
            }
            var found = member(u)
            if !found && caseInsensitive {
                let lower = RegularExpression.fold(u)
                let upper = RegularExpression.upper(u)
                found = (lower != u && member(lower)) || (upper != u && member(upper))
            }
            return found != negated
        }
    }

    enum NamedClass {
        case digit, word, space
        case generalCategories([Unicode.GeneralCategory])
        case any

        func contains(_ u: Unicode.Scalar) -> Bool {
            switch self {
            case .digit: return u.properties.generalCategory == .decimalNumber
            case .word:
                if u == "_" || u == "\u{200C}" || u == "\u{200D}" { return true }
                switch u.properties.generalCategory {
                case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
                    .nonspacingMark, .spacingMark, .enclosingMark, .decimalNumber, .connectorPunctuation:
                    return true
                default: return false
                }
            case .space: return u.properties.isWhitespace
            case .generalCategories(let categories): return categories.contains(u.properties.generalCategory)
            case .any: return true
            }
        }
    }

    init(_ pattern: String, caseInsensitive: Bool) throws {
        self.pattern = pattern
        var parser = Parser(pattern: pattern, flags: Flags(caseInsensitive: caseInsensitive))
        let node = try parser.parse()
        var compiler = Compiler(pattern: pattern)
        try compiler.emit(node)
        compiler.program.append(.match)
        self.program = compiler.program
    }

    // MARK: Matching

    /// Whether the whole text matches.
    /// - Parameter isCancelled: polled every `cancellationInterval` steps; true ends the match with `.migrationCancelled`.
    /// - Throws: `.expressionEvaluation` when the step budget runs out, `.migrationCancelled` when cancelled.
    func wholeMatch(_ text: String, isCancelled: (() -> Bool)? = nil) throws -> Bool {
        let scalars = Array(text.unicodeScalars)
        var current: [Int] = []
        var next: [Int] = []
        // The position a pc was last added at, so each state is added once per position.
        var addedAt = [Int](repeating: -1, count: program.count)
        var stack: [Int] = []
        var steps = 0
        var nextCheck = RegularExpression.cancellationInterval
        let budget = RegularExpression.stepLimit + RegularExpression.stepsPerCharacter * scalars.count

        func count() throws {
            steps += 1
            if steps >= nextCheck {
                nextCheck += RegularExpression.cancellationInterval
                if steps > budget {
                    throw MigrationError(
                        .expressionEvaluation,
                        "MATCHES gave up on the regular expression '\(ExpressionParser.excerpt(pattern))' after \(budget) steps against a text of \(scalars.count) characters"
                    )
                }
                if let isCancelled = isCancelled, isCancelled() {
                    throw MigrationError(
                        .migrationCancelled,
                        "cancelled while matching the regular expression '\(ExpressionParser.excerpt(pattern))'")
                }
            }
        }

        /// Adds `pc` and every state reachable from it without reading (iteratively).
        func add(_ pc: Int, at position: Int, to list: inout [Int]) throws {
            stack.append(pc)
            while let pc = stack.popLast() {
                guard addedAt[pc] != position else { continue }
                addedAt[pc] = position
                try count()
                switch program[pc] {
                case .jump(let target): stack.append(target)
                case .split(let first, let second):
                    stack.append(second)
                    stack.append(first)
                case .assert(let assertion):
                    if holds(assertion, at: position, in: scalars) { stack.append(pc + 1) }
                default: list.append(pc)
                }
            }
        }

        try add(0, at: 0, to: &current)
        for position in 0..<scalars.count {
            if current.isEmpty { return false }
            let u = scalars[position]
            next.removeAll(keepingCapacity: true)
            for pc in current {
                try count()
                let advances: Bool
                switch program[pc] {
                case .scalar(let s): advances = s == u
                case .foldedScalar(let s): advances = s == u || RegularExpression.fold(u) == s
                case .any(let dotAll): advances = dotAll || !RegularExpression.isLineTerminator(u)
                case .set(let set, let caseInsensitive): advances = set.contains(u, caseInsensitive: caseInsensitive)
                default: advances = false
                }
                if advances { try add(pc + 1, at: position + 1, to: &next) }
            }
            swap(&current, &next)
        }
        return current.contains { if case .match = program[$0] { return true } else { return false } }
    }

    private func holds(_ assertion: Assertion, at i: Int, in s: [Unicode.Scalar]) -> Bool {
        let n = s.count
        switch assertion {
        case .textStart: return i == 0
        case .textEnd: return i == n
        case .textEndBeforeNewline: return i == n || (i == n - 1 && RegularExpression.isLineTerminator(s[i]))
        case .lineStart(let multiline):
            return i == 0 || (multiline && RegularExpression.isLineTerminator(s[i - 1]) && i < n)
        case .lineEnd(let multiline):
            if i == n || (i == n - 1 && RegularExpression.isLineTerminator(s[i])) { return true }
            return multiline && RegularExpression.isLineTerminator(s[i])
        case .wordBoundary, .notWordBoundary:
            let before = i > 0 && NamedClass.word.contains(s[i - 1])
            let after = i < n && NamedClass.word.contains(s[i])
            return (before != after) == (assertion == .wordBoundary)
        }
    }

    static func isLineTerminator(_ u: Unicode.Scalar) -> Bool {
        switch u.value {
        case 0x0A, 0x0B, 0x0C, 0x0D, 0x85, 0x2028, 0x2029: return true
        default: return false
        }
    }

    /// Simple case folding to lower case (one scalar to one scalar).
    static func fold(_ u: Unicode.Scalar) -> Unicode.Scalar {
        if u.isASCII { return u.value >= 65 && u.value <= 90 ? Unicode.Scalar(u.value + 32)! : u }
        let lower = u.properties.lowercaseMapping.unicodeScalars
        return lower.count == 1 ? lower[lower.startIndex] : u
    }

    static func upper(_ u: Unicode.Scalar) -> Unicode.Scalar {
        if u.isASCII { return u.value >= 97 && u.value <= 122 ? Unicode.Scalar(u.value - 32)! : u }
        let upper = u.properties.uppercaseMapping.unicodeScalars
        return upper.count == 1 ? upper[upper.startIndex] : u
    }
}

extension RegularExpression.Assertion: Equatable {}

// MARK: Parsing

extension RegularExpression {
    struct Flags {
        var caseInsensitive = false
        var dotAll = false
        var multiline = false
    }

    indirect enum Node {
        case empty
        case instruction(Instruction)
        case concatenation([Node])
        case alternation([Node])
        case repetition(Node, min: Int, max: Int?)
    }

    struct Parser {
        let pattern: String
        let scalars: [Unicode.Scalar]
        var position = 0
        var flags: Flags
        var depth = 0

        init(pattern: String, flags: Flags) {
            self.pattern = pattern
            self.scalars = Array(pattern.unicodeScalars)
            self.flags = flags
        }

        func error(_ message: String, at offset: Int? = nil) -> MigrationError {
            MigrationError(
                .expressionEvaluation,
                "MATCHES has an invalid regular expression '\(ExpressionParser.excerpt(pattern))': \(message) at character \(offset ?? position)"
            )
        }

        var peek: Unicode.Scalar? { position < scalars.count ? scalars[position] : nil }

        mutating func parse() throws -> Node {
            let node = try alternation()
            if position < scalars.count { throw error("unbalanced ')'") }
            return node
        }

        mutating func alternation() throws -> Node {
            depth += 1
            defer { depth -= 1 }
            guard depth <= RegularExpression.maximumDepth else {
                throw error("groups nest deeper than the limit of \(RegularExpression.maximumDepth) levels")
            }
            var branches = [try concatenation()]
            while peek == "|" {
                position += 1
                branches.append(try concatenation())
            }
            return branches.count == 1 ? branches[0] : .alternation(branches)
        }

        mutating func concatenation() throws -> Node {
            var items: [Node] = []
            while let c = peek, c != "|", c != ")" {
                let start = position
                guard let atom = try atom() else { continue }
                items.append(try quantified(atom, start: start))
            }
            return items.count == 1 ? items[0] : .concatenation(items)
        }

        mutating func quantified(_ atom: Node, start: Int) throws -> Node {
            guard let c = peek else { return atom }
            var min = 0
            var max: Int? = nil
            switch c {
            case "*": position += 1
            case "+":
                min = 1
                position += 1
            case "?":
                max = 1
                position += 1
            case "{": (min, max) = try counted()
            default: return atom
            }
            if peek == "?" {
                position += 1
            }  // lazy: the same answer for a whole match
            else if peek == "+" {
                throw error("possessive quantifiers are not supported")
            }
            if let c = peek, c == "*" || c == "+" || c == "?" || c == "{" {
                throw error("a quantifier after a quantifier")
            }
            return .repetition(atom, min: min, max: max)
        }

        /// `{n}`, `{n,}`, `{n,m}` (ICU has no literal `{`).
        mutating func counted() throws -> (Int, Int?) {
            let start = position
            position += 1
            func number() -> Int? {
                var value: Int? = nil
                while let c = peek, c.value >= 48 && c.value <= 57 {
                    value = Swift.min((value ?? 0) * 10 + Int(c.value - 48), 1_000_000)
                    position += 1
                }
                return value
            }
            let malformed = error("a repetition {n}, {n,} or {n,m} (a literal brace is written '\\{')", at: start)
            guard let low = number() else { throw malformed }
            var high: Int? = low
            if peek == "," {
                position += 1
                high = number()
            }
            guard peek == "}" else { throw malformed }
            position += 1
            if let high = high, high < low {
                throw error("a repetition {\(low),\(high)} whose maximum is below its minimum", at: start)
            }
            return (low, high)
        }

        mutating func atom() throws -> Node? {
            guard let c = peek else { return nil }
            let start = position
            position += 1
            switch c {
            case "(": return try group(start)
            case ".": return .instruction(.any(dotAll: flags.dotAll))
            case "^": return .instruction(.assert(.lineStart(multiline: flags.multiline)))
            case "$": return .instruction(.assert(.lineEnd(multiline: flags.multiline)))
            case "[": return .instruction(.set(try set(start), caseInsensitive: flags.caseInsensitive))
            case "\\": return node(try escape(start, inSet: false))
            case "*", "+", "?", "{": throw error("nothing to repeat before '\(c)'", at: start)
            case "}": throw error("a '}' without its '{' (a literal brace is written '\\}')", at: start)
            default: return node(.scalar(c))
            }
        }

        enum Escaped {
            case scalar(Unicode.Scalar)
            case named(NamedClass, negated: Bool)
            case assertion(Assertion)
            case quoted([Unicode.Scalar])
        }

        func node(_ escaped: Escaped) -> Node {
            switch escaped {
            case .scalar(let u): return literal(u)
            case .named(let named, let negated):
                var set = ScalarSet()
                set.classes = [(named, negated)]
                return .instruction(.set(set, caseInsensitive: flags.caseInsensitive))
            case .assertion(let a): return .instruction(.assert(a))
            case .quoted(let items): return .concatenation(items.map(literal))
            }
        }

        func literal(_ u: Unicode.Scalar) -> Node {
            if flags.caseInsensitive {
                let folded = RegularExpression.fold(u)
                if folded != u || RegularExpression.upper(u) != u { return .instruction(.foldedScalar(folded)) }
            }
            return .instruction(.scalar(u))
        }

        mutating func group(_ start: Int) throws -> Node? {
            let saved = flags
            if peek == "?" {
                position += 1
                switch peek {
                case ":": position += 1
                case "<"
                where position + 1 < scalars.count && scalars[position + 1] != "=" && scalars[position + 1] != "!":
                    // A named group: the name is skipped, MATCHES captures nothing.
                    while let c = peek, c != ">" { position += 1 }
                    guard peek == ">" else { throw error("an unterminated group name", at: start) }
                    position += 1
                case "=", "!", "<": throw error("lookaround groups are not supported", at: start)
                case ">": throw error("atomic groups are not supported", at: start)
                case "#":
                    while let c = peek, c != ")" { position += 1 }
                    guard peek == ")" else { throw error("an unterminated comment", at: start) }
                    position += 1
                    return nil
                default:
                    // Flags: (?ism-ism) for the rest of the enclosing group, (?ism-ism:…) for this group.
                    var on = true
                    while let c = peek, c != ")" && c != ":" {
                        switch c {
                        case "i": flags.caseInsensitive = on
                        case "s": flags.dotAll = on
                        case "m": flags.multiline = on
                        case "-": on = false
                        default: throw error("the unsupported flag '\(c)'")
                        }
                        position += 1
                    }
                    guard let end = peek else { throw error("an unterminated group", at: start) }
                    position += 1
                    if end == ")" { return nil }  // flags stay on to the end of the enclosing group
                }
            }
            let inner = try alternation()
            guard peek == ")" else { throw error("a '(' without its ')'", at: start) }
            position += 1
            // Flags set inside the group, scoped or not, end with it.
            flags = saved
            return inner
        }

        mutating func escape(_ start: Int, inSet: Bool) throws -> Escaped {
            guard let c = peek else { throw error("a '\\' at the end", at: start) }
            position += 1
            if let control = EscapeSequence.control(c) { return .scalar(control) }
            switch c {
            case "e": return .scalar("\u{1B}")
            case "d": return .named(.digit, negated: false)
            case "D": return .named(.digit, negated: true)
            case "w": return .named(.word, negated: false)
            case "W": return .named(.word, negated: true)
            case "s": return .named(.space, negated: false)
            case "S": return .named(.space, negated: true)
            case "p", "P": return .named(try property(start), negated: c == "P")
            case "0":
                var value: UInt32 = 0
                var digits = 0
                while digits < 3, let d = peek, let v = Character(d).hexDigitValue, v < 8 {
                    value = value * 8 + UInt32(v)
                    position += 1
                    digits += 1
                }
                return .scalar(Unicode.Scalar(value) ?? "\0")
            case "x", "u", "U":
                return .scalar(try hexScalar(c, start))
            case "Q":
                var items: [Unicode.Scalar] = []
                while position < scalars.count {
                    if scalars[position] == "\\" && position + 1 < scalars.count && scalars[position + 1] == "E" {
                        position += 2
                        return .quoted(items)
                    }
                    items.append(scalars[position])
                    position += 1
                }
                return .quoted(items)
            case "E": return inSet ? .scalar("E") : .quoted([])
            case "b" where !inSet: return .assertion(.wordBoundary)
            case "B" where !inSet: return .assertion(.notWordBoundary)
            case "A" where !inSet: return .assertion(.textStart)
            case "z" where !inSet: return .assertion(.textEnd)
            case "Z" where !inSet: return .assertion(.textEndBeforeNewline)
            case "1"..."9": throw error("backreferences are not supported", at: start)
            default:
                if c.properties.isAlphabetic || c.properties.numericType != nil {
                    throw error("the unsupported escape '\\\(c)'", at: start)
                }
                return .scalar(c)
            }
        }

        mutating func hexScalar(_ kind: Unicode.Scalar, _ start: Int) throws -> Unicode.Scalar {
            let braced = kind == "x" && peek == "{"
            if braced { position += 1 }
            let width = braced ? 8 : EscapeSequence.width(Character(kind))
            let (value, count) = EscapeSequence.digits(in: scalars, at: position, maximum: width) {
                Character($0).hexDigitValue
            }
            position += count
            if braced {
                guard count > 0, peek == "}" else { throw error("hexadecimal digits and '}' after '\\x{'", at: start) }
                position += 1
            } else if count < width {
                throw error("\(width) hexadecimal digits after '\\\(kind)'", at: start)
            }
            guard let scalar = Unicode.Scalar(value) else {
                throw error("a code point that is not a Unicode scalar", at: start)
            }
            return scalar
        }

        mutating func property(_ start: Int) throws -> NamedClass {
            var name = ""
            if peek == "{" {
                position += 1
                while let c = peek, c != "}" {
                    name.unicodeScalars.append(c)
                    position += 1
                }
                guard peek == "}" else { throw error("a '}' after the property name", at: start) }
                position += 1
            } else if let c = peek {
                name.unicodeScalars.append(c)
                position += 1
            }
            if let value = name.firstIndex(of: "=") { name = String(name[name.index(after: value)...]) }
            let key = name.replacingAll(" ", "").replacingAll("_", "").lowercased()
            if let named = RegularExpression.properties[key] { return named }
            throw error("the unsupported property '\(name)'", at: start)
        }

        /// A bracketed class; `position` is just after `[`.
        mutating func set(_ start: Int) throws -> ScalarSet {
            depth += 1
            defer { depth -= 1 }
            guard depth <= RegularExpression.maximumDepth else {
                throw error("classes nest deeper than the limit of \(RegularExpression.maximumDepth) levels")
            }
            var set = ScalarSet()
            if peek == "^" {
                set.negated = true
                position += 1
            }
            var first = true
            while true {
                guard let c = peek else { throw error("a '[' without its ']'", at: start) }
                if c == "]" && !first {
                    position += 1
                    return set
                }
                first = false
                let itemStart = position
                position += 1
                var low: Unicode.Scalar
                switch c {
                case "[":
                    if peek == ":" {
                        // [:alpha:], [:^alpha:]
                        var name = ""
                        position += 1
                        var negated = false
                        if peek == "^" {
                            negated = true
                            position += 1
                        }
                        while let n = peek, n != ":" {
                            name.unicodeScalars.append(n)
                            position += 1
                        }
                        guard peek == ":", position + 1 < scalars.count, scalars[position + 1] == "]" else {
                            throw error("a ':]' after the class name", at: itemStart)
                        }
                        position += 2
                        guard let named = RegularExpression.properties[name.lowercased()] else {
                            throw error("the unsupported class '[:\(name):]'", at: itemStart)
                        }
                        set.classes.append((named, negated))
                    } else {
                        set.subsets.append(try self.set(itemStart))
                    }
                    continue
                case "&" where peek == "&",
                    "-" where peek == "-" && position + 1 < scalars.count && scalars[position + 1] == "[":
                    throw error("set operations ('&&', '--') are not supported", at: itemStart)
                case "\\":
                    switch try escape(itemStart, inSet: true) {
                    case .scalar(let u): low = u
                    case .named(let named, let negated):
                        set.classes.append((named, negated))
                        continue
                    case .quoted(let items):
                        set.ranges += items.map { $0.value...$0.value }
                        continue
                    case .assertion: throw error("an anchor inside a class", at: itemStart)
                    }
                default: low = c
                }
                if peek == "-", position + 1 < scalars.count, scalars[position + 1] != "]" {
                    position += 1
                    guard var high = peek else { throw error("a '[' without its ']'", at: start) }
                    let highStart = position
                    position += 1
                    if high == "\\" {
                        guard case .scalar(let u) = try escape(highStart, inSet: true) else {
                            throw error("a character after '-' in a range", at: highStart)
                        }
                        high = u
                    } else if high == "[" {
                        throw error("a character after '-' in a range", at: highStart)
                    }
                    guard low.value <= high.value else {
                        throw error("a range whose end comes before its start", at: itemStart)
                    }
                    set.ranges.append(low.value...high.value)
                } else {
                    set.ranges.append(low.value...low.value)
                }
            }
        }
    }

    static let properties: [String: NamedClass] = {
        typealias C = Unicode.GeneralCategory
        let letters: [C] = [.uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter]
        let marks: [C] = [.nonspacingMark, .spacingMark, .enclosingMark]
        let numbers: [C] = [.decimalNumber, .letterNumber, .otherNumber]
        let punctuation: [C] = [
            .connectorPunctuation, .dashPunctuation, .openPunctuation, .closePunctuation,
            .initialPunctuation, .finalPunctuation, .otherPunctuation,
        ]
        let symbols: [C] = [.mathSymbol, .currencySymbol, .modifierSymbol, .otherSymbol]
        let separators: [C] = [.spaceSeparator, .lineSeparator, .paragraphSeparator]
        let others: [C] = [.control, .format, .surrogate, .privateUse, .unassigned]
        return [
            "l": .generalCategories(letters), "letter": .generalCategories(letters),
            "alpha": .generalCategories(letters),
            "lu": .generalCategories([.uppercaseLetter]), "upper": .generalCategories([.uppercaseLetter]),
            "ll": .generalCategories([.lowercaseLetter]), "lower": .generalCategories([.lowercaseLetter]),
            "lt": .generalCategories([.titlecaseLetter]), "lm": .generalCategories([.modifierLetter]),
            "lo": .generalCategories([.otherLetter]),
            "m": .generalCategories(marks), "mark": .generalCategories(marks),
            "mn": .generalCategories([.nonspacingMark]),
            "n": .generalCategories(numbers), "number": .generalCategories(numbers),
            "nd": .digit, "digit": .digit, "nl": .generalCategories([.letterNumber]),
            "no": .generalCategories([.otherNumber]),
            "p": .generalCategories(punctuation), "punct": .generalCategories(punctuation),
            "punctuation": .generalCategories(punctuation),
            "s": .generalCategories(symbols), "symbol": .generalCategories(symbols),
            "sm": .generalCategories([.mathSymbol]),
            "sc": .generalCategories([.currencySymbol]),
            "z": .generalCategories(separators), "separator": .generalCategories(separators),
            "zs": .generalCategories([.spaceSeparator]),
            "c": .generalCategories(others), "other": .generalCategories(others), "cc": .generalCategories([.control]),
            "cntrl": .generalCategories([.control]),
            "space": .space, "whitespace": .space, "alnum": .generalCategories(letters + [.decimalNumber]),
            "word": .word, "any": .any,
        ]
    }()
}

extension String {
    fileprivate func replacingAll(_ target: Character, _ replacement: String) -> String {
        var out = ""
        for c in self { if c == target { out += replacement } else { out.append(c) } }
        return out
    }
}

// MARK: Compiling

extension RegularExpression {
    struct Compiler {
        let pattern: String
        var program: [Instruction] = []

        mutating func append(_ instruction: Instruction) throws {
            guard program.count < RegularExpression.maximumProgramSize else {
                throw MigrationError(
                    .expressionEvaluation,
                    "MATCHES refuses the regular expression '\(ExpressionParser.excerpt(pattern))': it unrolls to more than \(RegularExpression.maximumProgramSize) states"
                )
            }
            program.append(instruction)
        }

        mutating func emit(_ node: Node) throws {
            switch node {
            case .empty: break
            case .instruction(let instruction): try append(instruction)
            case .concatenation(let items): for item in items { try emit(item) }
            case .alternation(let branches):
                var jumps: [Int] = []
                for (i, branch) in branches.enumerated() {
                    if i < branches.count - 1 {
                        let split = program.count
                        try append(.split(split + 1, -1))
                        try emit(branch)
                        jumps.append(program.count)
                        try append(.jump(-1))
                        program[split] = .split(split + 1, program.count)
                    } else {
                        try emit(branch)
                    }
                }
                for j in jumps { program[j] = .jump(program.count) }
            case .repetition(let body, let min, let max):
                let before = program.count
                for _ in 0..<min {
                    try emit(body)
                    if program.count == before { return }  // an empty body: one copy is all copies
                }
                if let max = max {
                    // Each optional copy: split(body, end).
                    var splits: [Int] = []
                    for _ in min..<Swift.max(min, max) {
                        splits.append(program.count)
                        try append(.split(program.count + 1, -1))
                        try emit(body)
                    }
                    for s in splits { program[s] = .split(s + 1, program.count) }
                } else {
                    let loop = program.count
                    try append(.split(loop + 1, -1))
                    try emit(body)
                    try append(.jump(loop))
                    program[loop] = .split(loop + 1, program.count)
                }
            }
        }
    }
}
