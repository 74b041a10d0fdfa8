/// The source instances a request takes, counted once per run: stage 1 counts each mapping's
/// request and the report counts every source entity (`collectCounts`), and for an entity taken
/// whole both are the same `COUNT(*)`, a walk over every page of its table. The source does not
/// change during a run (`SourceAccess` reads one committed state), so a count is kept for the
/// run (`sourceCounts`, reset when a run starts); a copy that takes an entity whole keeps the rows
/// it wrote as the count (`runDeclaratively`). Requests with a Swift filter, a limit, an offset or
/// arguments are counted each time.
extension MigrationManager {
    func countSource(_ request: FetchRequest, in source: PersistentStore) throws -> Int {
        guard let key = sourceCountKey(request, in: source) else { return try source.count(request) }
        if let count = run.sourceCounts[key] { return count }
        let count = try source.count(request)
        run.sourceCounts[key] = count
        return count
    }

    /// The key of `request`'s count in `sourceCounts`: its table, entity restriction and SQL
    /// condition; nil for a request counted each time.
    func sourceCountKey(_ request: FetchRequest, in source: PersistentStore) -> String? {
        guard request.filter == nil, request.fetchLimit == nil, request.fetchOffset == 0, request.arguments.isEmpty,
            let entity = source.model.entity(named: request.entityName)
        else { return nil }
        return [
            source.layout.table(for: entity),
            source.layout.entityRestriction(
                for: entity, includingSubentities: request.includesSubentities, qualifier: "t.") ?? "",
            request.sqlWhere ?? "",
        ].joined(separator: "\u{1}")
    }
}
