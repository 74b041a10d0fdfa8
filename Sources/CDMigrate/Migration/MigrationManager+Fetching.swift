/// Queries a policy can make during a migration, as Core Data policies do through
/// `manager.sourceContext` and `manager.destinationContext`: fetch and count instances with an
/// NSPredicate, and turn object IDs back into instances.
///
/// Destination fetches see every instance made so far, in this pass or an earlier one, including
/// those still waiting in the write buffer. A destination column compared in a translated predicate
/// gets an index for the rest of the migration (dropped before the store is handed over), so a
/// lookup by value in a loop over a million source rows does not scan the destination each time.
extension MigrationManager {
    /// `sortDescriptors` order the result in SQL (see `FetchSortDescriptor`); without them instances
    /// come in `Z_PK` order, the order they were made in.
    public func fetchDestinationInstances(
        entityName: String, predicate: String? = nil, arguments: [Value] = [], variables: [String: Value] = [:],
        includesSubentities: Bool = true, fetchLimit: Int? = nil,
        sortDescriptors: [FetchSortDescriptor] = []
    ) throws -> [ManagedObject] {
        let store = try runningStore(destination: true, "fetchDestinationInstances")
        var request = try lookupRequest(
            store, entityName, predicate, arguments, variables, includesSubentities, fetchLimit, index: true)
        try request.sort(by: sortDescriptors, in: store)
        return try store.fetch(request)
    }

    /// Counts the destination store's instances of `entityName` (and its subentities) that match `predicate`.
    ///
    /// - parameter entityName: The entity.
    /// - parameter predicate: NSPredicate text (nil for all), with `%@`-style `arguments` and `$variables`.
    /// - parameter arguments: The values of the predicate's `%@` placeholders, in order.
    /// - parameter variables: The values of the predicate's `$variables`, by name.
    /// - parameter includesSubentities: Whether instances of subentities count too.
    /// - returns: How many instances match.
    /// - throws: `MigrationError` when no migration runs, the entity is unknown, or the predicate does
    ///   not parse or names an unknown key.
    ///
    /// Core Data: `destinationContext.count(for:)` with an `NSFetchRequest`.
    public func countDestinationInstances(
        entityName: String, predicate: String? = nil, arguments: [Value] = [], variables: [String: Value] = [:],
        includesSubentities: Bool = true
    ) throws -> Int {
        let store = try runningStore(destination: true, "countDestinationInstances")
        return try store.count(
            try lookupRequest(store, entityName, predicate, arguments, variables, includesSubentities, nil, index: true)
        )
    }

    /// Fetches the source store's instances of `entityName` (and its subentities) that match `predicate`.
    ///
    /// - parameter entityName: The entity.
    /// - parameter predicate: NSPredicate text (nil for all), with `%@`-style `arguments` and `$variables`.
    /// - parameter arguments: The values of the predicate's `%@` placeholders, in order.
    /// - parameter variables: The values of the predicate's `$variables`, by name.
    /// - parameter includesSubentities: Whether instances of subentities are fetched too.
    /// - parameter fetchLimit: The most instances to return (nil: all).
    /// - parameter sortDescriptors: The order of the result (see `FetchSortDescriptor`).
    /// - returns: The matching instances, sorted as asked, else in primary-key order.
    /// - throws: `MigrationError` when no migration runs, the entity is unknown, or the predicate does
    ///   not parse or names an unknown key.
    ///
    /// Core Data: `sourceContext.fetch(_:)` with an `NSFetchRequest`.
    public func fetchSourceInstances(
        entityName: String, predicate: String? = nil, arguments: [Value] = [], variables: [String: Value] = [:],
        includesSubentities: Bool = true, fetchLimit: Int? = nil,
        sortDescriptors: [FetchSortDescriptor] = []
    ) throws -> [ManagedObject] {
        let store = try runningStore(destination: false, "fetchSourceInstances")
        var request = try lookupRequest(
            store, entityName, predicate, arguments, variables, includesSubentities, fetchLimit, index: false)
        try request.sort(by: sortDescriptors, in: store)
        return try store.fetch(request)
    }

    /// Counts the source store's instances of `entityName` (and its subentities) that match `predicate`.
    ///
    /// - parameter entityName: The entity.
    /// - parameter predicate: NSPredicate text (nil for all), with `%@`-style `arguments` and `$variables`.
    /// - parameter arguments: The values of the predicate's `%@` placeholders, in order.
    /// - parameter variables: The values of the predicate's `$variables`, by name.
    /// - parameter includesSubentities: Whether instances of subentities count too.
    /// - returns: How many instances match.
    /// - throws: `MigrationError` when no migration runs, the entity is unknown, or the predicate does
    ///   not parse or names an unknown key.
    ///
    /// Core Data: `sourceContext.count(for:)` with an `NSFetchRequest`.
    public func countSourceInstances(
        entityName: String, predicate: String? = nil, arguments: [Value] = [], variables: [String: Value] = [:],
        includesSubentities: Bool = true
    ) throws -> Int {
        let store = try runningStore(destination: false, "countSourceInstances")
        return try store.count(
            try lookupRequest(
                store, entityName, predicate, arguments, variables, includesSubentities, nil, index: false))
    }

    /// The source or destination instance an object ID names (nil when there is no such row).
    public func instance(with id: ObjectID) throws -> ManagedObject? {
        if let destination = destinationStore, id.storeIdentifier == destination.storeIdentifier {
            return try destination.object(with: id)
        }
        if let source = sourceStore, id.storeIdentifier == source.storeIdentifier { return try source.object(with: id) }
        if destinationStore == nil && sourceStore == nil {
            throw MigrationError(.invalidArgument, "instance(with:) is only available while a migration runs")
        }
        throw MigrationError(
            .invalidArgument,
            "object ID \(id) belongs to neither the source nor the destination store of this migration")
    }

    /// The instance a URI from `ObjectID.uriRepresentation` names.
    public func instance(forURI uri: String) throws -> ManagedObject? {
        guard let id = ObjectID(uri: uri) else {
            throw MigrationError(
                .invalidArgument, "'\(uri)' is not an object ID URI (x-coredata://<store UUID>/<Entity>/p<number>)")
        }
        return try instance(with: id)
    }

    /// The destination (or source) store of the running migration; `what` (the call) is named
    /// in the error when no migration runs.
    func runningStore(destination: Bool, _ what: String) throws -> PersistentStore {
        guard let store = destination ? destinationStore : sourceStore else {
            throw MigrationError(.invalidArgument, "\(what) is only available while a migration runs")
        }
        return store
    }

    private func lookupRequest(
        _ store: PersistentStore, _ entityName: String, _ predicate: String?, _ arguments: [Value],
        _ variables: [String: Value],
        _ includesSubentities: Bool, _ fetchLimit: Int?, index: Bool
    ) throws -> FetchRequest {
        var request = try FetchRequest(
            entityName: entityName, predicate: predicate, arguments: arguments, variables: variables, in: store)
        request.includesSubentities = includesSubentities
        request.fetchLimit = fetchLimit
        if index, let entity = store.model.entity(named: entityName) {
            let table = store.layout.table(for: entity)
            for column in request.columnsUsed where !run.lookupIndexes.contains(table + "." + column) {
                let name = "cdm_lookup_\(table)_\(column)"
                try store.database.exec(
                    "CREATE INDEX IF NOT EXISTS \(SQLiteDatabase.quote(name)) ON \(SQLiteDatabase.quote(table)) (\(SQLiteDatabase.quote(column)))"
                )
                run.lookupIndexes.insert(table + "." + column)
                run.lookupIndexNames.append(name)
            }
        }
        return request
    }

    /// Removes the lookup indexes: they are not part of Core Data's layout.
    func dropLookupIndexes() throws {
        guard let store = destinationStore else { return }
        for name in run.lookupIndexNames {
            try store.database.exec("DROP INDEX IF EXISTS \(SQLiteDatabase.quote(name))")
        }
        run.lookupIndexNames = []
        run.lookupIndexes = []
    }
}
