/// Fetch requests from NSPredicate text: the predicate runs as SQL where it translates and per
/// instance where it does not.
extension FetchRequest {
    /// A request for `entityName` instances matching `predicate` (nil or "TRUEPREDICATE" for all),
    /// with `%@`-style `arguments` and `$variables`.
    public init(
        entityName: String, predicate: String?, arguments: [Value] = [], variables: [String: Value] = [:],
        in store: PersistentStore
    ) throws {
        self.init(entityName: entityName)
        guard let text = predicate else { return }
        let parsed: FilterPredicate
        do {
            parsed = try ExpressionParser.parsePredicate(text, arguments: arguments, variables: variables)
        } catch let error as MigrationError {
            throw MigrationError(
                error.code, "predicate for a fetch of '\(entityName)': \(error.message)", offset: error.offset,
                byteOffset: error.byteOffset)
        }
        try self.init(entityName: entityName, predicate: parsed, in: store)
    }

    /// A request for the instances of `entityName` matching an already parsed predicate.
    ///
    /// - parameter entityName: The entity.
    /// - parameter predicate: The predicate; it runs as SQL where it translates, per instance elsewhere.
    /// - parameter store: The store the request is for (its layout gives the columns).
    /// - throws: `MigrationError` when the entity is unknown or the predicate names an unknown key.
    public init(entityName: String, predicate: FilterPredicate, in store: PersistentStore) throws {
        self.init(entityName: entityName)
        guard let entity = store.model.entity(named: entityName) else {
            throw MigrationError(.invalidArgument, "cannot fetch '\(entityName)': the store's model has no such entity")
        }
        if case .constant(true) = predicate { return }
        if let problem = KeyPathCheck(entity: entity).problem(in: predicate) {
            throw MigrationError(
                .invalidArgument, "predicate '\(predicate)' for a fetch of '\(entityName)': \(problem)")
        }
        let resolver = RecordingColumnResolver(base: store.layout.columnResolver(for: entity))
        if let sql = PredicateSQLTranslator.translate(predicate, resolver: resolver) {
            sqlWhere = sql.sql
            arguments = sql.arguments
            columnsUsed = resolver.columns.used
        } else {
            let evaluator = PredicateEvaluator()
            filter = { object in try evaluator.evaluate(predicate, object: .object(object)) }
        }
    }
}

/// Notes which columns a translated predicate reads, so a caller can index them.
private final class RecordingColumnResolver: SQLColumnResolver {
    final class Columns { var used: [String] = [] }
    let base: SQLColumnResolver
    let columns = Columns()
    init(base: SQLColumnResolver) { self.base = base }

    func sqlColumn(forKeyPath keys: [String]) -> (sql: String, type: AttributeType)? {
        let column = base.sqlColumn(forKeyPath: keys)
        if let sql = column?.sql, !columns.used.contains(sql) { columns.used.append(sql) }
        return column
    }
}
