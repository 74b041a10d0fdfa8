/// The report's destination counts where the run's SQL copies wrote the rows: what the copies
/// counted as they wrote (`runDeclaratively`, `copiedRows`), not a `COUNT(*)` walk of each table.
extension MigrationManager {
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
        let writtenByInstance = Set(
            destinationModel.entitiesInStoreOrder.filter {
                destination.entitiesWrittenByInstance.contains(ObjectIdentifier($0))
            }.map { destination.layout.table(for: $0) })
        var counts: [ObjectIdentifier: Int] = [:]
        for entity in destinationModel.entitiesInStoreOrder where !entity.isAbstract {
            let table = destination.layout.table(for: entity)
            guard !writtenByInstance.contains(table), let mappings = writers[table],
                mappings.allSatisfy({ run.copiedRows[ObjectIdentifier($0)] != nil })
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
