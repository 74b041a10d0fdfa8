/// A mapping's attribute mappings, applied by its policy to the instances it makes one source row
/// at a time (`MigrationManager.applyAttributeMappings`), written by SQL instead of evaluated per
/// instance — what makes a single-row hook as cheap as the batch default for its attributes.
///
/// When the policy applies the mapping to an instance it has just made and set nothing on, with
/// `$source` the row being migrated, and every attribute mapping translates to SQL (as a
/// declarative mapping's do: `DeclarativeMappingSQL`), the manager records the instance's source
/// key and leaves its values unset (`DeferredValues`). The instance is then a fault:
///
/// - the first access to one of its attributes (a read, a write, a dictionary, a fetch that returns
///   it by ID before its row is written) evaluates the mappings as they would have been at once;
/// - when the store writes its insert buffer (a commit, a fetch or count of the destination,
///   the buffer filling), the rows still pending are written by one `INSERT … SELECT` from the
///   attached source per buffer: over the source keys' range when source and destination keys are
///   both consecutive, else over the (destination key, source key) pairs put in a temporary table.
///
/// A value the SQL refuses (a stored value it cannot convert, a row check failing) deletes the rows
/// it wrote, and those instances are evaluated one by one: the error is the one the immediate
/// evaluation gives. The rows written are those the immediate evaluation writes: the same values,
/// `Z_ENT`, `Z_OPT` 1, the same key.
final class DeferredAttributeMappings: DeferredValuesWriter {
    /// The temporary table of (destination key, source key) pairs (destination connection).
    static let rowTable = "temp.cdm_deferred_row"

    /// The manager's reference: its put-off instances may outlive it.
    private let managerReference: OwnerReference<MigrationManager>
    var manager: MigrationManager? { managerReference.owner }
    let mapping: EntityMapping
    /// The mapping resolved when the SQL was made: an instance is put off only while it still fits.
    let plan: AttributeMappingPlan
    let sourceEntity: EntityDescription
    let destinationEntity: EntityDescription
    /// The INSERT over a range of consecutive source keys (`t.Z_PK + ?` its destination key; then the range).
    let contiguous: DeclarativeMappingSQL
    /// The INSERT over the pairs of `rowTable`.
    let listed: DeclarativeMappingSQL
    let destinationTable: String
    /// Rows written by SQL so far, and rows the SQL declined (their values then computed one by one).
    private(set) var rowsWritten = 0
    private(set) var rowsDeclined = 0

    private init(
        manager: MigrationManager, mapping: EntityMapping, plan: AttributeMappingPlan, sourceEntity: EntityDescription,
        destinationEntity: EntityDescription, contiguous: DeclarativeMappingSQL, listed: DeclarativeMappingSQL,
        destinationTable: String
    ) {
        self.managerReference = manager.reference
        self.mapping = mapping
        self.plan = plan
        self.sourceEntity = sourceEntity
        self.destinationEntity = destinationEntity
        self.contiguous = contiguous
        self.listed = listed
        self.destinationTable = destinationTable
    }

    /// The SQL of `mapping`'s attribute mappings for instances made one by one, or nil when they
    /// need the engine (or SQL is off, or the source cannot be attached). Attaches the source
    /// (committing the destination first): call it outside a batch.
    static func make(
        for mapping: EntityMapping, manager: MigrationManager, source: PersistentStore, destination: PersistentStore
    ) throws -> DeferredAttributeMappings? {
        guard manager.defersAttributeMappings, manager.pushDownSQL,
            manager.run.sourceAccess?.allowsAttach == true, manager.run.associations != nil,
            let sourceEntity = mapping.sourceEntity, let destinationEntity = mapping.destinationEntity,
            !destinationEntity.isAbstract, source.layout.isOwnEntity(sourceEntity),
            destination.layout.isOwnEntity(destinationEntity),
            !mapping.attributeMappings.isEmpty
        else { return nil }
        // Every attribute mapping sets a stored attribute of the entity (the SQL writes those alone; the
        // immediate evaluation would refuse a name the entity lacks, and keep a transient value in the instance).
        let plan = AttributeMappingPlan(
            mapping: mapping, sourceEntity: sourceEntity, destinationEntity: destinationEntity)
        for step in plan.steps {
            guard let attribute = step.attribute, !attribute.isTransient,
                destination.layout.column(for: attribute) != nil
            else { return nil }
        }
        let table =
            "\(DeclarativeMappingSQL.sourceSchema).\(SQLiteDatabase.quote(source.layout.table(for: sourceEntity)))"
        var whole = FetchRequest(entityName: sourceEntity.name)
        whole.includesSubentities = true
        func sql(_ rows: String, keys: String) -> DeclarativeMappingSQL? {
            DeclarativeMappingSQL.plan(
                mapping: mapping, request: whole, mappingID: manager.mappingID(mapping), batchRows: rows,
                destinationKeys: keys, source: source, destination: destination)
        }
        guard let contiguous = sql("\(table) t WHERE t.Z_PK BETWEEN ? AND ?", keys: "t.Z_PK + ?"),
            let listed = sql("\(rowTable) d JOIN \(table) t ON t.Z_PK = d.source", keys: "d.destination")
        else { return nil }
        try manager.attachSource(source, to: destination)
        try destination.database.exec(
            "CREATE TEMP TABLE IF NOT EXISTS cdm_deferred_row (destination INTEGER PRIMARY KEY, source INTEGER)")
        return DeferredAttributeMappings(
            manager: manager, mapping: mapping, plan: plan,
            sourceEntity: sourceEntity, destinationEntity: destinationEntity, contiguous: contiguous, listed: listed,
            destinationTable: contiguous.destinationTable)
    }

    /// Whether the values of `destination` made from `source` may be put off: the mapping unchanged
    /// since the SQL was made, the entities those it was made for (`PersistentStore.deferValues`
    /// checks that nothing was set on the instance).
    func takes(_ mapping: EntityMapping, source: ManagedObject, destination: ManagedObject) -> Bool {
        mapping === self.mapping && source.entity === sourceEntity && destination.entity === destinationEntity
            && plan.revisions == AttributeMappingPlan.revisions(of: mapping)
    }

    func materialize(_ object: ManagedObject, _ deferred: DeferredValues) throws {
        guard let manager = manager else {
            throw MigrationError(
                .invalidArgument,
                "the values of \(object.objectID.uriRepresentation) cannot be computed: its migration has ended")
        }
        guard let store = manager.sourceStore else {
            throw MigrationError(
                .invalidArgument,
                "the values of \(object.objectID.uriRepresentation) cannot be computed: the source store is closed")
        }
        // The row being migrated is at hand while its hook runs (a read just after applying); any
        // other is read again (the source store does not change during a migration).
        let source: ManagedObject
        if let current = manager.run.currentSource, current.objectID.primaryKey == deferred.sourceKey,
            current.entity === sourceEntity, current.storeReference === store.objectReference
        {
            source = current
        } else {
            source = store.fault(entity: sourceEntity, primaryKey: deferred.sourceKey)
        }
        try manager.evaluateAttributeMappings(plan, of: mapping, source: source, destination: object)
    }

    func writeRows(_ objects: [(object: ManagedObject, sourceKey: Int64)], to store: PersistentStore) throws -> Bool {
        guard let first = objects.first else { return true }
        let database = store.database
        let count = objects.count
        // Consecutive destination keys made from consecutive source keys: the range alone.
        var consecutive = true
        for (i, row) in objects.enumerated() where i > 0 {
            let previous = objects[i - 1]
            if previous.sourceKey == Int64.max || previous.object.objectID.primaryKey == Int64.max
                || row.sourceKey != previous.sourceKey + 1
                || row.object.objectID.primaryKey != previous.object.objectID.primaryKey + 1
            {
                consecutive = false
                break
            }
        }
        let (offset, overflow) = first.object.objectID.primaryKey.subtractingReportingOverflow(first.sourceKey)
        let sql: DeclarativeMappingSQL
        let arguments: [Value]
        let delete: String
        if consecutive, !overflow, let last = objects.last {
            sql = contiguous
            arguments = [.integer(offset), .integer(first.sourceKey), .integer(last.sourceKey)]
            delete =
                "DELETE FROM \(destinationTable) WHERE Z_PK BETWEEN \(first.object.objectID.primaryKey) AND \(last.object.objectID.primaryKey)"
        } else {
            sql = listed
            arguments = []
            delete = "DELETE FROM \(destinationTable) WHERE Z_PK IN (SELECT destination FROM \(Self.rowTable))"
            try database.run("DELETE FROM \(Self.rowTable)")
            try MigrationManager.insertRows(
                into: database, "INSERT INTO \(Self.rowTable) (destination, source)", count: count, columns: 2
            ) { i, column in
                column == 0 ? objects[i].object.objectID.primaryKey : objects[i].sourceKey
            }
        }
        database.valueCounts.counts = []
        do {
            do {
                try database.run(sql.insertRows, arguments)
            } catch let error as MigrationError where error.message.contains(StoredValueRule.needsConversion) {
                guard let converting = sql.insertRowsConverting else { throw error }
                try database.run(delete)
                try database.run(converting, arguments)
            }
            if database.changes == count {
                rowsWritten += count
                return true
            }
        } catch is MigrationError {
            // Evaluated one by one instead: the error, if any, is the immediate evaluation's.
        }
        try database.run(delete)
        rowsDeclined += count
        return false
    }
}
