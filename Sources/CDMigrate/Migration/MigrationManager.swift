import Synchronization

/// NSMigrationManager: migrates a store from a source model to a destination model with one or
/// more mapping models (passes), in Core Data's three stages.
///
/// Safety (docs/reliability.md): the source is never written and nothing is created beside it;
/// the destination name is locked for the run; the new store is built in a unique temporary file
/// beside the destination and moved into place in one step only when everything succeeded; on
/// any error or cancellation the temporary file is deleted.
///
/// Memory: source rows are streamed, associations live in a table of the destination's database
/// connection (not in memory), destination rows are written in batches.
public final class MigrationManager {
    /// The model of the stores this manager reads (Core Data: `sourceModel`).
    public let sourceModel: ManagedObjectModel
    /// The model of the stores this manager writes (Core Data: `destinationModel`).
    public let destinationModel: ManagedObjectModel
    /// One mapping model per pass, applied in order to the same source into one destination: the
    /// manager's own copies, bound to its models, whose property mappings' expressions a policy
    /// may change for the rest of a pass (each pass's end puts them back as declared).
    public let mappingModels: [MappingModel]
    /// The mapping model of the pass running (the first one between runs); Core Data: `mappingModel`.
    public var mappingModel: MappingModel { mappingModels[min(max(currentPass, 0), mappingModels.count - 1)] }

    /// Values shared by all policies of one migration (Core Data's `userInfo`); cleared when a migration ends.
    public var userInfo: [String: Any] = [:]
    /// Called as the migration advances; returning false cancels it.
    public var progressHandler: ((MigrationProgress) -> Bool)?
    /// How often (in instances) the handler hears about progress within a step.
    public var progressInterval = 500
    /// Instances inserted between commits of the destination.
    public var batchSize = 5_000
    /// Whether declarative entity mappings may run as one SQL statement (off: every mapping row by row).
    public var pushDownSQL = true
    /// Whether the batch default, and associations made one at a time with consecutive keys, are
    /// recorded as key ranges (`AssociationTable.KeyRange`) rather than a row each (off: a row
    /// each, as before; for tests that compare the two).
    package var recordsAssociationKeyRanges = true
    /// Whether a policy's `applyAttributeMappings` on a new instance may leave the values to SQL
    /// (`DeferredAttributeMappings`; off: evaluated at once, as before; for tests that compare the two).
    package var defersAttributeMappings = true
    /// The versions of the model the source store may have been written with (an `.xcdatamodeld`
    /// or a folder of JSON models): when the store does not match the source model, the error
    /// (134130) names the version it does match. Core Data counterpart: the `.momd` an app ships.
    public var modelVersions: ModelVersionSet?
    /// Whether a run that loses data its mapping does not declare as intended fails before the
    /// store is handed over (nothing is written at the destination): the error (134110) lists the
    /// losses of `MigrationReport.losses` that are not intended (docs/loss-report.md).
    ///
    /// Core Data counterpart: none (Core Data drops such data without a word).
    public var failsOnUnintendedLoss = false
    /// Whether a declarative mapping that takes its source entity whole into an empty table keeps
    /// the source keys (its associations are then identities, not rows; see `AssociationTable`).
    var keepsSourceKeys = true
    /// Whether a step that SQLite can express as schema changes (renames, added and dropped
    /// columns, new and removed entities) is done that way, on a copy of the source file, instead
    /// of writing every row; the result is the same on every store whose values its model allows (a
    /// column the change does not touch is carried as it is, not converted: docs/schema-step.md).
    /// Off: always the general path.
    ///
    /// Core Data counterpart: none (its lightweight migration decides this internally).
    public var triesSchemaChanges = true

    /// How far the running migration is, 0…1: finished steps (entity mappings × 3 stages) plus
    /// the fraction of the current step; 0 between migrations (Core Data: `migrationProgress`).
    public var migrationProgress: Double { run.migrationProgress }
    /// The entity mapping being run, nil between migrations (Core Data: `currentEntityMapping`).
    public var currentEntityMapping: EntityMapping? { run.currentEntityMapping }
    /// The property mapping whose expression is being evaluated.
    public var currentPropertyMapping: PropertyMapping? { run.currentPropertyMapping }
    /// The pass running: the index of its mapping model in `mappingModels`.
    public var currentPass: Int { run.currentPass }
    /// The source store while a migration runs, read-only (Core Data: `sourceContext`).
    public var sourceStore: PersistentStore? { run.sourceStore }
    /// The destination store while a migration runs (Core Data: `destinationContext`).
    public var destinationStore: PersistentStore? { run.destinationStore }

    /// The running migration's state; a fresh one per run (`MigrationRun`).
    var run = MigrationRun()
    /// What outlives a run and needs the manager holds (`OwnerReference`).
    let reference = OwnerReference<MigrationManager>()
    var policyFactories: [String: () -> EntityMigrationPolicy] = [:]
    var hostFunctions: [String: ([Value]) throws -> Value] = [:]
    /// Set by `cancel()` from any thread, read by the migration's thread.
    let cancelRequest = Atomic<Bool>(false)

    /// What reading and checking the models and mapping models noticed, available before a run (the
    /// `validate` path) and repeated at the start of every report's warnings: each model's explicit
    /// `versionHash` that differs from the computed one, and each mapping model's warnings (a
    /// destination property no mapping fills while the source has one of that name, an entity
    /// mapping without a source expression, what an Xcode mapping model dropped), and, for several
    /// passes, a relationship mapping whose look-up needs instances only another pass makes
    /// (`PassDependencies`). Core Data says none of this.
    public var warnings: [String] {
        var result: [String] = []
        for (side, model) in [("source", sourceModel), ("destination", destinationModel)] {
            for warning in model.warnings {
                let line = "\(side) model \(model.name.map { "'\($0)'" } ?? "(unnamed)"): \(warning)"
                if !result.contains(line) { result.append(line) }
            }
        }
        for warning in mappingModels.flatMap({ $0.warnings }) where !result.contains(warning) { result.append(warning) }
        let passes = mappingModels.enumerated().map {
            PassDependencies.Pass(name: $0.element.name ?? "mapping model \($0.offset + 1)", model: $0.element)
        }
        for warning in PassDependencies.warnings(passes) where !result.contains(warning) { result.append(warning) }
        return result
    }

    /// For the 134130 message: which version of `modelVersions` the store at `path` matches.
    func storeVersionNote(_ path: String) -> String {
        guard let versions = modelVersions, let info = try? StoreInfo(contentsOf: path, countingRows: false),
            !info.metadata.isEmpty
        else { return "" }
        if let name = versions.versionName(forStoreMetadata: info.metadata) {
            return ". The store matches version '\(name)' of '\(versions.path)': migrate from that version"
        }
        return ". The store matches no version of '\(versions.path)' (\(versions.versionNames.joined(separator: ", ")))"
    }

    /// Checks every mapping model against the two models (errors name what does not fit) and
    /// keeps its own copies bound to them: the mapping models given are not changed, so they may
    /// be shared with other migrations.
    public init(sourceModel: ManagedObjectModel, destinationModel: ManagedObjectModel, mappingModels: [MappingModel])
        throws
    {
        if mappingModels.isEmpty {
            throw MigrationError(.migrationMissingMappingModel, "a migration needs at least one mapping model")
        }
        // A look-up by name of another pass's entity mapping: said as such, before each model's own checks.
        let passes = mappingModels.enumerated().map {
            PassDependencies.Pass(name: $0.element.name ?? "mapping model \($0.offset + 1)", model: $0.element)
        }
        if let error = MigrationError.collecting(
            PassDependencies.lookUpsAcrossPasses(passes), code: .invalidMapping,
            summary: "passes look up entity mappings of other passes")
        {
            throw error
        }
        self.mappingModels = try mappingModels.map {
            try $0.validate(sourceModel: sourceModel, destinationModel: destinationModel)
        }
        self.sourceModel = sourceModel
        self.destinationModel = destinationModel
        reference.point(to: self)
    }

    deinit { reference.point(to: nil) }

    /// A manager for a single pass.
    ///
    /// - parameter sourceModel: The model of the stores to read.
    /// - parameter destinationModel: The model of the stores to write.
    /// - parameter mappingModel: The mapping model, checked against both models.
    /// - throws: `MigrationError` 134110 (`migration`) naming what in the mapping does not fit the models.
    ///
    /// Core Data: `NSMigrationManager(sourceModel:destinationModel:)`, with the mapping model given to
    /// `migrateStore(from:type:options:with:toDestinationURL:…)`.
    public convenience init(
        sourceModel: ManagedObjectModel, destinationModel: ManagedObjectModel, mappingModel: MappingModel
    ) throws {
        try self.init(sourceModel: sourceModel, destinationModel: destinationModel, mappingModels: [mappingModel])
    }

    /// Registers the policy class for mappings whose `policy` is `name`: a new object per entity mapping and pass.
    /// A module-qualified name (`UnCloudNotes.AttachmentPolicy`, as Xcode's editor shows a Swift class)
    /// and the bare class name find each other, whichever of the two the mapping and the registration use.
    public func registerPolicy(named name: String, _ factory: @escaping () -> EntityMigrationPolicy) {
        policyFactories[name] = factory
    }

    /// Whether a policy is registered for mappings whose `policy` is `name` (under that name, or
    /// the same class name with or without a module prefix): what a migration would find.
    ///
    /// Core Data counterpart: none (Core Data looks the class up with `NSClassFromString`).
    /// - Parameter name: the policy name an entity mapping gives.
    public func isPolicyRegistered(named name: String) -> Bool { policyFactory(named: name) != nil }

    /// The factory registered for `name`: under that very name, else under the same class name with
    /// or without a module prefix.
    func policyFactory(named name: String) -> (() -> EntityMigrationPolicy)? {
        if let factory = policyFactories[name] { return factory }
        let bare = XcodeMappingModelReader.unqualified(name)
        if let factory = policyFactories[bare] { return factory }
        return policyFactories.keys.sorted().first { XcodeMappingModelReader.unqualified($0) == bare }.flatMap {
            policyFactories[$0]
        }
    }

    /// Registers the function `FUNCTION(CAST("className", "Class"), "selector", …)` calls.
    public func registerFunction(className: String, selector: String, _ body: @escaping ([Value]) throws -> Value) {
        hostFunctions[className + " " + selector] = body
    }

    /// Asks a running migration to stop; it ends with `.migrationCancelled` at the next instance.
    /// Safe to call from any thread (Core Data: `cancelMigrationWithError:`).
    public func cancel() { cancelRequest.store(true, ordering: .relaxed) }

    // MARK: Running

    /// Migrates the store at `sourcePath` into a new store at `destinationPath`, which must not
    /// exist — neither before nor when the new store is moved there (the move refuses, atomically,
    /// a destination that appeared meanwhile) — and must have no `-wal`, `-shm` or `-journal`
    /// beside it (SQLite would replay a stale log onto the new store).
    ///
    /// The destination name is locked for the run (`<destination>.cdmigrate-lock`): a second
    /// migration to it fails at once with a "busy" error. The new store is written to a unique
    /// temporary file beside the destination and renamed onto it only when everything succeeded.
    /// The source is read without creating or changing any file beside it (see `SourceAccess`).
    ///
    /// - Throws: `MigrationError` — `.migrationManagerDestinationStore` for a destination that
    ///   exists, is busy or has stale companion files; `.migrationManagerSourceStore` for a source
    ///   that cannot be read or that another process changed meanwhile; any error of the run.
    /// - Core Data: `NSMigrationManager.migrateStore(from:type:options:mapping:to:type:options:)`.
    @discardableResult
    public func migrateStore(from sourcePath: String, to destinationPath: String, checkSourceVersion: Bool = true)
        throws -> MigrationReport
    {
        if StoreFiles.sameFile(sourcePath, destinationPath) {
            throw MigrationError(
                .migrationManagerDestinationStore,
                "the destination '\(destinationPath)' is the source store; use migrateStoreInPlace(at:) to replace a store"
            )
        }
        let lock = try DestinationLock.acquireForNewStore(at: destinationPath)
        defer { lock.release() }
        let temporary = try StoreFiles.makeTemporaryFile(beside: destinationPath)
        var stagedExternalData: String?
        defer { ExternalDataHandOver.removeFolder(stagedExternalData) }
        do {
            let result = try runMigration(
                sourcePath: sourcePath, temporaryPath: temporary, destinationPath: destinationPath,
                checkSourceVersion: checkSourceVersion)
            stagedExternalData = result.stagedExternalData
            try handOver(temporary, externalData: stagedExternalData, to: destinationPath, replacing: false)
            return result.report
        } catch {
            StoreFiles.removeTemporaryStore(temporary)
            throw MigrationManager.wrap(error)
        }
    }

    /// Migrates a store and replaces it by the result, only after everything succeeded: the new
    /// store is written to a unique temporary file beside it and renamed over the old one in one
    /// step. The old store is not touched before that step, with one exception, stated in every
    /// error after it: committed transactions waiting in its `-wal` are first checkpointed into
    /// its main file (same contents, other bytes), since a `-wal` left beside the new file would
    /// be replayed onto it. Fails with a "busy" error while another process has the store open
    /// or another migration holds its name. A symbolic link is followed: its target is migrated
    /// and the link kept. The new store gets the old one's mode, owner and group.
    ///
    /// - Throws: `MigrationError` as `migrateStore(from:to:)`.
    /// - Core Data: what `NSPersistentStoreCoordinator` does on opening a store with
    ///   `NSMigratePersistentStoresAutomaticallyOption`.
    @discardableResult
    public func migrateStoreInPlace(at path: String, checkSourceVersion: Bool = true) throws -> MigrationReport {
        let path = try StoreFiles.inPlaceTarget(path)
        let lock = try DestinationLock.acquire(for: path)
        defer { lock.release() }
        try refuseIfOpenElsewhere(path)
        let temporary = try StoreFiles.makeTemporaryFile(beside: path)
        var stagedExternalData: String?
        defer { ExternalDataHandOver.removeFolder(stagedExternalData) }
        let result: MigrationReport
        do {
            (result, stagedExternalData) = try runMigration(
                sourcePath: path, temporaryPath: temporary, destinationPath: path,
                checkSourceVersion: checkSourceVersion)
        } catch {
            StoreFiles.removeTemporaryStore(temporary)
            throw MigrationManager.wrap(error)
        }
        var changed = "the store is unchanged"
        do {
            try refuseIfOpenElsewhere(path)
            if (FileIO.size(path + "-wal") ?? 0) > 0 {
                changed =
                    "the store's contents are unchanged, but the committed transactions of its write-ahead log '\(path)-wal' may have been checkpointed into its main file"
                try StoreFiles.checkpointLog(path)
                changed =
                    "the store's contents are unchanged, but the committed transactions of its write-ahead log '\(path)-wal' were checkpointed into its main file (which therefore has other bytes) and the log emptied"
            }
            try handOver(temporary, externalData: stagedExternalData, to: path, replacing: true)
        } catch {
            StoreFiles.removeTemporaryStore(temporary)
            let reason = (error as? MigrationError)?.message ?? "\(error)"
            throw MigrationError(
                .migrationManagerDestinationStore,
                "the migration succeeded but '\(path)' could not be replaced: \(reason); the migrated store was discarded and \(changed)"
            )
        }
        return result
    }

    /// In-place migration needs the store to itself: a process writing it meanwhile would lose its writes.
    func refuseIfOpenElsewhere(_ path: String) throws {
        if SourceAccess.isOpenElsewhere(path) == true {
            throw MigrationError(
                .migrationManagerSourceStore,
                "the store '\(path)' is busy: another program or connection has it open; close it there before migrating it in place"
            )
        }
    }

    /// The run proper: reads the source (see `SourceAccess`) and writes the new store into
    /// `temporaryPath`, an empty file this run created, and its external data files into the
    /// private folder it returns; the caller hands both over to `destinationPath` or removes them.
    func runMigration(sourcePath: String, temporaryPath: String, destinationPath: String, checkSourceVersion: Bool)
        throws
        -> (report: MigrationReport, stagedExternalData: String?)
    {
        for model in mappingModels {
            for mapping in model.entityMappings {
                if let name = mapping.entityMigrationPolicyClassName, policyFactory(named: name) == nil {
                    throw MigrationError(
                        .entityMigrationPolicy,
                        "entity mapping '\(mapping.name)' names policy '\(name)', which is not registered",
                        path: mapping.path + ".policy")
                }
            }
        }
        cancelRequest.store(false, ordering: .relaxed)
        run = MigrationRun()
        defer {
            run.closeStores()
            run = MigrationRun()
            userInfo = [:]
        }
        run.report.warnings = warnings
        run.evaluator = ExpressionEvaluator(environment: self)
        run.evaluator?.isCancelled = { [unowned self] in self.cancelRequest.load(ordering: .relaxed) }
        run.totalSteps = max(1, mappingModels.reduce(0) { $0 + $1.entityMappings.count * 3 })
        do {
            let access = try SourceAccess.prepare(source: sourcePath, scratchBeside: temporaryPath)
            run.sourceAccess = access
            let source: PersistentStore
            do {
                source = try PersistentStore.openSource(
                    at: sourcePath, uri: access.uri, model: sourceModel, checkVersion: checkSourceVersion)
            } catch let error as MigrationError where error.code == .incompatibleVersionHash {
                // Core Data's word for "this store is not at the source model's version".
                throw MigrationError(
                    .migrationMissingSourceModel,
                    "the source store '\(sourcePath)' does not match the source model: \(error.message)\(storeVersionNote(sourcePath))",
                    underlying: [error])
            } catch let error as MigrationError {
                throw MigrationError(
                    .migrationManagerSourceStore, "cannot open the source store '\(sourcePath)': \(error.message)",
                    underlying: [error])
            }
            run.sourceStore = source
            // One read transaction for the whole run (begun by openSource): a consistent snapshot
            // of the source, and no lock taken and released around every query.
            if !source.database.isInTransaction { try source.database.begin() }
            run.report.warnings += source.warnings
            // Persistent history and CloudKit tables: carried through an inferred step, as Core
            // Data's lightweight migration keeps them; a custom mapping model leaves them behind.
            let history = try StoreInfo.frameworkEntities(in: source.database)
            if !history.isEmpty && !isInferredStep {
                run.report.warnings.append(
                    "the source's persistent history and CloudKit mirroring tables are not carried into the destination (\(history.map { "\($0.table): \($0.rows) row\($0.rows == 1 ? "" : "s")" }.joined(separator: ", "))): this step has a custom mapping model, and Core Data keeps them only through lightweight migrations"
                )
            }
            if let done = try runAsSchemaChanges(
                source: source, access: access, hasFrameworkTables: !history.isEmpty, temporaryPath: temporaryPath)
            {
                return (done, run.stagedExternalData)
            }
            var options = PersistentStore.CreateOptions()
            options.privateFile = true
            options.adoptsEmptyFile = true
            // Z_MODELCACHE, as Core Data writes it
            options.modelCache = try StoreModelCache.compressedArchive(of: destinationModel)
            // The source's UUID and metadata entries, the destination model's version entries;
            // the UUID only at the end, so that source and destination object IDs stay distinct
            // while the run has both stores open.
            let carried = StoreMetadata(carrying: source.metadata, model: destinationModel)
            var whileRunning = carried
            whileRunning.storeUUID = PersistentStore.randomUUID()
            options.metadata = whileRunning
            let destination: PersistentStore
            do {
                destination = try PersistentStore.create(at: temporaryPath, model: destinationModel, options: options)
            } catch let error as MigrationError {
                throw MigrationError(
                    .migrationManagerDestinationStore,
                    "cannot create the destination store '\(temporaryPath)': \(error.message)", underlying: [error])
            }
            run.destinationStore = destination
            destination.externalData.prepareForHandOver(
                to: destinationPath, stagingTemplate: destinationPath + ".cdmigrate-data-XXXXXX",
                origins: source.externalData.origins)
            destination.externalData.stagingFolderCreated = { DestinationLock.noteTemporary($0) }
            run.associations = try AssociationTable(database: destination.database)
            run.associations?.recordsRuns = recordsAssociationKeyRanges
            try estimateRunRows(source: source)

            for (pass, model) in mappingModels.enumerated() {
                try runPass(pass, model)
            }
            if !history.isEmpty && isInferredStep { try carryFrameworkTables(from: source, to: destination) }
            try maintainDerivedAttributes(in: destination)
            // Hooks of the last stage may have fetched (and so indexed) again.
            try detachSource()
            try dropLookupIndexes()
            try collectCounts()
            try countLosses()
            reportMissingExternalData(source.externalData)
            if failsOnUnintendedLoss, let error = run.report.losses.unintendedLossError() { throw error }
            try destination.setMetadata(carried)
            try destination.save()
            run.stagedExternalData = destination.externalData.stagingFolder
            try destination.closeForHandOver()
            try flushMigratedStore(temporaryPath)
            run.migrationProgress = 1
            try notifyProgress(entityMappingName: "", processed: 0, total: 0, force: true)
            // Last: the source read without locks must not have changed under the run.
            sourceStore?.close()
            try access.checkUnchanged()
            return (run.report, run.stagedExternalData)
        } catch {
            if let staging = destinationStore?.externalData.stagingFolder { ExternalDataHandOver.removeFolder(staging) }
            destinationStore?.close()
            run.destinationStore = nil
            throw MigrationManager.wrap(error)
        }
    }

    /// Flushes the migrated store's private file to disk before its hand-over.
    /// - Throws: `.io` when it cannot: its data may not be on disk, so it is not handed over.
    func flushMigratedStore(_ temporaryPath: String) throws {
        do { try FileIO.fsync(path: temporaryPath) } catch let error as MigrationError {
            throw MigrationError(
                .io, "the migrated store could not be flushed to disk, so it was discarded: \(error.message)",
                underlying: [error])
        }
    }

    /// Hands the temporary store over with the external data files it wrote: the files are linked
    /// into the destination's folder first and taken back should the store's hand-over fail.
    private func handOver(_ temporary: String, externalData: String?, to path: String, replacing: Bool) throws {
        let published = try ExternalDataHandOver.publish(externalData, toStore: path)
        do {
            try StoreFiles.handOver(temporary, to: path, replacing: replacing)
        } catch {
            ExternalDataHandOver.unpublish(published)
            throw error
        }
    }

    /// The source's missing external data files: counted in the report and its loss report (per
    /// attribute: their values arrive as nil, never intended), the first few named.
    func reportMissingExternalData(_ data: ExternalBinaryData) {
        let missing = data.missingFiles.sorted()
        run.report.missingExternalDataFiles = missing.count
        for (property, files) in data.missingFilesByProperty.sorted(by: { $0.key < $1.key }) {
            let parts = property.split(separator: ".", maxSplits: 1).map(String.init)
            run.report.losses.losses.append(
                LossReport.Loss(
                    kind: .externalData, entityName: parts.first ?? property,
                    propertyName: parts.count > 1 ? parts[1] : nil,
                    entityMappingName: nil, pass: nil, count: files.count, isIntended: false))
        }
        guard !missing.isEmpty else { return }
        let shown = missing.prefix(5).map { "'\($0)'" }.joined(separator: ", ")
        run.report.warnings.append(
            "\(missing.count) external binary data file\(missing.count == 1 ? " is" : "s are") missing from the source (\(shown)\(missing.count > 5 ? ", …" : "")): \(missing.count == 1 ? "its value was" : "their values were") migrated as nil"
        )
    }

    func enter(_ mapping: EntityMapping, policy: EntityMigrationPolicy) throws {
        try checkCancelled()
        run.currentEntityMapping = mapping
        run.currentPolicy = policy
    }

    func finishStep() {
        run.runRows.finish(step: run.stepsDone)
        run.stepsDone += 1
        run.migrationProgress = Double(run.stepsDone) / Double(run.totalSteps)
    }

    func checkCancelled() throws {
        if cancelRequest.load(ordering: .relaxed) {
            throw MigrationError(.migrationCancelled, "the migration was cancelled")
        }
    }

    func notifyProgress(entityMappingName: String, processed: Int, total: Int, force: Bool = false) throws {
        guard let handler = progressHandler else { return }
        guard force || processed % max(1, progressInterval) == 0 else { return }
        let within = total > 0 ? min(1, Double(processed) / Double(total)) : 0
        let fraction = min(1, (Double(run.stepsDone) + within) / Double(run.totalSteps))
        run.migrationProgress = fraction
        run.runRows.report(step: run.stepsDone, total: total)
        var progress = MigrationProgress(
            fraction: fraction, stage: run.stage, pass: currentPass, entityMappingName: entityMappingName,
            processed: processed, total: total,
            runProcessed: run.runRows.processed(step: run.stepsDone, within: processed),
            runTotal: run.runRows.total)
        progress.runWork = run.runRows.processedWork(step: run.stepsDone, within: processed)
        progress.runWorkTotal = run.runRows.totalWork
        if !handler(progress) { cancelRequest.store(true, ordering: .relaxed) }
        try checkCancelled()
    }

    func collectCounts() throws {
        guard let source = sourceStore, let destination = destinationStore, let associations = run.associations else {
            return
        }
        let taken = try associations.distinctSourceCounts()
        for entity in sourceModel.entitiesInStoreOrder where !entity.isAbstract {
            var request = FetchRequest(entityName: entity.name)
            request.includesSubentities = false
            let total = try countSource(request, in: source)
            let left = total - (taken[entity.entityNumber] ?? 0)
            if left > 0 { run.report.untakenSourceInstances.append((entity.name, left)) }
        }
        let copied = copiedDestinationCounts(in: destination)
        for entity in destinationModel.entitiesInStoreOrder where !entity.isAbstract {
            if let count = copied[ObjectIdentifier(entity)] {
                run.report.destinationCounts.append((entity.name, count))
                continue
            }
            var request = FetchRequest(entityName: entity.name)
            request.includesSubentities = false
            run.report.destinationCounts.append((entity.name, try destination.count(request)))
        }
    }

    /// The mapping's number in this run's association table; -1 when it is not part of the run.
    func mappingID(_ mapping: EntityMapping) -> Int {
        let key = ObjectIdentifier(mapping)
        if let last = run.lastMappingID, last.mapping == key { return last.id }
        let id = run.mappingIDs[key] ?? -1
        run.lastMappingID = (key, id)
        return id
    }

    /// Errors thrown by host code become entity policy errors; cdmigrate's own pass through.
    static func wrap(_ error: Error) -> MigrationError {
        if let error = error as? MigrationError { return error }
        return MigrationError(.entityMigrationPolicy, "a migration policy failed: \(error)")
    }
}
