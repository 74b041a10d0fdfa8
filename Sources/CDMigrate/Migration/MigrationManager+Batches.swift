/// The SQL of Core Data's default for the batches of one mapping (`SourceBatch.applyDefault`):
/// over a key range the batch fills, or over the batch's keys listed in a temporary table.
///
/// A mapping that takes its source entity whole into an empty table keeps the source keys, as a
/// declarative mapping does (`DeclarativeMappingSQL.canKeepSourceKeys`): the destination keys up
/// to the source's largest are reserved for it, each row keeps its source key, and the
/// associations are implied (`AssociationTable.IdentityRange`, recorded before the first batch);
/// once something reads them row by row they are written, and later batches write theirs.
final class BatchDefaultSQL {
    let contiguous: DeclarativeMappingSQL
    let listed: DeclarativeMappingSQL
    /// The plan that keeps source keys, and the identity's range, when the mapping may keep them:
    /// taken by the first `applyDefault` when nothing has been made in the destination table yet
    /// (a policy may make instances itself first, and they must keep the keys they were given),
    /// dropped otherwise.
    var identity: (plan: DeclarativeMappingSQL, low: Int64, high: Int64)?
    /// The plan that copies the source keys, for a numbered batch whose keys are the ones its rows
    /// would be numbered with (`applyDefault(numbered:)`): nil when the mapping takes sub-entities.
    var keeping: DeclarativeMappingSQL?
    /// Whether the identity is in force: its keys reserved and its associations recorded.
    var identityTaken = false
    /// The mapping's source instances (the identity's count until the last batch).
    let total: Int
    /// Rows made so far (the identity's count).
    var made = 0

    init(
        contiguous: DeclarativeMappingSQL, listed: DeclarativeMappingSQL,
        identity: (plan: DeclarativeMappingSQL, low: Int64, high: Int64)?,
        total: Int
    ) {
        self.contiguous = contiguous
        self.listed = listed
        self.identity = identity
        self.total = total
    }
}

/// Stage 1 in batches for a policy with a batch hook, and the bulk operations such a policy
/// calls — cdmigrate's extension beyond Core Data (see `SourceBatch`).
extension MigrationManager {
    /// The temporary table of a batch's source keys (destination connection), joined by `applyDefault`'s SQL.
    static let batchKeyTable = "temp.cdm_batch_key"

    /// Stage 1 through the policy's batch hook: the mapping's source rows in batches of
    /// `batchSize`, in key order, read as keys only unless a source predicate must be evaluated
    /// per row.
    func createInstancesInBatches(
        _ mapping: EntityMapping, policy: EntityMigrationPolicy, request: FetchRequest, total: Int,
        source: PersistentStore, destination: PersistentStore
    ) throws -> Int {
        guard let sourceEntity = source.model.entity(named: request.entityName) else { return 0 }
        let size = max(batchSize, 1)
        let plan = try batchDefaultPlan(
            mapping, request: request, total: total, source: source, destination: destination)
        var processed = 0
        func run(_ keys: [Int64], _ entities: [EntityDescription], _ objects: [ManagedObject]?) throws {
            try checkCancelled()
            let batch = SourceBatch(
                mapping: mapping, sourceKeys: keys, sourceEntities: entities, sourceObjects: objects,
                manager: self, defaultSQL: plan)
            defer { batch.isFinished = true }
            try policy.createDestinationInstances(forSourceBatch: batch, in: mapping, manager: self)
            processed += keys.count
            try destination.save()
            try notifyProgress(entityMappingName: mapping.name, processed: processed, total: total, force: true)
        }
        if request.filter == nil {
            // The key after which the next batch starts; none for the first (a key may be INT64_MIN).
            var last: Int64?
            while true {
                var keys: [Int64] = []
                var entities: [EntityDescription] = []
                keys.reserveCapacity(size)
                let after = last.map { [Value.integer($0)] } ?? []
                let conditions = [request.sqlWhere.map { "(\($0))" }, last == nil ? nil : "t.Z_PK > ?"].compactMap {
                    $0
                }
                try source.query(
                    sourceEntity, includesSubentities: request.includesSubentities,
                    condition: conditions.isEmpty ? nil : conditions.joined(separator: " AND "),
                    arguments: request.arguments + after, limit: size, faults: true
                ) { fault in
                    keys.append(fault.objectID.primaryKey)
                    entities.append(fault.entity)
                    return true
                }
                guard let end = keys.last else { break }
                try run(keys, entities, nil)
                if keys.count < size { break }
                last = end
            }
        } else {
            var objects: [ManagedObject] = []
            try source.enumerate(request) { object in
                objects.append(object)
                if objects.count >= size {
                    try run(objects.map { $0.objectID.primaryKey }, objects.map { $0.entity }, objects)
                    objects.removeAll(keepingCapacity: true)
                }
                return true
            }
            if !objects.isEmpty { try run(objects.map { $0.objectID.primaryKey }, objects.map { $0.entity }, objects) }
        }
        try finishBatchDefault(plan, mapping, total: total, destination: destination)
        return processed
    }

    /// The SQL of `SourceBatch.applyDefault` for the mapping, or nil when its attribute mappings
    /// need the engine (or SQL is off): the source is attached and the key table made here,
    /// outside any batch's transaction.
    private func batchDefaultPlan(
        _ mapping: EntityMapping, request: FetchRequest, total: Int,
        source: PersistentStore, destination: PersistentStore
    ) throws -> BatchDefaultSQL? {
        guard pushDownSQL, run.sourceAccess?.allowsAttach == true, let sourceEntity = mapping.sourceEntity,
            let destinationEntity = mapping.destinationEntity, !destinationEntity.isAbstract, run.associations != nil
        else { return nil }
        let sourceTable = SQLiteDatabase.quote(source.layout.table(for: sourceEntity))
        let table = "\(DeclarativeMappingSQL.sourceSchema).\(sourceTable)"
        var whole = FetchRequest(entityName: sourceEntity.name)
        whole.includesSubentities = true
        // The key range bounds every statement: SQLite then walks the batch's rows, never the whole table.
        let range = "\(table) t WHERE t.Z_PK BETWEEN ? AND ?"
        func plan(_ rows: String, keepsSourceKeys: Bool = false) -> DeclarativeMappingSQL? {
            DeclarativeMappingSQL.plan(
                mapping: mapping, request: whole, mappingID: mappingID(mapping), keepsSourceKeys: keepsSourceKeys,
                batchRows: rows, source: source, destination: destination)
        }
        guard let contiguous = plan(range),
            let listed = plan(range + " AND t.Z_PK IN (SELECT pk FROM \(Self.batchKeyTable))")
        else { return nil }
        var identity: (plan: DeclarativeMappingSQL, low: Int64, high: Int64)?
        if keepsSourceKeys, total > 0,
            DeclarativeMappingSQL.canKeepSourceKeys(
                mapping: mapping, request: request,
                destinationTableIsEmpty: destination.lastAllocatedPrimaryKey(for: destinationEntity) == 0),
            try DeclarativeMappingSQL.sourceKeysLeaveRoom(sourceEntity, in: source),
            let keeping = plan(range, keepsSourceKeys: true),
            let low = try source.database.scalar("SELECT MIN(Z_PK) FROM \(sourceTable)")?.integer,
            let high = try source.database.scalar("SELECT MAX(Z_PK) FROM \(sourceTable)")?.integer
        {
            identity = (keeping, low, high)
        }
        try attachSource(source, to: destination)
        try destination.database.exec("CREATE TEMP TABLE IF NOT EXISTS cdm_batch_key (pk INTEGER PRIMARY KEY)")
        let made = BatchDefaultSQL(contiguous: contiguous, listed: listed, identity: identity, total: total)
        made.keeping = keepsSourceKeys && sourceEntity.subentities.isEmpty ? plan(range, keepsSourceKeys: true) : nil
        return made
    }

    /// Takes the identity of `sql` (the destination keeps the source keys) at the first
    /// `applyDefault`, when nothing has been made in the destination table yet; drops it otherwise.
    private func takeIdentity(_ sql: BatchDefaultSQL, _ mapping: EntityMapping, destination: PersistentStore) throws {
        guard !sql.identityTaken, let identity = sql.identity else { return }
        guard sql.made == 0, let associations = run.associations, let sourceEntity = mapping.sourceEntity,
            let destinationEntity = mapping.destinationEntity,
            destination.lastAllocatedPrimaryKey(for: destinationEntity) == 0
        else {
            sql.identity = nil
            return
        }
        destination.reservePrimaryKeys(for: destinationEntity, upTo: identity.high)
        try associations.recordIdentity(
            mapping: mappingID(mapping), sourceEntity: sourceEntity.entityNumber,
            destinationEntity: destinationEntity.entityNumber,
            destinationTable: SQLiteDatabase.quote(destination.layout.table(for: destinationEntity)),
            low: identity.low, high: identity.high, count: sql.total)
        sql.identityTaken = true
    }

    /// After the last batch: the identity's count is the rows the batches made.
    private func finishBatchDefault(
        _ sql: BatchDefaultSQL?, _ mapping: EntityMapping, total: Int, destination: PersistentStore
    ) throws {
        guard let sql = sql, sql.identityTaken, let identity = sql.identity, sql.made != total,
            let associations = run.associations,
            associations.identities[mappingID(mapping)] != nil,
            let sourceEntity = mapping.sourceEntity, let destinationEntity = mapping.destinationEntity
        else { return }
        try associations.recordIdentity(
            mapping: mappingID(mapping), sourceEntity: sourceEntity.entityNumber,
            destinationEntity: destinationEntity.entityNumber,
            destinationTable: SQLiteDatabase.quote(destination.layout.table(for: destinationEntity)),
            low: identity.low, high: identity.high, count: sql.made)
    }

    /// `SourceBatch.applyDefault` as SQL: the plan's INSERTs over the batch's key range, and
    /// when the batch does not hold every key of its range, over the keys put in the key table.
    func applyDefault(
        _ sql: BatchDefaultSQL, to batch: SourceBatch, destinationEntity: EntityDescription, numbered: Bool = false
    ) throws -> [Int64] {
        guard let destination = destinationStore, let low = batch.sourceKeys.first, let high = batch.sourceKeys.last
        else { return [] }
        try destination.flush()
        try run.associations?.writeBufferedRows()  // the table's rowids keep the order associations were made in
        try destination.beginIfNeeded()
        let database = destination.database
        let id = mappingID(batch.mapping)
        if numbered, !sql.identityTaken {
            sql.identity = nil  // numbered as instances made one by one: the source keys are never kept
        }
        try takeIdentity(sql, batch.mapping, destination: destination)
        sql.made += batch.count
        if sql.identityTaken, let identity = sql.identity {
            // Every source row of the range is in the batch (the mapping takes the entity whole).
            try identity.plan.runInsertRows(on: database, [.integer(low), .integer(high)], keys: low...high)
            if run.associations?.identities[id] == nil, let sourceEntity = batch.mapping.sourceEntity {
                // The implied associations were written out for a reader: write this batch's too.
                try database.run(
                    """
                    INSERT INTO cdm_association SELECT \(id), \(sourceEntity.entityNumber), Z_PK, \(destinationEntity.entityNumber), Z_PK
                    FROM main.\(SQLiteDatabase.quote(destination.layout.table(for: destinationEntity))) WHERE Z_PK BETWEEN ? AND ? ORDER BY Z_PK
                    """, [.integer(low), .integer(high)])
            }
            return batch.sourceKeys
        }
        let plan: DeclarativeMappingSQL
        // high − low may pass INT64_MAX (keys at both ends of the range): then the range is not full.
        let (span, overflow) = high.subtractingReportingOverflow(low)
        if !overflow, span < Int64(batch.count), span + 1 == Int64(batch.count) {
            plan = sql.contiguous  // ascending distinct keys filling their range: every row of it
        } else {
            plan = sql.listed
            try database.run("DELETE FROM \(Self.batchKeyTable)")
            let insert = try database.prepare("INSERT OR IGNORE INTO \(Self.batchKeyTable) (pk) VALUES (?)")
            for key in batch.sourceKeys { try insert.run([.integer(key)]) }
        }
        let first = try destination.allocatePrimaryKeys(for: destinationEntity, count: batch.count)
        let arguments = plan.arguments(firstPrimaryKey: first) + [.integer(low), .integer(high)]
        if run.associations?.identities[id] != nil { try run.associations?.materialize([id]) }
        if numbered, first == low, plan.insertRows == sql.contiguous.insertRows, let keeping = sql.keeping {
            // Numbered with the source keys themselves: copied as they are, without numbering the rows in SQL.
            try keeping.runInsertRows(on: database, [.integer(low), .integer(high)], keys: low...high)
        } else {
            try plan.runInsertRows(on: database, arguments, keys: first...(first + Int64(max(batch.count, 1) - 1)))
        }
        if let insertAssociations = plan.insertAssociations,
            try !recordKeyRanges(of: batch, destinationEntity: destinationEntity, firstPrimaryKey: first)
        {
            try database.run(insertAssociations, arguments)
        }
        return (0..<Int64(batch.count)).map { first + $0 }
    }

    /// Records the associations of a batch whose rows were given consecutive keys from
    /// `firstPrimaryKey` in source-key order as key ranges (`AssociationTable.KeyRange`): one per
    /// run of consecutive source keys. False when they are better written as rows: the rows are of
    /// several source entities, or the keys are scattered (runs shorter than 16 keys on average).
    private func recordKeyRanges(
        of batch: SourceBatch, destinationEntity: EntityDescription, firstPrimaryKey first: Int64
    ) throws -> Bool {
        guard recordsAssociationKeyRanges, let associations = run.associations, let destination = destinationStore,
            let sourceEntity = batch.sourceEntities.first,
            batch.sourceEntities.allSatisfy({ $0 === sourceEntity })
        else { return false }
        let keys = batch.sourceKeys
        var runs: [(low: Int64, high: Int64, destinationLow: Int64)] = []
        var start = 0
        for i in 1...keys.count where i == keys.count || keys[i - 1] == Int64.max || keys[i] != keys[i - 1] + 1 {
            runs.append((keys[start], keys[i - 1], first + Int64(start)))
            start = i
            if runs.count > 1, runs.count * 16 > keys.count { return false }
        }
        return try associations.recordKeyRanges(
            mapping: mappingID(batch.mapping), sourceEntity: sourceEntity.entityNumber,
            destinationEntity: destinationEntity.entityNumber,
            destinationTable: SQLiteDatabase.quote(destination.layout.table(for: destinationEntity)), runs: runs)
    }

    /// Records many associations of `mapping` at once (see `SourceBatch.associate`).
    func associate(
        mapping: EntityMapping, sourceEntities: [Int], sourceKeys: [Int64], destinationEntity: EntityDescription,
        destinationKeys: [Int64]
    ) throws {
        guard let associations = run.associations, let destination = destinationStore else {
            throw MigrationError(.invalidArgument, "associate is only available while a migration runs")
        }
        let id = mappingID(mapping)
        guard id >= 0 else {
            throw MigrationError(
                .invalidArgument, "associate: entity mapping '\(mapping.name)' is not part of this migration")
        }
        try checkKeys(destinationKeys, of: destinationEntity, in: destination, "associate")
        if associations.identities[id] != nil { try associations.materialize([id]) }
        try associations.writeBufferedRows()
        try destination.beginIfNeeded()
        let entityNumber = Int64(destinationEntity.entityNumber)
        try Self.insertRows(
            into: destination.database, "INSERT INTO cdm_association", count: sourceKeys.count, columns: 5
        ) { i, column in
            switch column {
            case 0: return Int64(id)
            case 1: return Int64(sourceEntities[i])
            case 2: return sourceKeys[i]
            case 3: return entityNumber
            default: return destinationKeys[i]
            }
        }
    }

    /// Makes one destination instance of `entityName` per element of `values`, each set from its
    /// dictionary (attribute name → value, converted to the attribute's type as `setValue` does) —
    /// cdmigrate's extension beyond Core Data, for batch hooks.
    ///
    /// - parameter entityName: A concrete destination entity.
    /// - parameter values: One dictionary of attribute values per instance to make.
    /// - returns: The new instances' primary keys, in order.
    /// - throws: `MigrationError` `.invalidArgument` for an unknown or abstract entity, a key that
    ///   is not one of its attributes, or a value that does not suit its attribute.
    ///
    /// Core Data: `NSEntityDescription.insertNewObject(forEntityName:into:)` and
    /// `setValuesForKeys(_:)`, once per instance.
    public func createDestinationInstances(entityName: String, values: [[String: Value]]) throws -> [Int64] {
        let destination = try runningStore(destination: true, "createDestinationInstances(entityName:values:)")
        guard let entity = destinationModel.entity(named: entityName) else {
            throw MigrationError(.invalidArgument, "the destination model has no entity named '\(entityName)'")
        }
        // Every value is checked before the first instance is made: a refused call makes nothing.
        var rows: [[(AttributeDescription, Value)]] = []
        rows.reserveCapacity(values.count)
        for (index, row) in values.enumerated() {
            var checked: [(AttributeDescription, Value)] = []
            for (key, value) in row {
                guard let attribute = entity.attributesByName[key] else {
                    throw MigrationError(
                        .invalidArgument,
                        "instance \(index) of '\(entityName)': entity '\(entityName)' has no attribute '\(key)'")
                }
                do {
                    checked.append(
                        (
                            attribute,
                            try AttributeValueCoercion.coerce(
                                TransformableValue.stored(value, for: attribute), to: attribute)
                        ))
                } catch let error as MigrationError {
                    throw MigrationError(error.code, "instance \(index) of '\(entityName)': \(error.message)")
                }
            }
            rows.append(checked)
        }
        var keys: [Int64] = []
        keys.reserveCapacity(values.count)
        for row in rows {
            let object = try destination.insertObject(entityName: entityName)
            for (attribute, value) in row { try object.setValue(value, for: attribute) }
            keys.append(object.objectID.primaryKey)
        }
        return keys
    }

    /// Relates destination instances pairwise through a relationship — cdmigrate's extension beyond
    /// Core Data, for batch hooks: owner i gets target i added (a to-many) or set (a to-one), and
    /// the inverse follows, as with `ManagedObject.add` and `setValue`. Plain to-many join tables
    /// and to-one columns are written by one prepared statement per pair; ordered relationships go
    /// through the instances.
    ///
    /// - parameter entityName: The owners' entity (the relationship's entity or a sub-entity).
    /// - parameter relationshipName: The relationship of `entityName` to set.
    /// - parameter owners: Primary keys of destination instances of `entityName`.
    /// - parameter targets: Primary keys of instances of the relationship's destination entity, as many as `owners`.
    /// - throws: `MigrationError` `.invalidArgument` for an unknown entity or relationship, arrays
    ///   of different lengths, or a key no instance was made with.
    ///
    /// Core Data: `mutableSetValue(forKey:).add(_:)` or `setValue(_:forKey:)`, once per pair.
    public func relate(entityName: String, relationshipName: String, owners: [Int64], targets: [Int64]) throws {
        let destination = try runningStore(destination: true, "relate(entityName:relationshipName:owners:targets:)")
        guard let entity = destinationModel.entity(named: entityName) else {
            throw MigrationError(.invalidArgument, "the destination model has no entity named '\(entityName)'")
        }
        guard let relationship = entity.relationshipsByName[relationshipName],
            let targetEntity = relationship.destinationEntity
        else {
            throw MigrationError(
                .invalidArgument, "destination entity '\(entityName)' has no relationship '\(relationshipName)'")
        }
        guard owners.count == targets.count else {
            throw MigrationError(
                .invalidArgument,
                "relate '\(entityName).\(relationshipName)': \(owners.count) owners but \(targets.count) targets")
        }
        guard !owners.isEmpty else { return }
        try checkKeys(owners, of: entity, in: destination, "relate '\(entityName).\(relationshipName)'")
        try checkKeys(targets, of: targetEntity, in: destination, "relate '\(entityName).\(relationshipName)'")
        try destination.flush()
        try destination.beginIfNeeded()
        let layout = destination.layout
        let database = destination.database
        func entityNumber(_ entity: EntityDescription) -> String {
            "(SELECT Z_ENT FROM \(SQLiteDatabase.quote(layout.table(for: entity))) WHERE Z_PK = ?)"
        }
        switch layout.storage(of: relationship) {
        case .joinTable(let table, let own, let other, nil, nil) where relationship.inverseRelationship !== relationship:
            try Self.insertRows(
                into: database, "INSERT OR IGNORE INTO \(table) (\(own), \(other))", count: owners.count, columns: 2
            ) { i, column in
                column == 0 ? owners[i] : targets[i]
            }
            return
        case .foreignKey(let column, let entityColumn, nil)
        where relationship.inverseRelationship.map({ $0.isToMany }) ?? true:
            let table = SQLiteDatabase.quote(layout.table(for: entity))
            let assignEntity = entityColumn.map { ", \($0) = \(entityNumber(targetEntity))" } ?? ""
            let update = try database.prepare("UPDATE \(table) SET \(column) = ?\(assignEntity) WHERE Z_PK = ?")
            for i in 0..<owners.count {
                try update.run(
                    entityColumn == nil
                        ? [.integer(targets[i]), .integer(owners[i])]
                        : [.integer(targets[i]), .integer(targets[i]), .integer(owners[i])])
            }
            return
        case .inverseForeignKey(let table, let column, let entityColumn, nil):
            let assignEntity = entityColumn.map { ", \($0) = \(entityNumber(entity))" } ?? ""
            let update = try database.prepare("UPDATE \(table) SET \(column) = ?\(assignEntity) WHERE Z_PK = ?")
            for i in 0..<owners.count {
                try update.run(
                    entityColumn == nil
                        ? [.integer(owners[i]), .integer(targets[i])]
                        : [.integer(owners[i]), .integer(owners[i]), .integer(targets[i])])
            }
            return
        default:
            break
        }
        for i in 0..<owners.count {
            let owner = destination.fault(
                entity: try concreteEntity(of: owners[i], in: entity, store: destination), primaryKey: owners[i])
            let target = destination.fault(
                entity: try concreteEntity(of: targets[i], in: targetEntity, store: destination), primaryKey: targets[i]
            )
            if relationship.isToMany {
                try owner.add([target], to: relationship)
            } else {
                try owner.setValue(.object(target), for: relationship)
            }
        }
    }

    /// Inserts `count` rows of `columns` integers (`value(row, column)`) with `insert` ("INSERT
    /// INTO t (a, b)"), a few hundred rows per multi-row statement: one statement's start-up per
    /// chunk instead of per row.
    static func insertRows(
        into database: SQLiteDatabase, _ insert: String, count: Int, columns: Int,
        _ value: (Int, Int) -> Int64
    ) throws {
        let chunk = 200
        let tuple = "(" + Array(repeating: "?", count: columns).joined(separator: ", ") + ")"
        var start = 0
        while start < count {
            let rows = min(chunk, count - start)
            let statement = try database.prepare(
                insert + " VALUES " + Array(repeating: tuple, count: rows).joined(separator: ", "))
            statement.reset()
            var position: Int32 = 1
            for row in start..<(start + rows) {
                for column in 0..<columns {
                    try statement.bind(.integer(value(row, column)), at: position)
                    position += 1
                }
            }
            while try statement.step() {}
            statement.reset()
            start += rows
        }
    }

    /// Refuses keys no instance of `entity`'s table was given (below 1 or above the last allocated).
    private func checkKeys(_ keys: [Int64], of entity: EntityDescription, in store: PersistentStore, _ what: String)
        throws
    {
        let last = store.lastAllocatedPrimaryKey(for: entity)
        for key in keys where key < 1 || key > last {
            throw MigrationError(.invalidArgument, "\(what): no instance of '\(entity.name)' has primary key \(key)")
        }
    }

    /// The concrete entity of the row `key` of `entity`'s table.
    private func concreteEntity(of key: Int64, in entity: EntityDescription, store: PersistentStore) throws
        -> EntityDescription
    {
        guard !entity.subentities.isEmpty else { return entity }
        guard
            let number = try store.database.scalar(
                "SELECT Z_ENT FROM \(SQLiteDatabase.quote(store.layout.table(for: entity))) WHERE Z_PK = ?",
                [.integer(key)])?.integer,
            let concrete = store.layout.entity(forNumber: Int(number)), concrete.isKind(of: entity)
        else {
            throw MigrationError(.invalidArgument, "no instance of '\(entity.name)' has primary key \(key)")
        }
        return concrete
    }
}
