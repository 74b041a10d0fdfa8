/// Maps a predicate's key paths to SQL column expressions (the store's `Z…` columns, possibly
/// through joins); nil when a key path has no column.
package protocol SQLColumnResolver {
    func sqlColumn(forKeyPath keys: [String]) -> (sql: String, type: AttributeType)?
}

/// Translates a predicate into an SQLite WHERE clause that selects exactly the rows the
/// in-memory `PredicateEvaluator` would accept, or gives nil so that the caller evaluates in Swift.
///
/// Faithfulness rules:
/// - Every translated comparison yields 0 or 1, never NULL, so that NOT, AND and OR keep
///   NSPredicate's two-valued logic (`name != "x"` is true for a nil name: `col IS NOT ?`).
/// - Only attribute columns compared with constants of a matching kind (strings with text
///   columns, numbers and booleans with numeric columns, dates with date columns) translate;
///   constants are bound as `?` parameters (dates as seconds since 2001, booleans 0/1).
/// - String operators are case-sensitive (`instr`, `substr`, `GLOB`); `[c]` translates only for
///   ASCII constants (SQLite's `lower()` folds ASCII only); `[d]`, MATCHES, ANY/ALL/NONE, SUBQUERY,
///   functions and to-many paths never translate.
/// Both sides compare strings literally, code point by code point (see `ValueComparison`). Known
/// difference at the edges: non-ASCII characters whose lower case is ASCII (KELVIN SIGN) fold only
/// in Swift, which is why `[c]` translates only for ASCII constants.
package enum PredicateSQLTranslator {
    /// The SQL of `predicate`, nil when it has none (the caller then evaluates it in memory), also
    /// when it nests deeper than `ExpressionParser.maximumDepth` levels (built by hand).
    package static func translate(_ predicate: FilterPredicate, resolver: SQLColumnResolver) -> (
        sql: String, arguments: [Value]
    )? {
        var builder = Builder(resolver: resolver)
        guard let sql = builder.predicate(predicate) else { return nil }
        return (sql, builder.arguments)
    }

    private struct Builder {
        let resolver: SQLColumnResolver
        var arguments: [Value] = []
        /// Nested NOT / AND / OR levels, bounded as the parser bounds them.
        var depth = 0

        init(resolver: SQLColumnResolver) { self.resolver = resolver }

        mutating func predicate(_ p: FilterPredicate) -> String? {
            depth += 1
            defer { depth -= 1 }
            guard depth <= ExpressionParser.maximumDepth else { return nil }
            switch p {
            case .constant(let b): return b ? "1" : "0"
            case .not(let inner):
                guard let sql = predicate(inner) else { return nil }
                return "NOT " + sql
            case .and(let items), .or(let items):
                if items.isEmpty { if case .and = p { return "1" } else { return "0" } }
                var parts: [String] = []
                for item in items {
                    guard let sql = predicate(item) else { return nil }
                    parts.append(sql)
                }
                let joiner: String
                if case .and = p { joiner = " AND " } else { joiner = " OR " }
                return "(" + parts.joined(separator: joiner) + ")"
            case .comparison(let c):
                return comparison(c)
            }
        }

        private enum Operand {
            case column(String, AttributeType)
            case constant(Value)
        }

        private func operand(_ e: ValueExpression) -> Operand? {
            switch e {
            case .constant(let v): return .constant(v)
            case .keyPath(.evaluatedObject, let keys):
                guard let column = resolver.sqlColumn(forKeyPath: keys) else { return nil }
                return .column(column.sql, column.type)
            case .aggregate(let items):
                var values: [Value] = []
                for item in items {
                    guard case .constant(let v) = item else { return nil }
                    values.append(v)
                }
                return .constant(.collection(values))
            default: return nil
            }
        }

        private enum Kind { case text, number, date }

        private func kind(_ type: AttributeType) -> Kind? {
            switch type {
            case .string: return .text
            case .integer16, .integer32, .integer64, .double, .float, .boolean: return .number
            case .date: return .date
            default: return nil
            }
        }

        /// The SQLite value a constant binds as against a column of `kind`; nil if they do not compare.
        private func bindable(_ v: Value, _ kind: Kind) -> Value? {
            switch (v, kind) {
            case (.string, .text): return v
            case (.integer, .number), (.double, .number): return v
            case (.bool(let b), .number): return .integer(b ? 1 : 0)
            case (.decimal(let s), .number): return Int64(s).map(Value.integer) ?? Double(s).map(Value.double)
            case (.date(let d), .date): return .double(d)
            default: return nil
            }
        }

        private static func isASCII(_ v: Value) -> Bool {
            if case .string(let s) = v { return s.utf8.allSatisfy { $0 < 0x80 } }
            return true
        }

        private static func lowered(_ v: Value) -> Value {
            if case .string(let s) = v { return .string(s.lowercased()) }
            return v
        }

        private mutating func bind(_ v: Value) -> String {
            arguments.append(v)
            return "?"
        }

        private mutating func comparison(_ c: FilterPredicate.Comparison) -> String? {
            guard c.modifier == .direct, !c.options.contains(.diacriticInsensitive) else { return nil }
            guard let lhs = operand(c.lhs), let rhs = operand(c.rhs) else { return nil }
            let caseInsensitive = c.options.contains(.caseInsensitive)
            switch (lhs, rhs) {
            case (.constant, .constant):
                // Decided now, exactly as the evaluator decides it.
                guard let result = try? PredicateEvaluator().evaluate(.comparison(c), object: .null) else { return nil }
                return result ? "1" : "0"
            case (.constant(let value), .column(let sql, let type)):
                let flipped: FilterPredicate.ComparisonOperator
                switch c.op {
                case .equal, .notEqual: flipped = c.op
                case .less: flipped = .greater
                case .lessOrEqual: flipped = .greaterOrEqual
                case .greater: flipped = .less
                case .greaterOrEqual: flipped = .lessOrEqual
                default: return nil
                }
                return columnWithConstant(sql, type, flipped, value, caseInsensitive)
            case (.column(let sql, let type), .constant(let value)):
                return columnWithConstant(sql, type, c.op, value, caseInsensitive)
            case (.column(let a, let typeA), .column(let b, let typeB)):
                guard !caseInsensitive, let kindA = kind(typeA), kindA == kind(typeB) else { return nil }
                switch c.op {
                case .equal: return "\(a) IS \(b)"
                case .notEqual: return "\(a) IS NOT \(b)"
                case .less, .lessOrEqual, .greater, .greaterOrEqual:
                    return "(\(a) IS NOT NULL AND \(b) IS NOT NULL AND \(a) \(c.op.rawValue) \(b))"
                default: return nil
                }
            }
        }

        private mutating func columnWithConstant(
            _ column: String, _ type: AttributeType, _ op: FilterPredicate.ComparisonOperator,
            _ value: Value, _ caseInsensitive: Bool
        ) -> String? {
            guard let kind = kind(type) else { return nil }
            if caseInsensitive && (kind != .text || !PredicateSQLTranslator.Builder.isASCIIAll(value)) { return nil }
            let col = caseInsensitive ? "lower(\(column))" : column
            func constant(_ v: Value) -> Value? {
                guard let b = bindable(v, kind) else { return nil }
                return caseInsensitive ? Builder.lowered(b) : b
            }
            switch op {
            case .equal, .notEqual:
                if value.isNull { return "\(column) IS \(op == .equal ? "" : "NOT ")NULL" }
                guard let v = constant(value) else { return nil }
                return "\(col) IS \(op == .equal ? "" : "NOT ")" + bind(v)
            case .less, .lessOrEqual, .greater, .greaterOrEqual:
                if value.isNull { return "0" }
                guard let v = constant(value) else { return nil }
                return "(\(column) IS NOT NULL AND \(col) \(op.rawValue) \(bind(v)))"
            case .between:
                let bounds = value.elements
                guard bounds.count == 2, let low = constant(bounds[0]), let high = constant(bounds[1]) else {
                    return nil
                }
                return "(\(column) IS NOT NULL AND \(col) BETWEEN \(bind(low)) AND \(bind(high)))"
            case .in:
                guard case .collection(let items) = value else { return nil }
                if items.isEmpty { return "0" }
                var values: [Value] = []
                for item in items {
                    guard let v = constant(item) else { return nil }
                    values.append(v)
                }
                return "(\(column) IS NOT NULL AND \(col) IN (" + values.map { bind($0) }.joined(separator: ", ") + "))"
            case .beginsWith, .endsWith, .contains, .like:
                guard kind == .text else { return nil }
                if value.isNull { return "0" }
                guard case .string(let s) = value else { return nil }
                let text = caseInsensitive ? s.lowercased() : s
                if op == .like {
                    return "(\(column) IS NOT NULL AND \(col) GLOB \(bind(.string(Builder.glob(text)))))"
                }
                // Foundation answers NO for an empty prefix, suffix or substring.
                if text.isEmpty { return "0" }
                switch op {
                case .beginsWith: return "(\(column) IS NOT NULL AND instr(\(col), \(bind(.string(text)))) = 1)"
                case .endsWith:
                    return
                        "(\(column) IS NOT NULL AND substr(\(col), -\(text.unicodeScalars.count)) = \(bind(.string(text))))"
                default: return "(\(column) IS NOT NULL AND instr(\(col), \(bind(.string(text)))) > 0)"
                }
            case .matches:
                return nil
            }
        }

        private static func isASCIIAll(_ v: Value) -> Bool {
            return v.elements.allSatisfy(isASCII)
        }

        /// A LIKE pattern (`*`, `?`, `\` escapes) as a GLOB pattern: GLOB's own specials are
        /// bracketed so that they match literally.
        static func glob(_ like: String) -> String {
            var out = ""
            var escaped = false
            for c in like.unicodeScalars {
                if escaped {
                    out += (c == "*" || c == "?" || c == "[") ? "[" + String(c) + "]" : String(c)
                    escaped = false
                    continue
                }
                switch c {
                case "\\": escaped = true
                case "[": out += "[[]"
                default: out.unicodeScalars.append(c)
                }
            }
            if escaped { out += "\\" }
            return out
        }
    }
}
