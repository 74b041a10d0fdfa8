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
        public var lhs: ValueExpression
        public var op: ComparisonOperator
        public var rhs: ValueExpression
        public var options: ComparisonOptions
        public var modifier: ComparisonModifier

        public init(_ lhs: ValueExpression, _ op: ComparisonOperator, _ rhs: ValueExpression, options: ComparisonOptions = [], modifier: ComparisonModifier = .direct) {
            self.lhs = lhs
            self.op = op
            self.rhs = rhs
            self.options = options
            self.modifier = modifier
        }
    }

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
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        public static let caseInsensitive = ComparisonOptions(rawValue: 1)
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
        case direct = "", any = "ANY", all = "ALL", none = "NONE"
    }

    public var description: String { text(context: 0) }

    /// Contexts: 0 top / OR operand, 1 AND operand, 2 NOT operand.
    func text(context: Int) -> String {
        switch self {
        case .constant(let b): return b ? "TRUEPREDICATE" : "FALSEPREDICATE"
        case .comparison(let c):
            let modifier = c.modifier == .direct ? "" : c.modifier.rawValue + " "
            return modifier + c.lhs.text(context: 0) + " " + c.op.rawValue + c.options.text + " " + c.rhs.text(context: 0)
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
