/// Parses NSExpression and NSPredicate format text into `ValueExpression` and `FilterPredicate`.
///
/// Grammar (lowest precedence first), as Core Data reads it:
///   predicate   := and (("OR" | "||") and)*
///   and         := not (("AND" | "&&") not)*
///   not         := ("NOT" | "!") not | "(" predicate ")" | TRUEPREDICATE | FALSEPREDICATE | comparison
///   comparison  := [ANY | SOME | ALL | NONE] expression operator ["[cdn]"] expression
///   expression  := term (("+" | "-") term)*
///   term        := unary (("*" | "/") unary)*
///   unary       := "-" unary | power
///   power       := postfix ["**" unary]
///   postfix     := primary ("." key | "[" index "]")*
/// Format arguments (`%@`, `%K`, `%d`, `%f`) are substituted while parsing; predicate `$variables`
/// found in `variables` become constants.
///
/// Nesting is limited to `maximumDepth` levels, far below what any thread's stack holds, so that
/// hostile text gives an `.expressionSyntax` error instead of overflowing the stack. Every step
/// that nests counts one level: a parenthesis, `{…}`, a function's or SUBQUERY's arguments, NOT,
/// unary minus, `**`, an index `[…]`, and each operator of a `+ - * /` chain (such a chain builds
/// a left-nested tree). AND and OR lists, `{…}` members and key paths are flat and do not count.
/// Because the parsed tree is never deeper than the limit, everything that walks it recursively
/// (evaluation, the SQL translation, mapping checks, printing, equality, freeing) is bounded too.
package struct ExpressionParser {
    /// The deepest nesting the parser accepts (see the type's documentation).
    package static let maximumDepth = 64
    /// Words that are keywords wherever they appear (case-insensitive); a key spelled like one is written `#key`.
    static let reservedWords: Set<String> = [
        "AND", "OR", "NOT", "IN", "LIKE", "MATCHES", "BEGINSWITH", "ENDSWITH", "CONTAINS", "BETWEEN",
        "ANY", "ALL", "NONE", "SOME", "TRUEPREDICATE", "FALSEPREDICATE", "NIL", "NULL", "YES", "NO", "TRUE", "FALSE",
        "SELF", "FUNCTION", "SUBQUERY", "CAST", "FETCH", "FIRST", "LAST", "SIZE", "ANYKEY",
    ]

    /// NSExpression's built-in functions and how many arguments they take (nil: any number, read as one collection).
    static let builtinArity: [String: Int?] = [
        "sum:": nil, "count:": nil, "min:": nil, "max:": nil, "average:": nil, "median:": nil, "mode:": nil,
        "stddev:": nil,
        "abs:": 1, "sqrt:": 1, "log:": 1, "ln:": 1, "exp:": 1, "floor:": 1, "ceiling:": 1, "trunc:": 1,
        "uppercase:": 1, "lowercase:": 1, "length:": 1, "distinct:": nil, "noindex:": 1, "onesComplement:": 1,
        "add:to:": 2, "from:subtract:": 2, "multiply:by:": 2, "divide:by:": 2, "modulus:by:": 2, "raise:toPower:": 2,
        "bitwiseAnd:with:": 2, "bitwiseOr:with:": 2, "bitwiseXor:with:": 2, "leftshift:by:": 2, "rightshift:by:": 2,
        "castObject:toType:": 2, "now": 0,
        // Derived attributes' case- and diacritic-insensitive form (NSDerivedAttributeDescription).
        "canonical:": 1,
    ]

    private let text: String
    /// The text as messages quote it, cut once: "(" tries and discards errors many times.
    private let quotedText: String
    private let tokens: [ExpressionToken]
    private var position = 0
    private let arguments: [Value]
    private var argumentIndex = 0
    private let variables: [String: Value]
    /// SUBQUERY variables in scope: never substituted.
    private var boundVariables: [String] = []
    /// The current nesting level (see `maximumDepth`).
    private var depth = 0

    private init(text: String, arguments: [Value], variables: [String: Value]) throws {
        self.text = text
        self.quotedText = ExpressionParser.excerpt(text)
        self.tokens = try ExpressionLexer.tokenize(text)
        self.arguments = arguments
        self.variables = variables
    }

    package static func parseExpression(_ text: String, arguments: [Value] = [], variables: [String: Value] = [:])
        throws -> ValueExpression
    {
        var parser = try ExpressionParser(text: text, arguments: arguments, variables: variables)
        let expression = try parser.expression()
        try parser.expectEnd()
        try parser.expectEveryArgumentUsed()
        return expression
    }

    package static func parsePredicate(_ text: String, arguments: [Value] = [], variables: [String: Value] = [:]) throws
        -> FilterPredicate
    {
        var parser = try ExpressionParser(text: text, arguments: arguments, variables: variables)
        let predicate = try parser.predicate()
        try parser.expectEnd()
        try parser.expectEveryArgumentUsed()
        return predicate
    }

    // MARK: Tokens

    private var current: ExpressionToken { tokens[min(position, tokens.count - 1)] }

    private func peekKind(_ ahead: Int) -> ExpressionToken.Kind {
        return tokens[min(position + ahead, tokens.count - 1)].kind
    }

    private mutating func advance() { if position < tokens.count - 1 { position += 1 } }

    private func isSymbol(_ s: String) -> Bool { current.kind == .symbol(s) }

    /// The upper-cased keyword the current token spells, if it is a plain identifier.
    private var keyword: String? {
        if case .identifier(let name) = current.kind { return name.uppercased() }
        return nil
    }

    private func isKeyword(_ word: String) -> Bool { keyword == word }

    private func error(_ expected: String, at token: ExpressionToken? = nil) -> MigrationError {
        let t = token ?? current
        return MigrationError(
            .expressionSyntax,
            "expected \(expected) but found \(t.display) at character \(t.offset) in '\(quotedText)'", offset: t.offset,
            byteOffset: t.byteOffset)
    }

    /// The text as error messages quote it: long texts are cut short.
    static func excerpt(_ text: String) -> String {
        let limit = 200
        return text.count <= limit ? text : String(text.prefix(limit)) + "…"
    }

    /// Enters one more nesting level; the caller restores `depth` when it leaves.
    private mutating func nest() throws {
        depth += 1
        guard depth <= ExpressionParser.maximumDepth else {
            let t = current
            throw MigrationError(
                .expressionSyntax,
                "expression nests deeper than the limit of \(ExpressionParser.maximumDepth) levels at character \(t.offset) in '\(quotedText)' (each parenthesis, function, aggregate, NOT, unary minus, index and each operator of a + - * / chain counts one level)",
                offset: t.offset, byteOffset: t.byteOffset)
        }
    }

    private mutating func expectSymbol(_ s: String, _ what: String? = nil) throws {
        guard isSymbol(s) else { throw error(what ?? "'\(s)'") }
        advance()
    }

    private func expectEnd() throws {
        guard current.kind == .end else { throw error("end of text") }
    }

    // MARK: Predicates

    private mutating func predicate() throws -> FilterPredicate {
        let level = depth
        defer { depth = level }
        try nest()
        var items = [try andPredicate()]
        while isKeyword("OR") || isSymbol("||") {
            advance()
            items.append(try andPredicate())
        }
        if items.count == 1 { return items[0] }
        return .or(
            items.flatMap { item -> [FilterPredicate] in
                if case .or(let inner) = item { return inner } else { return [item] }
            })
    }

    private mutating func andPredicate() throws -> FilterPredicate {
        var items = [try notPredicate()]
        while isKeyword("AND") || isSymbol("&&") {
            advance()
            items.append(try notPredicate())
        }
        if items.count == 1 { return items[0] }
        return .and(
            items.flatMap { item -> [FilterPredicate] in
                if case .and(let inner) = item { return inner } else { return [item] }
            })
    }

    private mutating func notPredicate() throws -> FilterPredicate {
        let level = depth
        defer { depth = level }
        try nest()
        if isKeyword("NOT") || isSymbol("!") {
            advance()
            return .not(try notPredicate())
        }
        if isKeyword("TRUEPREDICATE") {
            advance()
            return .constant(true)
        }
        if isKeyword("FALSEPREDICATE") {
            advance()
            return .constant(false)
        }
        if isSymbol("(") {
            // "(" opens either a nested predicate or an expression such as "(a + b) * 2 > 3":
            // try the predicate first and fall back, reporting whichever attempt got further.
            // Both tries can reach a nested SUBQUERY's predicate, so nested SUBQUERYs in
            // parentheses double the work per level; the depth limit keeps that small.
            let saved = (position, argumentIndex)
            do {
                advance()
                let inner = try predicate()
                try expectSymbol(")", "')' or a logical operator")
                return inner
            } catch let first as MigrationError {
                let reached = first.offset ?? 0
                (position, argumentIndex) = saved
                do {
                    return try comparison()
                } catch let second as MigrationError {
                    throw (second.offset ?? 0) >= reached ? second : first
                }
            }
        }
        return try comparison()
    }

    private mutating func comparison() throws -> FilterPredicate {
        var modifier = FilterPredicate.ComparisonModifier.direct
        switch keyword {
        case "ANY", "SOME":
            modifier = .any
            advance()
        case "ALL":
            modifier = .all
            advance()
        case "NONE":
            modifier = .none
            advance()
        default: break
        }
        let lhs = try expression()
        let opToken = current
        let op: FilterPredicate.ComparisonOperator
        switch current.kind {
        case .symbol("=="), .symbol("="): op = .equal
        case .symbol("!="), .symbol("<>"): op = .notEqual
        case .symbol("<"): op = .less
        case .symbol("<="), .symbol("=<"): op = .lessOrEqual
        case .symbol(">"): op = .greater
        case .symbol(">="), .symbol("=>"): op = .greaterOrEqual
        case .identifier(let word):
            switch word.uppercased() {
            case "MATCHES": op = .matches
            case "LIKE": op = .like
            case "BEGINSWITH": op = .beginsWith
            case "ENDSWITH": op = .endsWith
            case "CONTAINS": op = .contains
            case "IN": op = .in
            case "BETWEEN": op = .between
            default: throw error("a comparison operator")
            }
        default: throw error("a comparison operator")
        }
        advance()
        var options: FilterPredicate.ComparisonOptions = []
        if isSymbol("["), case .identifier(let letters) = peekKind(1), peekKind(2) == .symbol("]") {
            for letter in letters.lowercased() {
                switch letter {
                case "c": options.insert(.caseInsensitive)
                case "d": options.insert(.diacriticInsensitive)
                case "n": options.insert(.normalized)
                case "l": break  // locale-sensitive: accepted, comparisons are not localised here
                default: throw error("comparison options made of c, d, n", at: tokens[position + 1])
                }
            }
            advance()
            advance()
            advance()
        }
        let rhsToken = current
        let rhs = try expression()
        if op == .between, case .aggregate(let items) = rhs, items.count != 2 {
            throw error("two values {low, high} after BETWEEN", at: rhsToken)
        }
        _ = opToken
        return .comparison(FilterPredicate.Comparison(lhs, op, rhs, options: options, modifier: modifier))
    }

    // MARK: Expressions

    private mutating func expression() throws -> ValueExpression {
        let level = depth
        defer { depth = level }
        try nest()
        var lhs = try term()
        while true {
            let op: ValueExpression.ArithmeticOperator
            if isSymbol("+") { op = .add } else if isSymbol("-") { op = .subtract } else { return lhs }
            advance()
            try nest()  // the chain nests to the left
            lhs = .binary(op, lhs, try term())
        }
    }

    private mutating func term() throws -> ValueExpression {
        let level = depth
        defer { depth = level }
        var lhs = try unary()
        while true {
            let op: ValueExpression.ArithmeticOperator
            if isSymbol("*") { op = .multiply } else if isSymbol("/") { op = .divide } else { return lhs }
            advance()
            try nest()  // the chain nests to the left
            lhs = .binary(op, lhs, try unary())
        }
    }

    private mutating func unary() throws -> ValueExpression {
        let level = depth
        defer { depth = level }
        if isSymbol("-") || isSymbol("+") { try nest() }
        if isSymbol("-") {
            advance()
            let operand = try unary()
            // Fold "-3" into a constant so that literals stay literals.
            switch operand {
            case .constant(.integer(let i)) where i != Int64.min: return .constant(.integer(-i))
            case .constant(.double(let d)): return .constant(.double(-d))
            default: return .negation(operand)
            }
        }
        if isSymbol("+") {
            advance()
            return try unary()
        }
        return try power()
    }

    private mutating func power() throws -> ValueExpression {
        let base = try postfix()
        if isSymbol("**") {
            let level = depth
            defer { depth = level }
            try nest()
            advance()
            return .binary(.power, base, try unary())
        }
        return base
    }

    private mutating func postfix() throws -> ValueExpression {
        let level = depth
        defer { depth = level }
        var result = try primary()
        while true {
            if isSymbol(".") {
                // Consecutive keys extend one key path.
                var base = result
                var keys: [String] = []
                if case .keyPath(let b, let k) = result {
                    (base, keys) = (b, k)
                } else {
                    try nest()  // a key path on an index or function result nests
                }
                while isSymbol(".") {
                    advance()
                    keys += try self.key()
                }
                result = .keyPath(base, keys)
            } else if isSymbol("[") {
                try nest()  // indexes chain to the left
                advance()
                let index: ValueExpression
                if let word = keyword, ["FIRST", "LAST", "SIZE"].contains(word) {
                    index = .constant(.string(word))
                    advance()
                } else {
                    index = try expression()
                }
                try expectSymbol("]", "']' after the index")
                result = .index(result, index)
            } else {
                return result
            }
        }
    }

    /// A key after ".": any identifier (keywords included), `#key`, `@operator` or `%K`.
    private mutating func key() throws -> [String] {
        switch current.kind {
        case .identifier(let name), .escapedIdentifier(let name):
            advance()
            return [name]
        case .format("K"):
            let token = current
            advance()
            return try keyPathArgument(token)
        default:
            throw error("a key after '.'")
        }
    }

    private mutating func nextArgument(_ token: ExpressionToken) throws -> Value {
        guard argumentIndex < arguments.count else {
            throw error(
                "format argument \(argumentIndex + 1) for \(token.display) (only \(arguments.count) given)", at: token)
        }
        defer { argumentIndex += 1 }
        return arguments[argumentIndex]
    }

    /// More format arguments than specifiers is a mistake (Foundation ignores the extra ones).
    private func expectEveryArgumentUsed() throws {
        guard argumentIndex < arguments.count else { return }
        throw MigrationError(
            .expressionSyntax,
            "format argument \(argumentIndex + 1) of \(arguments.count) is left over: '\(quotedText)' has \(argumentIndex) format specifier\(argumentIndex == 1 ? "" : "s") (%@, %K, %d, %f)"
        )
    }

    private mutating func keyPathArgument(_ token: ExpressionToken) throws -> [String] {
        let position = argumentIndex + 1
        let value = try nextArgument(token)
        guard case .string(let path) = value, !path.isEmpty else {
            throw error(
                "a key path string as format argument \(position) for '%K', not \(value.typeName) '\(value)'", at: token
            )
        }
        return path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    }

    private mutating func argumentList(close: String) throws -> [ValueExpression] {
        var items: [ValueExpression] = []
        if isSymbol(close) {
            advance()
            return items
        }
        while true {
            items.append(try expression())
            if isSymbol(",") {
                advance()
                continue
            }
            try expectSymbol(close, "',' or '\(close)'")
            return items
        }
    }

    private mutating func primary() throws -> ValueExpression {
        let token = current
        switch token.kind {
        case .string(let s):
            advance()
            return .constant(.string(s))
        case .integer(let i):
            advance()
            return .constant(.integer(i))
        case .double(let d):
            advance()
            return .constant(.double(d))
        case .variable(let name):
            advance()
            if !boundVariables.contains(name), let value = variables[name] { return .constant(value) }
            return .variable(name)
        case .format(let conversion):
            advance()
            return try formatArgument(conversion, token)
        case .symbol("("):
            advance()
            let inner = try expression()
            try expectSymbol(")", "')' or an operator")
            return inner
        case .symbol("{"):
            try nest()
            defer { depth -= 1 }
            advance()
            return .aggregate(try argumentList(close: "}"))
        case .escapedIdentifier(let name):
            advance()
            return .keyPath(.evaluatedObject, [name])
        case .identifier(let name):
            return try identifierExpression(name, token)
        default:
            throw error("an expression")
        }
    }

    /// A substituted format argument (`%@`, `%K`, `%d`, `%f`); apart from `primary` to keep its stack frame small.
    private mutating func formatArgument(_ conversion: Character, _ token: ExpressionToken) throws -> ValueExpression {
        switch conversion {
        case "K": return .keyPath(.evaluatedObject, try keyPathArgument(token))
        case "d":
            let position = argumentIndex + 1
            let value = try nextArgument(token)
            guard let i = value.integerValue else {
                throw error(
                    "a number as format argument \(position) for '%d', not \(value.typeName) '\(value)'", at: token)
            }
            return .constant(.integer(i))
        case "f":
            let position = argumentIndex + 1
            let value = try nextArgument(token)
            guard let d = value.doubleValue else {
                throw error(
                    "a number as format argument \(position) for '%f', not \(value.typeName) '\(value)'", at: token)
            }
            return .constant(.double(d))
        default:
            return .constant(try nextArgument(token))
        }
    }

    // The forms below that nest have functions of their own, so that each level of nesting costs
    // only their small frames on the stack, not the frame of every case of the switch.
    private mutating func identifierExpression(_ name: String, _ token: ExpressionToken) throws -> ValueExpression {
        let upper = name.uppercased()
        switch upper {
        case "NIL", "NULL":
            advance()
            return .constant(.null)
        case "YES", "TRUE":
            advance()
            return .constant(.bool(true))
        case "NO", "FALSE":
            advance()
            return .constant(.bool(false))
        case "SELF":
            advance()
            return .evaluatedObject
        case "FUNCTION": return try functionExpression()
        case "CAST", "FETCH": return try castOrFetch(upper, token)
        case "SUBQUERY": return try subqueryExpression()
        default: break
        }
        if ExpressionParser.reservedWords.contains(upper) { throw error("an expression") }
        advance()
        // NSExpression's functions: "sum:(…)", "add:to:(…, …)", "now()".
        if isSymbol(":") || isSymbol("(") { return try builtinFunction(name, token) }
        return .keyPath(.evaluatedObject, [name])
    }

    /// `FUNCTION(target, "selector:", arguments…)`.
    private mutating func functionExpression() throws -> ValueExpression {
        try nest()
        defer { depth -= 1 }
        advance()
        try expectSymbol("(", "'(' after FUNCTION")
        let target = try expression()
        try expectSymbol(",", "',' and a selector string after the FUNCTION target")
        let selectorToken = current
        let selector: String
        switch current.kind {
        case .string(let s): selector = s
        case .format("@"):
            guard case .string(let s) = try nextArgument(selectorToken) else {
                throw error("a selector string", at: selectorToken)
            }
            selector = s
        default: throw error("a selector string")
        }
        advance()
        guard !selector.isEmpty, !selector.contains(" ") else { throw error("a selector name", at: selectorToken) }
        var args: [ValueExpression] = []
        if isSymbol(",") {
            advance()
            args = try argumentList(close: ")")
        } else {
            try expectSymbol(")", "',' or ')'")
        }
        let colons = selector.filter { $0 == ":" }.count
        guard colons == args.count else {
            throw error(
                "\(colons) argument\(colons == 1 ? "" : "s") for selector '\(selector)' (one per ':'), not \(args.count)",
                at: selectorToken)
        }
        return .function(target, selector, args)
    }

    /// `CAST(value, "Type")` or `FETCH(request, context, countOnly)`.
    private mutating func castOrFetch(_ upper: String, _ token: ExpressionToken) throws -> ValueExpression {
        try nest()
        defer { depth -= 1 }
        advance()
        try expectSymbol("(", "'(' after \(upper)")
        let args = try argumentList(close: ")")
        let count = upper == "CAST" ? 2 : 3
        guard args.count == count else {
            throw error("\(count) arguments for \(upper), not \(args.count)", at: token)
        }
        return .builtin(upper, args)
    }

    /// `SUBQUERY(collection, $variable, predicate)`.
    private mutating func subqueryExpression() throws -> ValueExpression {
        try nest()
        defer { depth -= 1 }
        advance()
        try expectSymbol("(", "'(' after SUBQUERY")
        let collection = try expression()
        try expectSymbol(",", "',' and a variable after the SUBQUERY collection")
        guard case .variable(let variable) = current.kind else { throw error("a $variable for SUBQUERY") }
        advance()
        try expectSymbol(",", "',' and a predicate after the SUBQUERY variable")
        boundVariables.append(variable)
        let predicate = try self.predicate()
        boundVariables.removeLast()
        try expectSymbol(")", "')' after the SUBQUERY predicate")
        return .subquery(collection, variable, predicate)
    }

    /// NSExpression's named functions after their name: `sum:(…)`, `add:to:(…, …)`, `now()`.
    private mutating func builtinFunction(_ name: String, _ token: ExpressionToken) throws -> ValueExpression {
        var function = name
        while isSymbol(":") {
            advance()
            function += ":"
            if case .identifier(let part) = current.kind, peekKind(1) == .symbol(":") {
                function += part
                advance()
            }
        }
        guard let arity = ExpressionParser.builtinArity[function] else {
            throw error("a known function (such as sum:, count:, now)", at: token)
        }
        try nest()
        defer { depth -= 1 }
        try expectSymbol("(", "'(' after \(function)")
        let args = try argumentList(close: ")")
        if let arity = arity, args.count != arity {
            throw error("\(arity) argument\(arity == 1 ? "" : "s") for \(function), not \(args.count)", at: token)
        }
        if arity == nil && args.isEmpty { throw error("an argument for \(function)", at: token) }
        return .builtin(function, args)
    }
}
