/// Checks that a predicate's key paths name properties of the fetched entity (following
/// relationships), so a misspelt key is an error even when no row would reach it.
struct KeyPathCheck {
    let entity: EntityDescription

    func problem(in predicate: FilterPredicate) -> String? {
        switch predicate {
        case .constant: return nil
        case .comparison(let c): return problem(in: c.lhs) ?? problem(in: c.rhs)
        case .and(let parts), .or(let parts): return parts.lazy.compactMap { problem(in: $0) }.first
        case .not(let inner): return problem(in: inner)
        }
    }

    func problem(in expression: ValueExpression) -> String? {
        switch expression {
        case .keyPath(.evaluatedObject, let keys):
            var current = entity
            for key in keys {
                if key.hasPrefix("@") { return nil }
                if current.attribute(named: key) != nil { return nil }
                guard let next = current.relationship(named: key)?.destinationEntity else {
                    return
                        "entity '\(current.name)' has no property '\(key)'\(SpellingSuggestion.hint(key, among: current.attributes.map { $0.name } + current.relationships.map { $0.name }))"
                }
                current = next
            }
            return nil
        case .keyPath(let base, _): return problem(in: base)
        case .function(let target, _, let arguments):
            return problem(in: target) ?? arguments.lazy.compactMap { problem(in: $0) }.first
        case .builtin(_, let arguments), .aggregate(let arguments):
            return arguments.lazy.compactMap { problem(in: $0) }.first
        case .binary(_, let lhs, let rhs), .index(let lhs, let rhs): return problem(in: lhs) ?? problem(in: rhs)
        case .negation(let operand): return problem(in: operand)
        case .constant, .variable, .evaluatedObject, .subquery: return nil
        }
    }
}
