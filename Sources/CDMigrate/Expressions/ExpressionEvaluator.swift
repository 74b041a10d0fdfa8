#if canImport(Glibc)
    import Glibc
#endif

/// Evaluates value expressions against an evaluated object (`SELF`, bare key paths) and an
/// environment (`$source`, `$manager`, host functions). Nil is contagious, as messaging nil is
/// in Objective-C: a key path or FUNCTION through nil gives nil.
///
/// One evaluator serves many rows: it caches compiled regular expressions for MATCHES.
package final class ExpressionEvaluator {
    package let environment: ExpressionEnvironment?
    /// SUBQUERY variables in scope, innermost last.
    private var locals: [(name: String, value: Value)] = []
    /// Compiled MATCHES patterns (at most `regexCacheLimit`, so that data full of distinct patterns cannot grow it without end).
    var regexCache: [String: RegularExpression] = [:]
    static let regexCacheLimit = 256
    /// Polled during long work (regular expression matching); returning true ends it with a
    /// `.migrationCancelled` error. The migration manager sets it to its own cancellation.
    package var isCancelled: (() -> Bool)?
    /// How many nested expressions and predicates (`PredicateEvaluator` counts here too) the
    /// evaluation is inside; see `enterLevel()`.
    var depth = 0

    package init(environment: ExpressionEnvironment? = nil) {
        self.environment = environment
    }

    package static func evaluate(
        _ expression: ValueExpression, object: Value = .null, environment: ExpressionEnvironment? = nil
    ) throws -> Value {
        return try ExpressionEvaluator(environment: environment).evaluate(expression, object: object)
    }

    /// - Throws: `MigrationError` `.expressionEvaluation` when the expression fails, among others
    ///   when it nests deeper than `ExpressionParser.maximumDepth` levels (a tree built by hand;
    ///   parsed ones never do), before the stack could overflow.
    package func evaluate(_ expression: ValueExpression, object: Value = .null) throws -> Value {
        switch expression {
        case .constant(let value):
            return value
        case .evaluatedObject:
            return object
        case .variable(let name):
            return try variable(name)
        default:
            try enterLevel()
            defer { depth -= 1 }
            return try evaluateNested(expression, object: object)
        }
    }

    /// Counts one more level of nesting: every expression but a constant, a variable and `SELF`,
    /// and every predicate but TRUEPREDICATE/FALSEPREDICATE. The parser counts at least one
    /// level for each of them, so a parsed expression never reaches the limit here; one built by
    /// hand stops at the same limit as text. The caller lowers `depth` when it leaves.
    func enterLevel() throws {
        depth += 1
        guard depth <= ExpressionParser.maximumDepth else {
            depth -= 1
            throw MigrationError(
                .expressionEvaluation,
                "expression nests deeper than the limit of \(ExpressionParser.maximumDepth) levels (an expression or predicate built by hand: each function, aggregate, key path, operator, index, subquery, NOT, AND/OR and comparison counts one level)"
            )
        }
    }

    /// The nodes that nest (everything but a constant, a variable and `SELF`).
    private func evaluateNested(_ expression: ValueExpression, object: Value) throws -> Value {
        switch expression {
        case .constant, .evaluatedObject, .variable:
            return try evaluate(expression, object: object)  // the leaves, which `evaluate` answers
        case .keyPath(let base, let keys):
            if case .variable(let name) = base, local(name) == nil, let environment = environment,
                let value = try environment.keyPath(keys, onVariable: name)
            {
                return value
            }
            return try KeyValueCoding.value(try evaluate(base, object: object), keys: keys[...])
        case .function(let target, let selector, let args):
            return try function(target, selector, args, object: object)
        case .builtin(let name, let args):
            return try builtin(name, args, object: object)
        case .binary(let op, let lhs, let rhs):
            // A left-deep chain ("a - b - c …", as the parser builds one) is walked down its left
            // side without recursing, so it counts one level whatever its length, as in the
            // parser (which counts each operator of the chain where its right operand is read).
            var rest: [(ValueExpression.ArithmeticOperator, ValueExpression)] = [(op, rhs)]
            var leftmost = lhs
            while case .binary(let innerOp, let innerLHS, let innerRHS) = leftmost {
                rest.append((innerOp, innerRHS))
                leftmost = innerLHS
            }
            var value = try evaluate(leftmost, object: object)
            for (op, operand) in rest.reversed() {
                if value.isNull { return .null }
                value = try Arithmetic.apply(op, value, try evaluate(operand, object: object))
            }
            return value
        case .negation(let operand):
            return try Arithmetic.negate(try evaluate(operand, object: object))
        case .aggregate(let items):
            var values: [Value] = []
            values.reserveCapacity(items.count)
            for item in items { values.append(try evaluate(item, object: object)) }
            return .collection(values)
        case .subquery(let collection, let name, let predicate):
            return try subquery(collection, name, predicate, object: object)
        case .index(let collection, let index):
            return try self.index(collection, index, expression, object: object)
        }
    }

    // The cases below live apart from `evaluate`, which recursion passes through, to keep its stack frame small.

    private func subquery(_ collection: ValueExpression, _ name: String, _ predicate: FilterPredicate, object: Value)
        throws -> Value
    {
        let items = try evaluate(collection, object: object).elements
        let predicates = PredicateEvaluator(expressions: self)
        var result: [Value] = []
        locals.append((name, .null))
        defer { locals.removeLast() }
        for item in items {
            locals[locals.count - 1].value = item
            if try predicates.evaluate(predicate, object: item) { result.append(item) }
        }
        return .collection(result)
    }

    private func index(
        _ collection: ValueExpression, _ index: ValueExpression, _ expression: ValueExpression, object: Value
    ) throws -> Value {
        let items = try evaluate(collection, object: object)
        if items.isNull { return .null }
        let elements = items.elements
        if case .constant(.string(let word)) = index {
            switch word {
            case "FIRST": return elements.first ?? .null
            case "LAST": return elements.last ?? .null
            case "SIZE": return .integer(Int64(elements.count))
            default: break
            }
        }
        let position = try evaluate(index, object: object)
        guard let i = position.integerValue, i >= 0, i < Int64(elements.count) else {
            throw MigrationError(
                .expressionEvaluation,
                "index \(position) is outside a collection of \(elements.count) in '\(expression)'")
        }
        return elements[Int(i)]
    }

    private func local(_ name: String) -> Value? {
        for entry in locals.reversed() where entry.name == name { return entry.value }
        return nil
    }

    private func variable(_ name: String) throws -> Value {
        if let value = local(name) { return value }
        if let environment = environment, let value = try environment.variable(name) { return value }
        throw MigrationError(.expressionEvaluation, "unknown variable '$\(name)'")
    }

    private func evaluateAll(_ args: [ValueExpression], object: Value) throws -> [Value] {
        var values: [Value] = []
        values.reserveCapacity(args.count)
        for arg in args { values.append(try evaluate(arg, object: object)) }
        return values
    }

    private func function(_ target: ValueExpression, _ selector: String, _ args: [ValueExpression], object: Value)
        throws -> Value
    {
        // Every function is bounded (ExpressionValueLimits); between two, a cancellation ends the evaluation.
        if let isCancelled, isCancelled() {
            throw MigrationError(.migrationCancelled, "cancelled while evaluating FUNCTION(…, '\(selector)', …)")
        }
        // FUNCTION(CAST("Class", "Class"), "selector:", …): a host function.
        if case .builtin("CAST", let castArgs) = target, castArgs.count == 2, castArgs[1] == .constant(.string("Class"))
        {
            guard case .string(let className) = try evaluate(castArgs[0], object: object) else {
                throw MigrationError(
                    .expressionEvaluation,
                    "the class of a FUNCTION must be a string in '\(ValueExpression.function(target, selector, args))'")
            }
            guard let environment = environment else {
                throw MigrationError(
                    .expressionEvaluation, "no host function '\(className).\(selector)' is available here")
            }
            return try environment.invokeHostFunction(
                className: className, selector: selector, arguments: try evaluateAll(args, object: object))
        }
        if case .variable(let name) = target, local(name) == nil, let environment = environment {
            let arguments = try evaluateAll(args, object: object)
            if let value = try environment.invoke(selector: selector, onVariable: name, arguments: arguments) {
                return value
            }
            return try SelectorTable.perform(selector, on: try variable(name), arguments: arguments)
        }
        let receiver = try evaluate(target, object: object)
        if receiver.isNull { return .null }
        return try SelectorTable.perform(selector, on: receiver, arguments: try evaluateAll(args, object: object))
    }

    /// The single collection an aggregate function reads: its one argument's members, or its arguments.
    private func collection(_ args: [ValueExpression], object: Value) throws -> [Value] {
        if args.count == 1 { return try evaluate(args[0], object: object).elements }
        return try evaluateAll(args, object: object)
    }

    private func builtin(_ name: String, _ args: [ValueExpression], object: Value) throws -> Value {
        // The parser checks arities; a host may build an ValueExpression by hand.
        let arity: Int?
        switch name {
        case "CAST": arity = 2
        case "FETCH": arity = 3
        default:
            guard let entry = ExpressionParser.builtinArity[name] else {
                throw MigrationError(.expressionEvaluation, "unknown function '\(name)'")
            }
            arity = entry
        }
        if let arity = arity, args.count != arity {
            throw MigrationError(
                .expressionEvaluation, "\(name) takes \(arity) argument\(arity == 1 ? "" : "s"), not \(args.count)")
        }
        if arity == nil && args.isEmpty { throw MigrationError(.expressionEvaluation, "\(name) needs an argument") }
        switch name {
        case "CAST", "castObject:toType:":
            let value = try evaluate(args[0], object: object)
            guard case .string(let type) = try evaluate(args[1], object: object) else {
                throw MigrationError(.expressionEvaluation, "the type of a CAST must be a string such as \"NSNumber\"")
            }
            return try ExpressionCast.cast(value, to: type)
        case "FETCH":
            // The environment answers the fetch request expression with the fetched instances.
            let request = try evaluate(args[0], object: object)
            if case .collection = request { return request }
            throw MigrationError(
                .expressionEvaluation,
                "FETCH needs a fetch request the environment can execute, not \(request.aTypeName) value")
        case "now": return .date(ExpressionEvaluator.now())
        case "sum:": return try Aggregates.sum(try collection(args, object: object))
        case "count:": return .integer(Int64(try collection(args, object: object).count))
        case "min:": return try Aggregates.extreme(try collection(args, object: object), max: false)
        case "max:": return try Aggregates.extreme(try collection(args, object: object), max: true)
        case "average:": return try Aggregates.average(try collection(args, object: object)) ?? .null
        case "median:": return try Aggregates.median(try collection(args, object: object))
        case "mode:": return Aggregates.mode(try collection(args, object: object))
        case "stddev:": return try Aggregates.standardDeviation(try collection(args, object: object))
        case "distinct:": return .collection(Aggregates.distinct(try collection(args, object: object)))
        case "noindex:": return try evaluate(args[0], object: object)
        default: break
        }
        let values = try evaluateAll(args, object: object)
        if values.contains(where: { $0.isNull }) { return .null }
        return try scalarFunction(name, values)
    }

    /// The functions of plain values (arithmetic, bitwise, math, strings): apart from `builtin`,
    /// which recursion passes through, to keep its stack frame small.
    private func scalarFunction(_ name: String, _ values: [Value]) throws -> Value {
        switch name {
        case "add:to:": return try Arithmetic.apply(.add, values[0], values[1])
        case "from:subtract:": return try Arithmetic.apply(.subtract, values[0], values[1])
        case "multiply:by:": return try Arithmetic.apply(.multiply, values[0], values[1])
        case "divide:by:": return try Arithmetic.apply(.divide, values[0], values[1])
        case "raise:toPower:": return try Arithmetic.apply(.power, values[0], values[1])
        case "modulus:by:":
            if let a = integer(values[0]), let b = integer(values[1]) {
                guard b != 0 else { throw MigrationError(.expressionEvaluation, "modulus by zero") }
                return .integer(b == -1 ? 0 : a % b)
            }
            let (a, b) = try (number(values[0], name), number(values[1], name))
            guard b != 0 else { throw MigrationError(.expressionEvaluation, "modulus by zero") }
            return .double(fmod(a, b))
        case "bitwiseAnd:with:", "bitwiseOr:with:", "bitwiseXor:with:", "leftshift:by:", "rightshift:by:":
            guard let a = integer(values[0]), let b = integer(values[1]) else {
                throw MigrationError(
                    .expressionEvaluation, "\(name) needs integers, not \(values[0].typeName) and \(values[1].typeName)"
                )
            }
            switch name {
            case "bitwiseAnd:with:": return .integer(a & b)
            case "bitwiseOr:with:": return .integer(a | b)
            case "bitwiseXor:with:": return .integer(a ^ b)
            case "leftshift:by:": return .integer(a << b)
            default: return .integer(a >> b)
            }
        case "onesComplement:":
            guard let a = integer(values[0]) else {
                throw MigrationError(
                    .expressionEvaluation, "onesComplement: needs an integer, not \(values[0].aTypeName) value")
            }
            return .integer(~a)
        case "abs:":
            if let a = integer(values[0]), a != Int64.min { return .integer(Swift.abs(a)) }
            return .double(Swift.abs(try number(values[0], name)))
        case "sqrt:": return .double(try number(values[0], name).squareRoot())
        case "log:": return .double(log10(try number(values[0], name)))
        case "ln:": return .double(log(try number(values[0], name)))
        case "exp:": return .double(exp(try number(values[0], name)))
        case "floor:": return .double(try number(values[0], name).rounded(.down))
        case "ceiling:": return .double(try number(values[0], name).rounded(.up))
        case "trunc:": return .double(try number(values[0], name).rounded(.towardZero))
        case "uppercase:", "lowercase:", "length:", "canonical:":
            guard case .string(let s) = values[0] else {
                throw MigrationError(
                    .expressionEvaluation, "\(name) needs a string, not \(values[0].aTypeName) value ('\(values[0])')")
            }
            if name == "length:" { return .integer(Int64(s.utf16.count)) }
            if name == "canonical:" {
                return .string(ValueComparison.fold(s, [.caseInsensitive, .diacriticInsensitive]))
            }
            return .string(name == "uppercase:" ? s.uppercased() : s.lowercased())
        default:
            throw MigrationError(.expressionEvaluation, "unknown function '\(name)'")
        }
    }

    private func integer(_ v: Value) -> Int64? {
        switch v {
        case .integer(let i): return i
        case .bool(let b): return b ? 1 : 0
        default: return nil
        }
    }

    private func number(_ v: Value, _ function: String) throws -> Double {
        switch v {
        case .integer, .double, .bool, .decimal:
            if let d = v.doubleValue { return d }
        default: break
        }
        throw MigrationError(.expressionEvaluation, "\(function) needs a number, not \(v.aTypeName) value ('\(v)')")
    }

    /// The current time in seconds since 2001.
    static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9 - Value.referenceDateOffset
    }
}
