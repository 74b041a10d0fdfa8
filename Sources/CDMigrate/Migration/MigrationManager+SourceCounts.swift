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

    /// The destination entities whose instances the run's SQL copies alone wrote, with their
    /// counts (`copiedRows`): every entity of a table that only copies wrote (every entity mapping
    /// into it ran its stage 1 as SQL, and no instance of its entities was made one at a time, by
    /// a policy, a batch or host code) has the rows the copies into it wrote, 0 when none.
    func copiedDestinationCounts(in destination: PersistentStore) -> [ObjectIdentifier: Int] {
        var writers: [String: [EntityMapping]] = [:]
        for model in mappingModels {
            for mapping in model.entityMappings {
                guard let entity = mapping.destinationEntity else { continue }
                writers[destination.layout.table(for: entity), default: []].append(mapping)
            }
        }
        var counts: [ObjectIdentifier: Int] = [:]
        for entity in destinationModel.entitiesInStoreOrder where !entity.isAbstract {
            let table = destination.layout.table(for: entity)
            guard let mappings = writers[table], !mappings.isEmpty,
                mappings.allSatisfy({ run.copiedRows[ObjectIdentifier($0)] != nil }),
                !destinationModel.entitiesInStoreOrder.contains(where: {
                    destination.layout.table(for: $0) == table
                        && destination.entitiesWrittenByInstance.contains(ObjectIdentifier($0))
                })
            else { continue }
            counts[ObjectIdentifier(entity)] = mappings.reduce(0) { sum, mapping in
                guard let copied = run.copiedRows[ObjectIdentifier(mapping)], copied.entity === entity else {
                    return sum
                }
                return sum + copied.rows
            }
        }
        return counts
    }
}
