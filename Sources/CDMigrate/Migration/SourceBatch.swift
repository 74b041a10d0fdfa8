/// A batch of source instances for a policy's batch hook — cdmigrate's extension beyond Core
/// Data, whose `createDestinationInstances` sees one source instance at a time.
///
/// A policy that overrides `createDestinationInstances(forSourceBatch:in:manager:)` gets the
/// rows its entity mapping selects in batches of `MigrationManager.batchSize`, in primary-key
/// order, and works on whole arrays: the batch's source keys, its attribute columns decoded in
/// bulk, Core Data's default for every row at once (`applyDefault()`), and associations for many
/// rows at once (`associate(destinationEntityName:sourceKeys:destinationKeys:)`). With the
/// manager's `createDestinationInstances(entityName:values:)` and
/// `relate(entityName:relationshipName:owners:targets:)` a policy's work per row is a few array
/// elements, not a call per value.
///
/// A batch is valid only during the hook call that received it.
public final class SourceBatch {
    /// The entity mapping being run.
    public let mapping: EntityMapping
    /// The source rows' primary keys, ascending.
    public let sourceKeys: [Int64]
    /// The concrete source entity of each row (a mapping may take sub-entities).
    let sourceEntities: [EntityDescription]
    /// The rows as instances, when the batch was read whole (a source predicate evaluated per row).
    let sourceObjects: [ManagedObject]?
    unowned let manager: MigrationManager
    /// `applyDefault` as one `INSERT … SELECT` over the batch's keys, when the mapping translates.
    let defaultSQL: BatchDefaultSQL?
    /// Set by the hook's caller once it returns: later calls throw instead of touching a stale batch.
    var isFinished = false
    /// Whether `applyDefault` ran (it runs once per batch).
    var defaultApplied = false

    init(
        mapping: EntityMapping, sourceKeys: [Int64], sourceEntities: [EntityDescription],
        sourceObjects: [ManagedObject]?,
        manager: MigrationManager, defaultSQL: BatchDefaultSQL?
    ) {
        self.mapping = mapping
        self.sourceKeys = sourceKeys
        self.sourceEntities = sourceEntities
        self.sourceObjects = sourceObjects
        self.manager = manager
        self.defaultSQL = defaultSQL
    }

    /// The number of source rows in the batch.
    public var count: Int { sourceKeys.count }

    func checkLive(_ what: String) throws {
        if isFinished {
            throw MigrationError(
                .invalidArgument,
                "\(what): the source batch of entity mapping '\(mapping.name)' is no longer valid (its hook returned)")
        }
    }

    /// The source instances, as faults where the batch holds only keys.
    ///
    /// - returns: One instance per source key, in order.
    /// - throws: `MigrationError` when the batch is no longer valid.
    public func sourceInstances() throws -> [ManagedObject] {
        try checkLive("sourceInstances")
        if let objects = sourceObjects { return objects }
        guard let source = manager.sourceStore else { return [] }
        return zip(sourceEntities, sourceKeys).map { source.fault(entity: $0.0, primaryKey: $0.1) }
    }

    /// The values of one attribute of the source entity (or of one of its sub-entities) for every
    /// row, read in one query: a row whose entity lacks the attribute gives null. Values are the
    /// columns' as the store keeps them: a transformable attribute gives its stored bytes (an
    /// instance's `value(forKey:)` reads them as the object they hold).
    ///
    /// - parameter attributeName: The source attribute's name.
    /// - returns: One value per source key, in order.
    /// - throws: `MigrationError` `.invalidArgument` naming the attribute when the source entity
    ///   has none of that name, or `.sqlite` when the store cannot be read.
    public func values(ofAttribute attributeName: String) throws -> [Value] {
        try checkLive("values(ofAttribute:)")
        guard let entity = mapping.sourceEntity, let source = manager.sourceStore else { return [] }
        guard let attribute = entity.selfAndDescendants.lazy.compactMap({ $0.attributesByName[attributeName] }).first
        else {
            throw MigrationError(
                .invalidArgument,
                "entity mapping '\(mapping.name)': source entity '\(entity.name)' has no attribute '\(attributeName)'")
        }
        if let objects = sourceObjects {
            return try objects.map { object in
                try object.entity.attributesByName[attributeName].map { try object.storedValue(for: $0) } ?? .null
            }
        }
        guard let low = sourceKeys.first, let high = sourceKeys.last else { return [] }
        guard let column = source.layout.column(for: attribute) else {
            return Array(repeating: .null, count: sourceKeys.count)
        }
        let table = SQLiteDatabase.quote(source.layout.table(for: entity))
        let statement = try source.database.prepare(
            "SELECT Z_PK, \(SQLiteDatabase.quote(column)) FROM \(table) WHERE Z_PK BETWEEN ? AND ? ORDER BY Z_PK")
        defer { statement.reset() }
        try statement.bind([.integer(low), .integer(high)])
        var result: [Value] = []
        result.reserveCapacity(sourceKeys.count)
        var index = 0
        while index < sourceKeys.count, try statement.step() {
            let key = statement.int64(at: 0)
            while index < sourceKeys.count, sourceKeys[index] < key {
                result.append(.null)  // a key the query did not return (the row is gone)
                index += 1
            }
            guard index < sourceKeys.count, sourceKeys[index] == key else { continue }
            result.append(
                sourceEntities[index].attributesByName[attributeName] != nil
                    ? try source.attributeValue(
                        statement.value(at: 1, as: attribute.attributeType), of: attribute, table: table,
                        primaryKey: key) : .null)
            index += 1
        }
        while result.count < sourceKeys.count { result.append(.null) }
        return result
    }

    /// Core Data's default `createDestinationInstances` for every row of the batch: a destination
    /// instance of the mapping's destination entity, the mapping's attribute mappings applied, and
    /// the association source → destination. Where the attribute mappings translate to SQL (see
    /// `DeclarativeMappingSQL`) this is one `INSERT … SELECT` over the batch's keys; otherwise the
    /// rows are made one by one in the engine.
    ///
    /// - returns: The destination instances' primary keys, one per source key, in order (empty for
    ///   a mapping without a destination entity).
    /// - throws: `MigrationError` when an attribute mapping fails to evaluate or set, or
    ///   `.invalidArgument` when it already ran for this batch.
    ///
    /// - parameter numbered: True to number the new instances as instances made one by one in row
    ///   order would be (the next keys of their table), never keeping the source keys — which the
    ///   SQL keeps, when the mapping takes its source entity whole into an empty table, unless an
    ///   earlier batch of the mapping was numbered. For a host that makes some batches' rows one
    ///   by one and must number every row as Core Data's per-row calls would.
    ///
    /// Core Data: `super.createDestinationInstances(forSource:in:manager:)`, once per row.
    @discardableResult
    public func applyDefault(numbered: Bool = false) throws -> [Int64] {
        try checkLive("applyDefault")
        guard !defaultApplied else {
            throw MigrationError(
                .invalidArgument,
                "applyDefault: it already ran for this batch of entity mapping '\(mapping.name)' (once per batch)")
        }
        defaultApplied = true
        guard let destinationEntity = mapping.destinationEntity, !sourceKeys.isEmpty else { return [] }
        if let plan = defaultSQL {
            return try manager.applyDefault(plan, to: self, destinationEntity: destinationEntity, numbered: numbered)
        }
        var keys: [Int64] = []
        keys.reserveCapacity(sourceKeys.count)
        let policy = DefaultEntityMigrationPolicy()
        for source in try sourceInstances() {
            guard
                let made = try policy.defaultCreateDestinationInstances(
                    forSource: source, in: mapping, manager: manager)
            else { return [] }
            keys.append(made.objectID.primaryKey)
        }
        return keys
    }

    /// Records that the destination instances of `destinationEntityName` with `destinationKeys`
    /// were made from the batch's source rows with `sourceKeys` (pair by pair), so that
    /// relationship mappings and look-ups find them.
    ///
    /// - parameter destinationEntityName: The destination instances' concrete entity.
    /// - parameter sourceKeys: Keys of this batch's rows.
    /// - parameter destinationKeys: Keys of existing destination instances, as many as `sourceKeys`.
    /// - throws: `MigrationError` `.invalidArgument` for an unknown entity, arrays of different
    ///   lengths or a source key that is not in the batch.
    ///
    /// Core Data: `associateSourceInstance:withDestinationInstance:forEntityMapping:`, once per pair.
    public func associate(destinationEntityName: String, sourceKeys: [Int64], destinationKeys: [Int64]) throws {
        try checkLive("associate")
        guard sourceKeys.count == destinationKeys.count else {
            throw MigrationError(
                .invalidArgument,
                "associate: \(sourceKeys.count) source keys but \(destinationKeys.count) destination keys")
        }
        guard let entity = manager.destinationModel.entity(named: destinationEntityName), !entity.isAbstract else {
            throw MigrationError(
                .invalidArgument,
                "associate: the destination model has no concrete entity named '\(destinationEntityName)'")
        }
        var sourceEntityNumbers: [Int] = []
        sourceEntityNumbers.reserveCapacity(sourceKeys.count)
        for key in sourceKeys {
            guard let index = position(of: key) else {
                throw MigrationError(
                    .invalidArgument,
                    "associate: source key \(key) is not a row of this batch of entity mapping '\(mapping.name)'")
            }
            sourceEntityNumbers.append(sourceEntities[index].entityNumber)
        }
        try manager.associate(
            mapping: mapping, sourceEntities: sourceEntityNumbers, sourceKeys: sourceKeys,
            destinationEntity: entity, destinationKeys: destinationKeys)
    }

    /// The index of `key` among the (ascending) source keys.
    func position(of key: Int64) -> Int? {
        var low = 0
        var high = sourceKeys.count - 1
        while low <= high {
            let middle = (low + high) / 2
            if sourceKeys[middle] == key { return middle }
            if sourceKeys[middle] < key { low = middle + 1 } else { high = middle - 1 }
        }
        return nil
    }
}
