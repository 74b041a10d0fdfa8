/// Evaluates predicates in memory with NSPredicate's semantics:
/// - `==` / `!=`: nil equals only nil (so `name != "x"` holds for a nil name); numbers compare by value.
/// - `<`, `<=`, `>`, `>=`: false when either side is nil or the two cannot be ordered.
/// - BEGINSWITH, ENDSWITH, CONTAINS, LIKE, MATCHES: false for nil or an empty pattern, as
///   Foundation answers; MATCHES runs a bounded automaton (see `RegularExpression`); CONTAINS on a collection tests membership.
/// - IN: membership in a collection, or substring of a string; BETWEEN {low, high} inclusive.
/// - ANY / SOME / ALL / NONE: over the members of the left side (a single value counts as one
///   member, nil as none); ALL holds for an empty collection.
package struct PredicateEvaluator {
    package let expressions: ExpressionEvaluator

    package init(expressions: ExpressionEvaluator) {
        self.expressions = expressions
    }

    package init(environment: ExpressionEnvironment? = nil) {
        self.expressions = ExpressionEvaluator(environment: environment)
    }

    package static func evaluate(_ predicate: FilterPredicate, object: Value, environment: ExpressionEnvironment? = nil)
        throws -> Bool
    {
        return try PredicateEvaluator(environment: environment).evaluate(predicate, object: object)
    }

    /// - Throws: `MigrationError` `.expressionEvaluation` when an expression fails, among others
    ///   when the predicate nests deeper than `ExpressionParser.maximumDepth` levels (built by hand).
    package func evaluate(_ predicate: FilterPredicate, object: Value) throws -> Bool {
        if case .constant(let b) = predicate { return b }
        try expressions.enterLevel()
        defer { expressions.depth -= 1 }
        return try evaluateNested(predicate, object: object)
    }

    private func evaluateNested(_ predicate: FilterPredicate, object: Value) throws -> Bool {
        switch predicate {
        case .constant(let b): return b
        case .and(let items):
            for item in items where !(try evaluate(item, object: object)) { return false }
            return true
        case .or(let items):
            for item in items where try evaluate(item, object: object) { return true }
            return false
        case .not(let inner):
            return !(try evaluate(inner, object: object))
        case .comparison(let c):
            let lhs = try expressions.evaluate(c.lhs, object: object)
            let rhs = try expressions.evaluate(c.rhs, object: object)
            switch c.modifier {
            case .direct: return try compare(lhs, c.op, rhs, c.options)
            case .any:
                for item in lhs.elements where try compare(item, c.op, rhs, c.options) { return true }
                return false
            case .none:
                for item in lhs.elements where try compare(item, c.op, rhs, c.options) { return false }
                return true
            case .all:
                for item in lhs.elements where !(try compare(item, c.op, rhs, c.options)) { return false }
                return true
            }
        }
    }

    func compare(
        _ lhs: Value, _ op: FilterPredicate.ComparisonOperator, _ rhs: Value,
        _ options: FilterPredicate.ComparisonOptions
    ) throws -> Bool {
        switch op {
        case .equal: return ValueComparison.equal(lhs, rhs, options)
        case .notEqual: return !ValueComparison.equal(lhs, rhs, options)
        case .less: return ValueComparison.compare(lhs, rhs, options).map { $0 < 0 } ?? false
        case .lessOrEqual: return ValueComparison.compare(lhs, rhs, options).map { $0 <= 0 } ?? false
        case .greater: return ValueComparison.compare(lhs, rhs, options).map { $0 > 0 } ?? false
        case .greaterOrEqual: return ValueComparison.compare(lhs, rhs, options).map { $0 >= 0 } ?? false
        case .between:
            if lhs.isNull || rhs.isNull { return false }
            let bounds = rhs.elements
            guard bounds.count == 2 else {
                throw MigrationError(.expressionEvaluation, "BETWEEN needs two values {low, high}, not \(bounds.count)")
            }
            guard let low = ValueComparison.compare(lhs, bounds[0], options),
                let high = ValueComparison.compare(lhs, bounds[1], options)
            else { return false }
            return low >= 0 && high <= 0
        case .in:
            switch rhs {
            case .null: return false
            case .collection(let items): return items.contains { ValueComparison.equal(lhs, $0, options) }
            case .string(let haystack):
                guard case .string(let needle) = lhs else { return false }
                return contains(haystack, needle, options)
            default: return ValueComparison.equal(lhs, rhs, options)
            }
        case .contains:
            if case .collection(let items) = lhs { return items.contains { ValueComparison.equal($0, rhs, options) } }
            return try strings(lhs, rhs, op) { contains($0, $1, options) }
        case .beginsWith:
            return try strings(lhs, rhs, op) { ValueComparison.hasPrefix($0, $1, options) }
        case .endsWith:
            return try strings(lhs, rhs, op) { ValueComparison.hasSuffix($0, $1, options) }
        case .like:
            return try strings(lhs, rhs, op) { ValueComparison.like($0, $1, options) }
        case .matches:
            return try strings(lhs, rhs, op) { text, pattern in
                let regex = try self.regex(pattern, options)
                return try regex.wholeMatch(
                    ValueComparison.fold(text, options.subtracting(.caseInsensitive)),
                    isCancelled: self.expressions.isCancelled)
            }
        }
    }

    private func contains(_ haystack: String, _ needle: String, _ options: FilterPredicate.ComparisonOptions) -> Bool {
        return ValueComparison.contains(haystack, needle, options)
    }

    /// String operators: nil on either side is false; anything else that is not a string is an error.
    private func strings(
        _ lhs: Value, _ rhs: Value, _ op: FilterPredicate.ComparisonOperator, _ test: (String, String) throws -> Bool
    ) throws -> Bool {
        if lhs.isNull || rhs.isNull { return false }
        guard case .string(let a) = lhs, case .string(let b) = rhs else {
            let culprit = lhs.stringValue == nil ? lhs : rhs
            throw MigrationError(
                .expressionEvaluation, "\(op.rawValue) compares strings, not \(culprit.aTypeName) value ('\(culprit)')")
        }
        return try test(a, b)
    }

    /// The compiled pattern, cached in the expression evaluator so that rows do not recompile it.
    private func regex(_ pattern: String, _ options: FilterPredicate.ComparisonOptions) throws -> RegularExpression {
        let key = (options.contains(.caseInsensitive) ? "i:" : "s:") + pattern
        if let cached = expressions.regexCache[key] { return cached }
        let regex = try RegularExpression(pattern, caseInsensitive: options.contains(.caseInsensitive))
        if expressions.regexCache.count >= ExpressionEvaluator.regexCacheLimit { expressions.regexCache.removeAll() }
        expressions.regexCache[key] = regex
        return regex
    }
}
