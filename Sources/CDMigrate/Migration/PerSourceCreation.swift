/// Stage 1 of one entity mapping, row by row (`MigrationManager.createInstancesPerSource`): the
/// policy's `createDestinationInstances` for each source instance, or, for a mapping that makes
/// one destination per distinct value, the first source of a value making it and the others
/// associated with it.
///
/// What the enumeration's body needs is held here, in one object: a closure capturing the
/// manager, the mapping, the policy and the counters one by one counts a reference to each of
/// them on every row.
final class PerSourceCreation {
    private let manager: MigrationManager
    private let mapping: EntityMapping
    private let policy: EntityMigrationPolicy
    private let destination: PersistentStore
    private let total: Int
    /// The attribute whose distinct values each make one destination (`DistinctValueMapping`), if any.
    private let distinct: AttributeDescription?
    private var madeByValue: [Value: ManagedObject] = [:]
    /// The source instances taken so far.
    private(set) var processed = 0

    init(
        _ mapping: EntityMapping, policy: EntityMigrationPolicy, manager: MigrationManager,
        destination: PersistentStore, total: Int, distinct: AttributeDescription?
    ) {
        self.manager = manager
        self.mapping = mapping
        self.policy = policy
        self.destination = destination
        self.total = total
        self.distinct = distinct
    }

    /// Takes one source instance: its destinations made (or, by distinct value, found and
    /// associated), the destination saved every `batchSize` instances, progress reported.
    func take(_ sInstance: ManagedObject) throws {
        try manager.checkCancelled()
        manager.run.currentSource = sInstance
        if let attribute = distinct {
            let value = try sInstance.value(for: attribute)
            let key = DistinctValueMapping.comparable(value)
            if DistinctValueMapping.isNoValue(value) {
                // Makes nothing.
            } else if let made = madeByValue[key] {
                try manager.associate(sourceInstance: sInstance, withDestinationInstance: made, for: mapping)
            } else {
                madeByValue[key] = try policy.defaultCreateDestinationInstances(
                    forSource: sInstance, in: mapping, manager: manager)
            }
        } else {
            try policy.createDestinationInstances(forSource: sInstance, in: mapping, manager: manager)
        }
        manager.run.currentSource = nil
        processed += 1
        if processed % manager.batchSize == 0 { try destination.save() }
        try manager.notifyProgress(entityMappingName: mapping.name, processed: processed, total: total)
    }
}
