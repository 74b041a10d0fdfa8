/// The three stages of a pass, as Core Data runs them: instances (row by row through the policy,
/// or as one `INSERT … SELECT` for a declarative mapping), relationships (per destination instance
/// or as SQL), validation; and attaching the source for the SQL paths.
extension MigrationManager {
    func runPass(_ pass: Int, _ model: MappingModel) throws {
        run.currentPass = pass
        let mappings = model.entityMappings
        // What policies changed in the property mappings lasts for this pass only.
        defer {
            for mapping in mappings {
                for property in mapping.attributeMappings + mapping.relationshipMappings {
                    property.restoreDeclaredExpression()
                }
            }
        }
        for (index, mapping) in mappings.enumerated() {
            run.mappingIDs[ObjectIdentifier(mapping)] = pass * 1_000_000 + index
        }
        let policies: [EntityMigrationPolicy] = mappings.map { mapping in
            if let name = mapping.entityMigrationPolicyClassName, let factory = policyFactory(named: name) {
                return factory()
            }
            return DefaultEntityMigrationPolicy()
        }
        guard let source = sourceStore, let destination = destinationStore, let associations = run.associations else {
            return
        }
        let plans = SourceFetchPlan.plans(for: mappings, sourceStore: source)

        // Stage 1: create destination instances.
        run.stage = .createDestinationInstances
        for (index, mapping) in mappings.enumerated() {
            try enter(mapping, policy: policies[index])
            try policies[index].begin(mapping, manager: self)
            var counts = MigrationReport.MappingCounts(
                pass: pass, entityMappingName: mapping.name, sourceInstances: 0, associations: 0)
            if let request = plans[index] {
                let declarative =
                    pushDownSQL && run.sourceAccess?.allowsAttach == true
                    && policies[index] is DefaultEntityMigrationPolicy
                // A declarative copy may count the rows as it writes them: counted first for a progress handler alone.
                let counted = declarative && progressHandler == nil ? nil : try countSource(request, in: source)
                try notifyProgress(entityMappingName: mapping.name, processed: 0, total: counted ?? 0, force: true)
                if declarative,
                    let taken = try runDeclaratively(
                        mapping, request: request, counted: counted, source: source, destination: destination)
                {
                    counts.sourceInstances = taken
                    counts.instancesBySQL = true
                    try notifyProgress(
                        entityMappingName: mapping.name, processed: taken, total: counted ?? taken, force: true)
                } else {
                    let total = try counted ?? countSource(request, in: source)
                    counts.sourceInstances =
                        try policies[index].createsDestinationInstancesInBatches
                        ? createInstancesInBatches(
                            mapping, policy: policies[index], request: request, total: total,
                            source: source, destination: destination)
                        : createInstancesPerSource(
                            mapping, policy: policies[index], request: request, total: total,
                            source: source, destination: destination)
                }
            }
            try policies[index].endInstanceCreation(forMapping: mapping, manager: self)
            try destination.save()
            counts.associations = try associations.count(mapping: mappingID(mapping))
            run.report.mappings.append(counts)
            if plans[index] != nil, counts.sourceInstances == 0, let entityName = mapping.sourceEntityName {
                // A mapping that took nothing: a predicate or an entity name that no longer fits the store.
                var all = FetchRequest(entityName: entityName)
                all.includesSubentities = true
                let available = (try? source.count(all)) ?? 0
                run.report.warnings.append(
                    available == 0
                        ? "entity mapping '\(mapping.name)' took no source instances: the source store has no '\(entityName)' instances"
                        : "entity mapping '\(mapping.name)' took no source instances: its source expression matched none of the store's \(available) '\(entityName)' instances"
                )
            }
            finishStep()
        }

        // Stage 2: create relationships.
        run.stage = .createRelationships
        for (index, mapping) in mappings.enumerated() {
            try enter(mapping, policy: policies[index])
            // The default createRelationships with no relationship mappings (or with ones SQL has set) has nothing to do per instance.
            var idle =
                policies[index].createsRelationshipsByDefault
                && mapping.relationshipMappings.allSatisfy { $0.valueExpression == nil }
            if !idle && pushDownSQL && run.sourceAccess?.allowsAttach == true
                && policies[index] is DefaultEntityMigrationPolicy
            {
                idle = try setRelationshipsDeclaratively(mapping, source: source, destination: destination)
                if idle,
                    let i = run.report.mappings.lastIndex(where: {
                        $0.pass == pass && $0.entityMappingName == mapping.name
                    }
                    )
                {
                    run.report.mappings[i].relationshipsBySQL = true
                }
            }
            if !idle {
                try createRelationshipsPerDestination(
                    mapping, policy: policies[index], associations: associations,
                    source: source, destination: destination)
            } else {
                try notifyProgress(entityMappingName: mapping.name, processed: 0, total: 0, force: true)
            }
            try policies[index].endRelationshipCreation(forMapping: mapping, manager: self)
            try destination.save()
            finishStep()
        }

        // Stage 3: validate. As Core Data, every destination instance is validated before any
        // policy's performCustomValidation and end, which do not run when validation fails. The
        // passes share one destination, so it is validated once whole, in the last pass.
        run.stage = .validate
        if pass == mappingModels.count - 1 {
            try detachSource()
            try dropLookupIndexes()
            var validation = DestinationValidation(store: destination)
            validation.validatedByCopy = run.validatedByCopy
            try validation.validate()
        }
        for (index, mapping) in mappings.enumerated() {
            try enter(mapping, policy: policies[index])
            try notifyProgress(entityMappingName: mapping.name, processed: 0, total: 0, force: true)
            try policies[index].performCustomValidation(forMapping: mapping, manager: self)
            try policies[index].end(mapping, manager: self)
            try destination.save()
            finishStep()
        }
        run.currentEntityMapping = nil
        run.currentPolicy = nil
    }

    /// Stage 1 row by row: the policy's `createDestinationInstances` for each source instance.
    func createInstancesPerSource(
        _ mapping: EntityMapping, policy: EntityMigrationPolicy, request: FetchRequest, total: Int,
        source: PersistentStore, destination: PersistentStore
    ) throws -> Int {
        // One destination per distinct value (`DistinctValueMapping`): the first source of a value makes it.
        let distinct = try DistinctValueMapping.attribute(of: mapping)
        if distinct == nil {
            run.deferredAttributeMappings = try DeferredAttributeMappings.make(
                for: mapping, manager: self, source: source, destination: destination)
        }
        defer { run.deferredAttributeMappings = nil }
        // Each source instance reads its values from the row when asked (`LiveSourceRow`), and
        // the values the loss report compares are counted as the rows pass.
        let pairs = try nilledPairs(mapping, source: source, destination: destination)
        let counts =
            request.filter == nil && !pairs.isEmpty ? NonNilValueCounts(names: pairs.map { $0.name }) : nil
        let creation = PerSourceCreation(
            mapping, policy: policy, manager: self, destination: destination, total: total, distinct: distinct)
        try source.enumerate(request, readingOnDemand: true, counting: counts) { sInstance in
            try creation.take(sInstance)
            return true
        }
        if let counts = counts { run.nilledSourceCounts[mappingID(mapping)] = counts }
        return creation.processed
    }

    /// Stage 2 per instance, as Core Data runs it: the policy's `createRelationships` once for each
    /// destination instance the mapping made (however many sources it was associated with), with
    /// `$source` the instance it was made from when there is exactly one (both as faults).
    func createRelationshipsPerDestination(
        _ mapping: EntityMapping, policy: EntityMigrationPolicy, associations: AssociationTable,
        source: PersistentStore, destination: PersistentStore
    ) throws {
        if try DistinctValueMapping.attribute(of: mapping) != nil, policy is DefaultEntityMigrationPolicy {
            try createRelationshipsPerSource(
                mapping, policy: policy, associations: associations, source: source, destination: destination)
            return
        }
        let total = try associations.destinationCount(mapping: mappingID(mapping))
        var processed = 0
        try notifyProgress(entityMappingName: mapping.name, processed: 0, total: total, force: true)
        try associations.forEachDestination(mapping: mappingID(mapping)) { association, hasSeveralSources in
            try createRelationships(
                of: association, withSource: !hasSeveralSources, mapping, policy: policy, source: source,
                destination: destination, processed: &processed, total: total)
        }
    }

    /// Stage 2 per instance for a mapping making one destination per distinct value: the
    /// relationship mappings once for each association, in the order made, with `$source` its
    /// source; what they give is added up (`DistinctValueMapping`).
    func createRelationshipsPerSource(
        _ mapping: EntityMapping, policy: EntityMigrationPolicy, associations: AssociationTable,
        source: PersistentStore, destination: PersistentStore
    ) throws {
        let total = try associations.count(mapping: mappingID(mapping))
        var processed = 0
        try notifyProgress(entityMappingName: mapping.name, processed: 0, total: total, force: true)
        try associations.forEachAssociation(mapping: mappingID(mapping)) { association in
            try createRelationships(
                of: association, withSource: true, mapping, policy: policy, source: source,
                destination: destination, processed: &processed, total: total)
        }
    }

    /// One step of stage 2: the policy's `createRelationships` for the association's destination
    /// instance, with `$source` its source instance when `withSource`; saved in batches, progress told.
    private func createRelationships(
        of association: AssociationTable.Association, withSource: Bool, _ mapping: EntityMapping,
        policy: EntityMigrationPolicy, source: PersistentStore, destination: PersistentStore,
        processed: inout Int, total: Int
    ) throws {
        try checkCancelled()
        let dInstance = try association.destination(in: destinationModel, store: destination)
        run.currentDestination = dInstance
        run.currentSource = withSource ? try association.source(in: sourceModel, store: source) : nil
        try policy.createRelationships(forDestination: dInstance, in: mapping, manager: self)
        run.currentSource = nil
        run.currentDestination = nil
        processed += 1
        if processed % batchSize == 0 { try destination.save() }
        try notifyProgress(entityMappingName: mapping.name, processed: processed, total: total)
    }

    /// Runs stage 1 of a declarative mapping as SQL (see `DeclarativeMappingSQL`): the source
    /// instances it took, or nil when the mapping needs the row-by-row path. `counted` is the
    /// request's count when it is known; a copy taking its source entity whole counts the rows as
    /// it writes them (and keeps the count for the run: `sourceCounts`), any other counts first.
    func runDeclaratively(
        _ mapping: EntityMapping, request: FetchRequest, counted: Int?,
        source: PersistentStore, destination: PersistentStore
    ) throws -> Int? {
        guard counted != 0, let destinationEntity = mapping.destinationEntity, let sourceEntity = mapping.sourceEntity,
            let associations = run.associations
        else { return nil }
        let distinct = try DistinctValueMapping.attribute(of: mapping)
        var keepsKeys =
            keepsSourceKeys && distinct == nil
            && DeclarativeMappingSQL.canKeepSourceKeys(
                mapping: mapping, request: request,
                destinationTableIsEmpty: destination.lastAllocatedPrimaryKey(for: destinationEntity) == 0)
        if keepsKeys {
            // An empty table has nothing to copy: the row-by-row path takes nothing, as before.
            guard let (low, high) = try DeclarativeMappingSQL.sourceKeyBounds(sourceEntity, in: source) else {
                return nil
            }
            keepsKeys = DeclarativeMappingSQL.keysLeaveRoom(low: low, high: high)
        }
        let total = keepsKeys ? counted : try counted ?? countSource(request, in: source)
        if total == 0 { return nil }
        // The values the loss report counts for attributes left behind are counted by the copy itself.
        let leftBehind =
            distinct == nil ? attributesLeftBehind(by: mapping, carried: carriedSourceProperties(), source: source) : []
        let counting = leftBehind.compactMap { source.layout.column(for: $0).map { "t." + SQLiteDatabase.quote($0) } }
        guard
            let plan = DeclarativeMappingSQL.plan(
                mapping: mapping, request: request, mappingID: mappingID(mapping), keepsSourceKeys: keepsKeys,
                distinct: distinct, counting: counting, source: source, destination: destination)
        else { return nil }
        try attachSource(source, to: destination)
        var made = total ?? 0
        if let distinctValues = plan.distinctValues {
            for (i, statement) in distinctValues.enumerated() {
                try destination.database.run(statement, i == distinctValues.count - 1 ? plan.predicateArguments : [])
            }
            made = Int(
                try destination.database.scalar("SELECT COUNT(*) FROM temp.\(DeclarativeMappingSQL.distinctTable)")?
                    .integer ?? 0)
            if made == 0 {  // every value nil or empty: nothing to make
                try destination.database.exec("DROP TABLE temp.\(DeclarativeMappingSQL.distinctTable)")
                run.copiedRows[ObjectIdentifier(mapping)] = (destinationEntity, 0)
                return total
            }
        }
        try associations.writeBufferedRows()  // the table's rowids keep the order associations were made in
        try destination.database.begin()
        destination.database.valueCounts.rulesBroken = false
        var written: ClosedRange<Int64>? = nil
        let copy: (bare: Bool, rows: Int)
        var taken = total ?? 0
        if let insertAssociations = plan.insertAssociations {
            let first = try destination.allocatePrimaryKeys(for: destinationEntity, count: made)
            let arguments = plan.arguments(firstPrimaryKey: first)
            written = first...(first + Int64(max(made, 1) - 1))
            copy = try plan.runInsertRows(
                on: destination.database, plan.distinctValues == nil ? arguments : [arguments[0]],
                keys: first...(first + Int64(max(made, 1) - 1)))
            try destination.database.run(insertAssociations, arguments)
            if plan.distinctValues != nil {
                try destination.database.exec("DROP TABLE temp.\(DeclarativeMappingSQL.distinctTable)")
            }
        } else {
            // The table was empty: the source keys the INSERT keeps are all in 1...Int64.max / 2.
            copy = try plan.runInsertRows(
                on: destination.database, plan.predicateArguments, keys: 1...(Int64.max / 2),
                dense: plan.insertRowsDense != nil)
            taken = copy.rows
            if let key = sourceCountKey(request, in: source) { run.sourceCounts[key] = copy.rows }
            let table = SQLiteDatabase.quote(destination.layout.table(for: destinationEntity))
            // Two queries: SQLite answers a lone MIN or MAX from the end of the table's b-tree.
            if let low = try destination.database.scalar("SELECT MIN(Z_PK) FROM main.\(table)")?.integer,
                let high = try destination.database.scalar("SELECT MAX(Z_PK) FROM main.\(table)")?.integer
            {
                destination.reservePrimaryKeys(for: destinationEntity, upTo: high)
                written = low...high
                try associations.recordIdentity(
                    mapping: mappingID(mapping), sourceEntity: sourceEntity.entityNumber,
                    destinationEntity: destinationEntity.entityNumber, destinationTable: table,
                    low: low, high: high, count: copy.rows)
            } else if copy.rows != 0 {
                throw MigrationError(
                    .migration,
                    "entity mapping '\(mapping.name)': the rows it made in '\(destinationEntity.name)' cannot be counted"
                )
            }
        }
        run.copiedRows[ObjectIdentifier(mapping)] = (destinationEntity, copy.rows)
        if copy.bare, !destination.database.valueCounts.rulesBroken, let written {
            run.validatedByCopy.record(destinationEntity, keys: written, attributes: plan.attributesValidated)
        }
        if copy.bare, plan.countsValues {
            let counts = destination.database.valueCounts.counts
            run.leftBehindCounts[mappingID(mapping)] = counting.indices.map { counts.element(at: $0) ?? 0 }
        }
        try destination.save()
        return taken
    }

    /// Stage 2 of a declarative mapping as SQL (see `DeclarativeRelationshipSQL`); false when it
    /// needs the per-instance path.
    func setRelationshipsDeclaratively(_ mapping: EntityMapping, source: PersistentStore, destination: PersistentStore)
        throws -> Bool
    {
        try run.associations?.writePending()  // the SQL reads the associations table directly
        // The plan of a to-many reads the source's relationships.
        try attachSource(source, to: destination)
        guard
            let statements = try DeclarativeRelationshipSQL.plan(
                mapping: mapping, manager: self, source: source, destination: destination)
        else { return false }
        try destination.database.begin()
        for statement in statements { try destination.database.run(statement) }
        try destination.save()
        return true
    }

    func attachSource(_ source: PersistentStore, to destination: PersistentStore) throws {
        // ATTACH and DETACH cannot run inside a transaction.
        try destination.save()
        guard !run.sourceAttached, let uri = run.sourceAccess?.uri else { return }
        try destination.database.run("ATTACH DATABASE ? AS \(DeclarativeMappingSQL.sourceSchema)", [.string(uri)])
        run.sourceAttached = true
    }

    func detachSource() throws {
        guard run.sourceAttached, let destination = destinationStore else { return }
        try destination.save()
        try destination.database.exec("DETACH DATABASE \(DeclarativeMappingSQL.sourceSchema)")
        run.sourceAttached = false
    }
}
