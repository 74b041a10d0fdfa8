import CSQLite

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A step done as schema changes (`SchemaStepPlan`): the source is copied page by page (SQLite's
/// backup API, from the run's own read snapshot) into the run's private temporary file, the
/// copy's schema is changed with `ALTER TABLE`, and the copy then goes through the same end as
/// the general path — validation, counts, loss report, metadata, WAL mode — and is handed over
/// atomically by the caller exactly as the general path's store is.
///
/// Before anything of the copy counts, it is checked (`verifySchema`, `checkRows`): its schema
/// must be the destination model's (tables, columns with their types, indexes), and its rows
/// what the general path would copy unchanged. Any difference sends the run back to the general
/// path: the temporary file is emptied and the step runs as if this had not been tried.
extension MigrationManager {
    /// SQLite's `ALTER TABLE … DROP COLUMN` came with 3.35.0.
    static let schemaStepMinimumSQLite: Int32 = 3_035_000

    /// Runs the step as schema changes when it is eligible; nil (with `report.schemaChangesNotDone`
    /// saying why) when the general path must run. `temporaryPath` is the run's empty private file.
    func runAsSchemaChanges(
        source: PersistentStore, access: SourceAccess, hasFrameworkTables: Bool,
        temporaryPath: String
    ) throws -> MigrationReport? {
        guard triesSchemaChanges else { return nil }
        func notDone(_ reason: String) -> MigrationReport? {
            run.report.schemaChangesNotDone = reason
            return nil
        }
        guard pushDownSQL, keepsSourceKeys else { return notDone("SQL push-down or keeping source keys is off") }
        guard access.allowsAttach else { return notDone("the source store is open in another process") }
        guard !hasFrameworkTables else { return notDone("the source has persistent history or CloudKit tables") }
        guard sqlite3_libversion_number() >= MigrationManager.schemaStepMinimumSQLite else {
            return notDone("SQLite \(String(cString: sqlite3_libversion())) cannot drop columns (3.35.0 or later can)")
        }
        let plan: SchemaStepPlan
        switch SchemaStepPlan.make(
            sourceLayout: source.layout, destinationModel: destinationModel, mappingModels: mappingModels)
        {
        case .notEligible(let reason): return notDone(reason)
        case .eligible(let eligible): plan = eligible
        }
        let carried = StoreMetadata(carrying: source.metadata, model: destinationModel)
        let autoVacuum = Int(try source.database.scalar("PRAGMA auto_vacuum")?.integer ?? -1)
        guard autoVacuum == carried.autoVacuumLevel else {
            return notDone(
                "the source file's auto_vacuum (\(autoVacuum)) is not the one its metadata asks for (\(carried.autoVacuumLevel))"
            )
        }
        // The source's rows, read once: whether the general path would keep them as they are,
        // and the counts the report needs (`SchemaStepScan`).
        let carriedProperties = carriedSourceProperties()
        var leftBehind: [String: [String]] = [:]
        for kept in plan.keptTables {
            guard let mapping = mappingModels[0].entityMapping(named: kept.mappingName) else { continue }
            leftBehind[kept.name] = attributesLeftBehind(by: mapping, carried: carriedProperties, source: source)
                .compactMap { source.layout.column(for: $0) }
        }
        let scan: SchemaStepScan
        do {
            scan = try SchemaStepScan.scan(
                plan, source: source.database, destinationModel: destinationModel, leftBehind: leftBehind,
                isCancelled: { try checkCancelled() })
        } catch let reason as SchemaStepPlan.NotEligible {
            return notDone(reason.text)
        }
        run.runRows = schemaStepRunRows(scan: scan, source: source)
        var copy: SQLiteDatabase?
        do {
            try checkCancelled()
            try notifyProgress(entityMappingName: "", processed: 0, total: 0, force: true)
            // The file's bytes before SQLite opens it; else its pages from the snapshot.
            if access.copiesAsFile { try StoreFiles.copyOver(access.path, to: temporaryPath) }
            let database = try SQLiteDatabase(path: temporaryPath, mode: .readWrite)
            copy = database
            // A private file: no journal, no syncs until the end (as the general path's new store);
            // the copy takes the source's WAL mark, so the journal is turned off again after it.
            try database.exec("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF")
            if !access.copiesAsFile { try copyPages(from: source.database, to: database) }
            try database.exec("PRAGMA journal_mode = OFF")
            try checkCancelled()
            let desired = try SQLiteDatabase(path: ":memory:", mode: .create)
            defer { desired.close() }
            for statement in StoreLayout(model: destinationModel).createStatements { try desired.exec(statement) }
            try database.begin()
            // The source's triggers (Core Data's `Z_DA_…` for derived attributes) go: the
            // destination's are installed at the end, as the general path installs them.
            for row in try database.rows("SELECT name FROM sqlite_master WHERE type = 'trigger'") {
                if let name = row.first?.text { try database.exec("DROP TRIGGER \(SQLiteDatabase.quote(name))") }
            }
            try dropIndexesNotKept(plan, in: database, desired: desired)
            for change in plan.changes {
                if case .renumberEntity = change { continue }  // with the rows' checks, below
                for statement in change.statements { try database.exec(statement) }
            }
            try createMissingIndexes(in: database, desired: desired)
            try spellAsNewStore(plan, in: database, desired: desired)
            try verifySchema(of: database, desired: desired)
            try checkCancelled()
            try rewriteRows(plan, scan: scan, in: database)
            try database.exec("DELETE FROM Z_PRIMARYKEY")
            try database.commit()
        } catch let error as MigrationError where error.code == .migrationCancelled {
            copy?.close()
            throw error
        } catch {
            // Back to the general path, on an empty private file.
            copy?.close()
            emptyTemporaryFile(temporaryPath)
            let reason =
                (error as? SchemaStepPlan.NotEligible)?.text ?? (error as? MigrationError)?.message ?? "\(error)"
            return notDone(reason)
        }
        guard let database = copy else { return nil }
        return try finishSchemaStep(
            plan, scan: scan, database: database, source: source, access: access, carried: carried,
            temporaryPath: temporaryPath)
    }

    /// The run's rows for progress (`RunRows`) of a step done as schema changes, once the scan has
    /// counted them: each entity mapping's rows for each of its three stages, as the general path
    /// estimates them (`estimateRunRows`), so that `runProcessed` and `runTotal` advance as the
    /// stages report the rows they carried and checked. Empty without a progress handler.
    func schemaStepRunRows(scan: SchemaStepScan, source: PersistentStore) -> RunRows {
        guard progressHandler != nil, let model = mappingModels.first else { return RunRows() }
        let layout = StoreLayout(model: destinationModel)
        let plans = SourceFetchPlan.plans(for: model.entityMappings, sourceStore: source)
        let counts = model.entityMappings.indices.map { index -> Int in
            guard plans.element(at: index) != nil, let entity = model.entityMappings[index].destinationEntity else {
                return 0
            }
            return scan.tables[layout.table(for: entity)]?.count ?? 0
        }
        return RunRows(
            estimates: counts + counts + counts, stages: RunRows.stages(mappingsPerPass: [counts.count]))
    }

    /// The rest of a step done as schema changes, as the general path ends a run.
    private func finishSchemaStep(
        _ plan: SchemaStepPlan, scan: SchemaStepScan, database: SQLiteDatabase, source: PersistentStore,
        access: SourceAccess,
        carried: StoreMetadata, temporaryPath: String
    ) throws -> MigrationReport {
        let layout = StoreLayout(model: destinationModel)
        var whileRunning = carried
        whileRunning.storeUUID = PersistentStore.randomUUID()
        let destination = PersistentStore(
            model: destinationModel, path: temporaryPath, readOnly: false, database: database, layout: layout,
            metadata: whileRunning, warnings: [], isNew: true)
        run.destinationStore = destination
        try destination.loadMaxPrimaryKeys()
        try destination.save()
        // Z_MODELCACHE, as Core Data writes it
        try destination.writeModelCache(try StoreModelCache.compressedArchive(of: destinationModel) ?? [])
        let associations = try AssociationTable(database: destination.database)
        run.associations = associations
        let model = mappingModels[0]
        let plans = SourceFetchPlan.plans(for: model.entityMappings, sourceStore: source)
        for (index, mapping) in model.entityMappings.enumerated() { run.mappingIDs[ObjectIdentifier(mapping)] = index }
        for (index, mapping) in model.entityMappings.enumerated() {
            run.currentEntityMapping = mapping
            var counts = MigrationReport.MappingCounts(
                pass: 0, entityMappingName: mapping.name, sourceInstances: 0, associations: 0)
            if plans[index] != nil, let sourceEntity = mapping.sourceEntity,
                let destinationEntity = mapping.destinationEntity
            {
                let name = layout.table(for: destinationEntity)
                let table = SQLiteDatabase.quote(name)
                let found = scan.tables[name] ?? SchemaStepScan.Table()
                let total = found.count
                let low = found.low
                let high = found.high
                run.leftBehindCounts[index] = found.leftBehind
                if total > 0, let low = low, let high = high {
                    try associations.recordIdentity(
                        mapping: index, sourceEntity: sourceEntity.entityNumber,
                        destinationEntity: destinationEntity.entityNumber,
                        destinationTable: table, low: low, high: high, count: total)
                    counts.instancesBySQL = true
                    counts.relationshipsBySQL = !mapping.relationshipMappings.allSatisfy { $0.valueExpression == nil }
                } else {
                    run.report.warnings.append(
                        "entity mapping '\(mapping.name)' took no source instances: the source store has no '\(sourceEntity.name)' instances"
                    )
                }
                counts.sourceInstances = total
                counts.associations = total
            }
            run.report.mappings.append(counts)
        }
        // Progress as the general path tells it: each entity mapping through stages 1 and 2, then
        // validation, then stage 3 (a handler's false or a host error cancels here too).
        for current in [MigrationProgress.Stage.createDestinationInstances, .createRelationships] {
            run.stage = current
            for (index, mapping) in model.entityMappings.enumerated() {
                run.currentEntityMapping = mapping
                let done = run.report.mappings.element(at: index)?.sourceInstances ?? 0
                try notifyProgress(entityMappingName: mapping.name, processed: done, total: done, force: true)
                finishStep()
            }
        }
        run.stage = .validate
        // The scan checked the rows against every rule but those counting to-manys.
        if scan.needsFullValidation { try DestinationValidation(store: destination).validate() }
        for (index, mapping) in model.entityMappings.enumerated() {
            run.currentEntityMapping = mapping
            // The scan checked these rows (and the full validation, when it ran, read them again).
            let done = run.report.mappings.element(at: index)?.sourceInstances ?? 0
            try notifyProgress(entityMappingName: mapping.name, processed: done, total: done, force: true)
            finishStep()
        }
        run.currentEntityMapping = nil
        try maintainDerivedAttributes(in: destination)
        try collectSchemaStepCounts(plan, scan: scan, source: source)
        try countLosses()
        reportMissingExternalData(source.externalData)
        if failsOnUnintendedLoss, let error = run.report.losses.unintendedLossError() { throw error }
        run.report.bySchemaChanges = true
        run.report.schemaChanges = plan.changes.map { $0.summary }
        run.report.schemaChangesNotDone = nil
        try destination.setMetadata(carried)
        try destination.save()
        try destination.closeForHandOver()
        try flushMigratedStore(temporaryPath)
        run.stepsDone = run.totalSteps
        run.migrationProgress = 1
        try notifyProgress(entityMappingName: "", processed: 0, total: 0, force: true)
        sourceStore?.close()
        try access.checkUnchanged()
        return run.report
    }

    /// Copies every page of `source`'s main database (in its read transaction: the run's snapshot) into `copy`.
    private func copyPages(from source: SQLiteDatabase, to copy: SQLiteDatabase) throws {
        guard let to = copy.handle, let from = source.handle, let backup = sqlite3_backup_init(to, "main", from, "main")
        else {
            throw MigrationError(
                .sqlite,
                "cannot copy the source store into '\(copy.path)': \(copy.handle.map { String(cString: sqlite3_errmsg($0)) } ?? "closed")"
            )
        }
        let step = sqlite3_backup_step(backup, -1)
        let finish = sqlite3_backup_finish(backup)
        guard step == SQLITE_DONE, finish == SQLITE_OK else {
            throw MigrationError(
                .sqlite,
                "cannot copy the source store into '\(copy.path)': \(String(cString: sqlite3_errstr(step == SQLITE_DONE ? finish : step)))"
            )
        }
    }

    /// Empties the run's temporary file (and removes what SQLite made beside it) for the general path.
    private func emptyTemporaryFile(_ path: String) {
        _ = truncate(path, 0)
        for suffix in StoreFiles.companionSuffixes { FileIO.remove(path + suffix) }
    }

    /// An index as SQLite describes it: table, uniqueness, partial, and its key columns with order and collation.
    private struct IndexShape: Equatable {
        var table: String
        var unique: Bool
        var partial: Bool
        var columns: [String]
    }

    private func indexShapes(in database: SQLiteDatabase, renaming: ((String, String) -> (String, String?)?)? = nil)
        throws -> [String: IndexShape]
    {
        var shapes: [String: IndexShape] = [:]
        for row in try database.rows(
            "SELECT name, tbl_name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL")
        {
            guard let name = row.element(at: 0)?.text, let table = row.element(at: 1)?.text else { continue }
            let flags =
                try database.rows(
                    "SELECT \"unique\", partial FROM pragma_index_list(?) WHERE name = ?",
                    [.string(table), .string(name)]
                ).first ?? []
            var shape = IndexShape(
                table: table.uppercased(), unique: flags.element(at: 0)?.integer == 1,
                partial: flags.element(at: 1)?.integer == 1, columns: [])
            for column in try database.rows(
                "SELECT name, \"desc\", coll FROM pragma_index_xinfo(?) WHERE key = 1 ORDER BY seqno", [.string(name)])
            {
                var columnName = column.element(at: 0)?.text
                if let renaming = renaming, let c = columnName {
                    guard let mapped = renaming(table, c) else {
                        shape.table = ""
                        break
                    }
                    shape.table = mapped.0.uppercased()
                    columnName = mapped.1
                }
                shape.columns.append(
                    "\(columnName?.uppercased() ?? "<expression>") \(column.element(at: 1)?.integer ?? 0) \(column.element(at: 2)?.text?.uppercased() ?? "")"
                )
            }
            shapes[name.uppercased()] = shape
        }
        return shapes
    }

    /// Drops the copy's indexes that the destination does not have as they are (by name and
    /// shape, once renamed): the others stay, and are not rebuilt.
    private func dropIndexesNotKept(_ plan: SchemaStepPlan, in database: SQLiteDatabase, desired: SQLiteDatabase) throws
    {
        let wanted = try indexShapes(in: desired)
        let dropped = Set(
            plan.changes.compactMap { change -> String? in
                if case .dropTable(let table) = change { return table.uppercased() }
                return nil
            })
        let existing = try indexShapes(in: database) { table, column in
            guard let kept = plan.columnRenames.first(where: { $0.key.uppercased() == table.uppercased() })?.value
            else { return nil }
            return (kept.table, kept.columns.first(where: { $0.key.uppercased() == column.uppercased() })?.value)
        }
        for row in try database.rows(
            "SELECT name, tbl_name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL")
        {
            guard let name = row.element(at: 0)?.text, let table = row.element(at: 1)?.text,
                !dropped.contains(table.uppercased())
            else { continue }
            let shape = existing[name.uppercased()]
            if shape == nil || shape?.table == "" || shape?.columns.contains(where: { $0.hasPrefix("<") }) == true
                || wanted[name.uppercased()] != shape
            {
                try database.exec("DROP INDEX \(SQLiteDatabase.quote(name))")
            }
        }
    }

    private func createMissingIndexes(in database: SQLiteDatabase, desired: SQLiteDatabase) throws {
        let present = Set(
            try database.rows("SELECT name FROM sqlite_master WHERE type = 'index'").compactMap {
                $0.first?.text?.uppercased()
            })
        for row in try desired.rows(
            "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY rowid")
        {
            guard let name = row.element(at: 0)?.text, let sql = row.element(at: 1)?.text,
                !present.contains(name.uppercased())
            else { continue }
            try database.exec(sql)
        }
    }

    /// `ALTER TABLE` leaves its marks in the schema's text (a renamed table's name in quotes, an
    /// added column after a space and a comma). Where a changed table's columns are in the order a
    /// new store has them (always after renames that keep the order by kind and name, or drops),
    /// its `CREATE TABLE` and its indexes' `CREATE INDEX` get the new store's spelling: the same
    /// statement but for spaces and quotes, so the text is replaced in `sqlite_master`
    /// (`writable_schema`) and the schema version moved on. `verifySchema` then reads the schema
    /// anew, so a text that did not mean the same would send the step to the general path.
    private func spellAsNewStore(_ plan: SchemaStepPlan, in database: SQLiteDatabase, desired: SQLiteDatabase) throws {
        var replacements: [(name: String, sql: String)] = []
        for kept in plan.keptTables {
            // With the columns' defaults: the rows a column added with a default holds read it
            // from the schema's text, which must then stay.
            func columns(_ db: SQLiteDatabase) throws -> [String] {
                try db.rows("SELECT name, type, pk, dflt_value FROM pragma_table_info(?)", [.string(kept.name)]).map {
                    row in
                    "\(row.element(at: 0)?.text?.uppercased() ?? "") \(row.element(at: 1)?.text?.uppercased() ?? "") \(row.element(at: 2)?.integer ?? 0) \(row.element(at: 3)?.text ?? "")"
                }
            }
            let have = try database.scalar(
                "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", [.string(kept.name)])?.text
            guard
                let want = try desired.scalar(
                    "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", [.string(kept.name)])?.text,
                have != want, try columns(database) == columns(desired)
            else { continue }
            replacements.append((kept.name, want))
            for row in try desired.rows(
                "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL",
                [.string(kept.name)])
            {
                if let name = row.element(at: 0)?.text, let sql = row.element(at: 1)?.text {
                    replacements.append((name, sql))
                }
            }
        }
        if replacements.isEmpty { return }
        let version = try database.scalar("PRAGMA schema_version")?.integer ?? 0
        try database.exec("PRAGMA writable_schema = ON")
        for replacement in replacements {
            try database.run(
                "UPDATE sqlite_master SET sql = ? WHERE name = ? AND sql IS NOT NULL",
                [.string(replacement.sql), .string(replacement.name)])
        }
        try database.exec("PRAGMA writable_schema = OFF")
        try database.exec("PRAGMA schema_version = \(version + 1)")
    }

    /// Throws `NotEligible` unless the copy has exactly the destination's tables, columns (name and
    /// declared type; the order may differ, see docs/schema-step.md) and indexes.
    private func verifySchema(of database: SQLiteDatabase, desired: SQLiteDatabase) throws {
        func tables(_ db: SQLiteDatabase) throws -> [String: Set<String>] {
            var result: [String: Set<String>] = [:]
            for row in try db.rows(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite!_%' ESCAPE '!'")
            {
                guard let name = row.first?.text else { continue }
                let columns = try db.rows("SELECT name, type, pk FROM pragma_table_info(?)", [.string(name)]).map {
                    column in
                    "\(column.element(at: 0)?.text?.uppercased() ?? "") \(column.element(at: 1)?.text?.uppercased() ?? "") \(column.element(at: 2)?.integer ?? 0)"
                }
                result[name.uppercased()] = Set(columns)
            }
            return result
        }
        let have = try tables(database)
        let want = try tables(desired)
        if have != want {
            let names = Set(have.keys).symmetricDifference(want.keys).sorted()
            let differing = want.keys.filter { have[$0] != nil && have[$0] != want[$0] }.sorted()
            throw SchemaStepPlan.NotEligible(
                text: "the changed schema is not the destination's (tables \(names + differing))")
        }
        if try indexShapes(in: database) != indexShapes(in: desired) {
            throw SchemaStepPlan.NotEligible(text: "the changed schema's indexes are not the destination's")
        }
    }

    /// The storage classes `StoredValueRule.sql` does not keep as they are for `type` (the
    /// complement of its plain classes; a shorter test per row than the rule's own condition),
    /// nil where the rule looks at values too (booleans, UUIDs) or keeps everything.
    static func storageClassesConverted(for type: AttributeType) -> [String]? {
        switch type {
        case .integer16, .integer32, .integer64: return ["real", "text", "blob"]
        case .double, .float, .date: return ["text", "blob"]
        case .string, .uri: return ["real", "blob"]
        case .decimal: return ["blob"]
        case .binary, .transformable: return ["integer", "real", "text"]
        case .boolean, .uuid, .undefined, .objectID, .composite: return nil
        }
    }

    /// The rows get the destination entity number and `Z_OPT` 1, as the general path writes
    /// them, where the scan found others (one update of the table; none in the usual case).
    private func rewriteRows(_ plan: SchemaStepPlan, scan: SchemaStepScan, in database: SQLiteDatabase) throws {
        for kept in plan.keptTables where scan.tables[kept.name]?.rewritesRows == true {
            try checkCancelled()
            try database.exec(
                "UPDATE \(SQLiteDatabase.quote(kept.name)) SET Z_ENT = \(kept.destinationEntityNumber), Z_OPT = 1 WHERE Z_ENT IS NOT \(kept.destinationEntityNumber) OR Z_OPT IS NOT 1"
            )
        }
    }

    /// `collectCounts` from what the scan counted: a kept table's rows are all taken and all
    /// arrive; a removed entity's instances are counted as the general path counts them.
    private func collectSchemaStepCounts(_ plan: SchemaStepPlan, scan: SchemaStepScan, source: PersistentStore) throws {
        let destinationLayout = destinationStore?.layout ?? StoreLayout(model: destinationModel)
        let keptSources = Set(plan.keptTables.map { $0.sourceName })
        for entity in sourceModel.entitiesInStoreOrder where !entity.isAbstract {
            guard !keptSources.contains(source.layout.table(for: entity)) else { continue }
            var request = FetchRequest(entityName: entity.name)
            request.includesSubentities = false
            let left = try source.count(request)
            if left > 0 { run.report.untakenSourceInstances.append((entity.name, left)) }
        }
        for entity in destinationModel.entitiesInStoreOrder where !entity.isAbstract {
            run.report.destinationCounts.append(
                (entity.name, scan.tables[destinationLayout.table(for: entity)]?.count ?? 0))
        }
    }
}
