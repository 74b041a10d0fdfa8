/// Fetching by entity name and NSPredicate text, in one call: what a test reads a store with.
extension PersistentStore {
    /// The instances of `entityName` (and its subentities) matching `predicate`, in the order of
    /// `sortDescriptors`, at most `limit` of them. Their attributes are read; relationships are
    /// read when asked for (`value(forKey:)`): a to-one gives the related instance (a fault whose
    /// values are read on first use), a to-many a collection, an ordered one in its order.
    ///
    /// - Parameters:
    ///   - entityName: the entity fetched.
    ///   - predicate: NSPredicate text (`"title BEGINSWITH %@ AND author.name == $name"`), nil for all.
    ///   - arguments: the values of the predicate's `%@`s, in order.
    ///   - variables: the values of its `$variables`.
    ///   - sortDescriptors: attributes to sort by, in order; `Z_PK` order without (and between ties).
    ///   - limit: at most this many instances; nil for all.
    ///   - includesSubentities: whether instances of subentities are fetched too (Core Data's default).
    /// - Returns: the instances.
    /// - Throws: `MigrationError` `.invalidArgument` naming the entity (with the nearest name the
    ///   model has) when the model has no such entity, or a sort key that is not a stored
    ///   attribute; `.expressionSyntax` with the offset in the predicate when it does not parse;
    ///   `.invalidArgument` for an unknown key or a missing argument; `.sqlite` when the store
    ///   cannot be read.
    ///
    /// Core Data counterpart: `NSManagedObjectContext.fetch(_:)` of an `NSFetchRequest` with
    /// `predicate`, `sortDescriptors`, `fetchLimit` and `includesSubentities`.
    public func fetch(
        _ entityName: String, predicate: String? = nil, arguments: [Value] = [], variables: [String: Value] = [:],
        sortDescriptors: [FetchSortDescriptor] = [], limit: Int? = nil, includesSubentities: Bool = true
    ) throws -> [ManagedObject] {
        let request = try predicateRequest(
            entityName, predicate: predicate, arguments: arguments, variables: variables,
            sortDescriptors: sortDescriptors, limit: limit, includesSubentities: includesSubentities)
        return try fetch(request)
    }

    /// How many instances `fetch(_:predicate:…)` would give.
    ///
    /// - Throws: as `fetch(_:predicate:…)`.
    ///
    /// Core Data counterpart: `NSManagedObjectContext.count(for:)`.
    public func count(
        _ entityName: String, predicate: String? = nil, arguments: [Value] = [], variables: [String: Value] = [:],
        includesSubentities: Bool = true
    ) throws -> Int {
        let request = try predicateRequest(
            entityName, predicate: predicate, arguments: arguments, variables: variables,
            sortDescriptors: [], limit: nil, includesSubentities: includesSubentities)
        return try count(request)
    }

    private func predicateRequest(
        _ entityName: String, predicate: String?, arguments: [Value], variables: [String: Value],
        sortDescriptors: [FetchSortDescriptor], limit: Int?, includesSubentities: Bool
    ) throws -> FetchRequest {
        try checkOpen()
        guard model.entity(named: entityName) != nil else {
            throw MigrationError(
                .invalidArgument,
                "cannot fetch '\(entityName)': the model \(PersistentStore.describe(model)) has no such entity\(SpellingSuggestion.hint(entityName, among: model.entities.map { $0.name }))"
            )
        }
        var request = try FetchRequest(
            entityName: entityName, predicate: predicate, arguments: arguments, variables: variables, in: self)
        try request.sort(by: sortDescriptors, in: self)
        request.fetchLimit = limit
        request.includesSubentities = includesSubentities
        return request
    }
}
