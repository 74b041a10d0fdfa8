/// Which source rows each entity mapping of a pass takes, as a fetch request: the source
/// predicate pushed into SQL where it translates (evaluated per row where it does not), and the
/// sub-entities that another mapping of the same pass takes left out, so that no row is migrated
/// twice through its parent's mapping (a known pitfall of Core Data's fetches).
enum SourceFetchPlan {
    static func plans(for mappings: [EntityMapping], sourceStore: PersistentStore) -> [FetchRequest?] {
        mappings.map { mapping -> FetchRequest? in
            guard let expression = mapping.sourceExpression, let entity = mapping.sourceEntity else { return nil }
            var request = FetchRequest(entityName: entity.name)
            request.includesSubentities = true
            let claimedElsewhere = mappings.compactMap { other -> EntityDescription? in
                guard other !== mapping, other.sourceExpression != nil, let sub = other.sourceEntity,
                    sub !== entity, sub.isKind(of: entity)
                else { return nil }
                return sub
            }
            var conditions: [String] = []
            if !claimedElsewhere.isEmpty {
                let numbers = claimedElsewhere.flatMap {
                    sourceStore.layout.entityNumbers(of: $0, includingSubentities: true)
                }
                conditions.append("t.Z_ENT NOT IN (\(numbers.map(String.init).joined(separator: ", ")))")
            }
            let predicate = expression.predicate
            if case .constant(true) = predicate {
            } else if let sql = PredicateSQLTranslator.translate(
                predicate, resolver: sourceStore.layout.columnResolver(for: entity))
            {
                conditions.append("(" + sql.sql + ")")
                request.arguments = sql.arguments
            } else {
                let evaluator = PredicateEvaluator()
                request.filter = { object in try evaluator.evaluate(predicate, object: .object(object)) }
            }
            if !conditions.isEmpty { request.sqlWhere = conditions.joined(separator: " AND ") }
            return request
        }
    }
}
