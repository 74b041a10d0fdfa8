/// NSPredicate: a condition as written in source filters and fetches.
public indirect enum FilterPredicate: Equatable, CustomStringConvertible {
    /// `TRUEPREDICATE` / `FALSEPREDICATE`.
    case constant(Bool)
    case comparison(Comparison)
    /// `a AND b AND …` (never fewer than two operands when parsed).
    case and([FilterPredicate])
    case or([FilterPredicate])
    case not(FilterPredicate)

    /// NSComparisonPredicate.
    public struct Comparison: Equatable {
        /// The left expression.
        public var lhs: ValueExpression
        /// The operator.
        public var op: ComparisonOperator
        /// The right expression.
        public var rhs: ValueExpression
        /// `[c]`, `[d]`, `[n]`.
        public var options: ComparisonOptions
        /// `ANY`, `ALL`, `NONE` or none.
        public var modifier: ComparisonModifier

        /// The comparison `lhs op rhs`, with options and a modifier.
        public init(
            _ lhs: ValueExpression, _ op: ComparisonOperator, _ rhs: ValueExpression, options: ComparisonOptions = [],
            modifier: ComparisonModifier = .direct
        ) {
            self.lhs = lhs
            self.op = op
            self.rhs = rhs
            self.options = options
            self.modifier = modifier
        }
    }

    /// NSPredicateOperatorType: `==`, `<`, `BEGINSWITH`, `IN`, `LIKE`, `MATCHES`, ….
    public enum ComparisonOperator: String, Equatable, CaseIterable {
        case equal = "=="
        case notEqual = "!="
        case less = "<"
        case lessOrEqual = "<="
        case greater = ">"
        case greaterOrEqual = ">="
        case matches = "MATCHES"
        case like = "LIKE"
        case beginsWith = "BEGINSWITH"
        case endsWith = "ENDSWITH"
        case contains = "CONTAINS"
        case `in` = "IN"
        case between = "BETWEEN"

        var isStringOperator: Bool {
            switch self {
            case .matches, .like, .beginsWith, .endsWith, .contains: return true
            default: return false
            }
        }
    }

    /// `[c]`, `[d]`, `[n]` after the operator.
    public struct ComparisonOptions: OptionSet, Equatable {
        /// The option bits.
        public let rawValue: Int
        /// The options with bits `rawValue`.
        public init(rawValue: Int) { self.rawValue = rawValue }
        /// `[c]`: case-insensitive.
        public static let caseInsensitive = ComparisonOptions(rawValue: 1)
        /// `[d]`: diacritic-insensitive.
        public static let diacriticInsensitive = ComparisonOptions(rawValue: 2)
        /// `[n]`: the strings are already normalized; accepted and otherwise ignored.
        public static let normalized = ComparisonOptions(rawValue: 4)

        var text: String {
            var s = ""
            if contains(.caseInsensitive) { s += "c" }
            if contains(.diacriticInsensitive) { s += "d" }
            if contains(.normalized) { s += "n" }
            return s.isEmpty ? "" : "[" + s + "]"
        }
    }

    /// NSComparisonPredicateModifier; `NONE` is Core Data's `NOT ANY`, `SOME` is `ANY`.
    public enum ComparisonModifier: String, Equatable {
        case direct = ""
        case any = "ANY"
        case all = "ALL"
        case none = "NONE"
    }

    /// The predicate as format text that parses back to the same predicate.
    public var description: String { text(context: 0) }

    /// Contexts: 0 top / OR operand, 1 AND operand, 2 NOT operand.
    func text(context: Int) -> String {
        switch self {
        case .constant(let b): return b ? "TRUEPREDICATE" : "FALSEPREDICATE"
        case .comparison(let c):
            let modifier = c.modifier == .direct ? "" : c.modifier.rawValue + " "
            return modifier + c.lhs.text(context: 0) + " " + c.op.rawValue + c.options.text + " "
                + c.rhs.text(context: 0)
        case .and(let items):
            let body = items.map { $0.text(context: 1) }.joined(separator: " AND ")
            return context > 1 ? "(" + body + ")" : body
        case .or(let items):
            let body = items.map { $0.text(context: 0) }.joined(separator: " OR ")
            return context > 0 ? "(" + body + ")" : body
        case .not(let p):
            return "NOT " + p.text(context: 2)
        }
    }
}
