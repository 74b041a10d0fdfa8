import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Runs a `MigrationPlan`: one `MigrationManager` per stage, each reading the previous stage's
/// store, through temporary stores in a private folder beside the destination; the final store
/// is put in place only at the end, with the same no-replace hand-over (or in-place replacement)
/// as a single migration. The source is never modified; on any failure or cancellation every
/// temporary store is removed and the destination is not created.
///
/// Core Data counterpart: `NSStagedMigrationManager` (and the progressive migration apps write
/// by hand with `NSMigrationManager` before it).
public final class StagedMigrationManager {
    /// The stages from the store's version to the target, planned from the model set.
    public let plan: MigrationPlan
    /// Called as each stage advances, with the stage's index; returning false cancels.
    public var progressHandler: ((Int, MigrationProgress) -> Bool)?
    /// Passed on to every stage's manager.
    public var pushDownSQL = true
    /// Whether a stage that loses data its mapping does not declare as intended fails the chain
    /// before anything is handed over (see `MigrationManager.failsOnUnintendedLoss`); an inferred
    /// stage declares nothing. Core Data counterpart: none.
    public var failsOnUnintendedLoss = false
    /// Called just before each stage runs, with its index and manager (after the manager's
    /// progress handler is set): what a host needs to see each stage's manager, as the C API's
    /// chain handle does to give its callbacks the running stage.
    package var stageWillBegin: ((Int, MigrationManager) -> Void)?
    /// Whether consecutive steps without policies run fused into one pass (`MigrationPlan.passes`),
    /// copying the store once for them all; false runs every step on its own (the step-by-step
    /// run). The result is the same either way. Core Data counterpart: none.
    public var fusesSteps = true

    /// The passes a run makes: the plan's steps, fused as `fusesSteps` says. Stage indices given to
    /// `progressHandler` and the report's stages are these passes'.
    public var passes: [ChainPass] { plan.passes(fusing: fusesSteps) }

    /// The stages of the run under way (one per pass).
    private var runStages: [MigrationStage] = []
    private var policyFactories: [String: () -> EntityMigrationPolicy] = [:]
    private var hostFunctions: [(className: String, selector: String, body: ([Value]) throws -> Value)] = []
    /// Set by `cancel()` from any thread; read by the running stage's progress handler.
    private let cancelRequest = Atomic<Bool>(false)

    /// A manager that runs `plan`.
    ///
    /// - parameter plan: The stages, from `MigrationPlan(storeAt:models:targetVersion:)`.
    ///
    /// Core Data: `NSStagedMigrationManager(_:)` with the app's stages.
    public init(plan: MigrationPlan) { self.plan = plan }

    /// Plans and prepares the migration of the store at `path` (see `MigrationPlan`).
    public convenience init(storeAt path: String, models: ModelSet, targetVersion: String? = nil) throws {
        self.init(plan: try MigrationPlan(storeAt: path, models: models, targetVersion: targetVersion))
    }

    /// Registers a policy class for every stage whose mapping names it (see
    /// `MigrationManager.registerPolicy(named:_:)`).
    public func registerPolicy(named name: String, _ factory: @escaping () -> EntityMigrationPolicy) {
        policyFactories[name] = factory
    }

    /// Registers a host function for every stage (see `MigrationManager.registerFunction`).
    public func registerFunction(className: String, selector: String, _ body: @escaping ([Value]) throws -> Value) {
        hostFunctions.append((className, selector, body))
    }

    /// Stops the running stage at its next progress step (it ends with `.migrationCancelled`) and
    /// the stages after it. Safe to call from any thread.
    public func cancel() { cancelRequest.store(true, ordering: .relaxed) }

    /// Migrates the plan's store into a new store at `destinationPath`, which must not exist (as
    /// `MigrationManager.migrateStore(from:to:)`). A store already at the target version is copied
    /// (a consistent snapshot, its `-wal` folded in).
    ///
    /// - Throws: `MigrationError` — a stage's error, prefixed with the stage (`v2 → v3: …`);
    ///   `.entityMigrationPolicy` before anything runs when a stage names an unregistered policy;
    ///   `.migrationManagerDestinationStore` as a single migration.
    @discardableResult
    public func migrateStore(to destinationPath: String) throws -> StagedMigrationReport {
        if StoreFiles.sameFile(plan.storePath, destinationPath) {
            throw MigrationError(
                .migrationManagerDestinationStore,
                "the destination '\(destinationPath)' is the source store; migrate it in place instead")
        }
        let managers = try prepareManagers()
        let lock = try DestinationLock.acquireForNewStore(at: destinationPath)
        defer { lock.release() }
        let folder = try StagedMigrationManager.makeWorkFolder(beside: destinationPath)
        defer { StagedMigrationManager.removeWorkFolder(folder) }
        var report = StagedMigrationReport(
            storeVersionName: plan.storeVersionName, targetVersionName: plan.targetVersionName)
        let result = try run(managers, folder: folder, report: &report)
        let published = try ExternalDataHandOver.publish(
            externalDataFolder(ofResult: result, copied: report.copied), toStore: destinationPath)
        do {
            try StoreFiles.handOver(result, to: destinationPath, replacing: false)
        } catch {
            ExternalDataHandOver.unpublish(published)
            throw error
        }
        return report
    }

    /// Migrates the plan's store and replaces it by the result, only after every stage succeeded
    /// (as `MigrationManager.migrateStoreInPlace(at:)`). A store already at the target is left
    /// untouched.
    @discardableResult
    public func migrateStoreInPlace() throws -> StagedMigrationReport {
        let path = try StoreFiles.inPlaceTarget(plan.storePath)
        var report = StagedMigrationReport(
            storeVersionName: plan.storeVersionName, targetVersionName: plan.targetVersionName)
        if plan.isAtTarget { return report }
        let managers = try prepareManagers()
        let lock = try DestinationLock.acquire(for: path)
        defer { lock.release() }
        try StagedMigrationManager.refuseIfOpenElsewhere(path)
        let folder = try StagedMigrationManager.makeWorkFolder(beside: path)
        defer { StagedMigrationManager.removeWorkFolder(folder) }
        let result = try run(managers, folder: folder, report: &report)
        var changed = "the store is unchanged"
        do {
            try StagedMigrationManager.refuseIfOpenElsewhere(path)
            if (FileIO.size(path + "-wal") ?? 0) > 0 {
                changed =
                    "the store's contents are unchanged, but the committed transactions of its write-ahead log may have been checkpointed into its main file"
                try StoreFiles.checkpointLog(path)
            }
            let published = try ExternalDataHandOver.publish(
                externalDataFolder(ofResult: result, copied: false), toStore: path)
            do {
                try StoreFiles.handOver(result, to: path, replacing: true)
            } catch {
                ExternalDataHandOver.unpublish(published)
                throw error
            }
        } catch {
            let reason = (error as? MigrationError)?.message ?? "\(error)"
            throw MigrationError(
                .migrationManagerDestinationStore,
                "the migration succeeded but '\(path)' could not be replaced: \(reason); the migrated store was discarded and \(changed)"
            )
        }
        return report
    }

    // MARK: Running

    /// One manager per stage, with the registered policies and functions; refuses a plan whose
    /// mappings name a policy that is not registered before any stage runs.
    private func prepareManagers() throws -> [MigrationManager] {
        cancelRequest.store(false, ordering: .relaxed)
        var managers: [MigrationManager] = []
        runStages = passes.map { $0.stage }
        for stage in runStages {
            let manager = try MigrationManager(
                sourceModel: stage.sourceModel, destinationModel: stage.destinationModel,
                mappingModels: stage.mappingModels)
            for (name, factory) in policyFactories { manager.registerPolicy(named: name, factory) }
            for function in hostFunctions {
                manager.registerFunction(className: function.className, selector: function.selector, function.body)
            }
            manager.pushDownSQL = pushDownSQL
            manager.failsOnUnintendedLoss = failsOnUnintendedLoss
            for name in stage.policyNames where manager.policyFactory(named: name) == nil {
                throw MigrationError(
                    .entityMigrationPolicy,
                    "\(stage.sourceVersionName) → \(stage.destinationVersionName): mapping model \(stage.mappingModelNames.joined(separator: ", ")) names policy '\(name)', which is not registered"
                )
            }
            managers.append(manager)
        }
        return managers
    }

    /// Runs every stage into the work folder; returns the last store's path (in the folder).
    private func run(_ managers: [MigrationManager], folder: String, report: inout StagedMigrationReport) throws
        -> String
    {
        if managers.isEmpty {
            let copy = folder + "/store.sqlite"
            try StagedMigrationManager.copySnapshot(of: plan.storePath, to: copy)
            report.copied = true
            return copy
        }
        var input = plan.storePath
        var chainRows = 0  // rows of the finished steps, for progress
        var chainWork = 0.0  // and their work (rows weighted by stage)
        for (index, manager) in managers.enumerated() {
            guard let stage = runStages.element(at: index) else { break }
            if cancelRequest.load(ordering: .relaxed) {
                throw MigrationError(
                    .migrationCancelled,
                    "the migration was cancelled before \(stage.sourceVersionName) → \(stage.destinationVersionName)")
            }
            let handler = progressHandler
            let rowsBefore = chainRows
            let workBefore = chainWork
            let count = managers.count
            var stepRows = 0  // the step's own rows, as its run last reported them
            var stepWork = 0.0
            manager.progressHandler = { [unowned self] progress in
                stepRows = progress.runTotal
                stepWork = progress.runWorkTotal
                if self.cancelRequest.load(ordering: .relaxed) { return false }
                return handler?(
                    index, progress.inChain(step: index, of: count, rowsBefore: rowsBefore, workBefore: workBefore))
                    ?? true
            }
            let output = folder + "/stage-\(index + 1).sqlite"
            stageWillBegin?(index, manager)
            do {
                let result = try manager.migrateStore(from: input, to: output)
                report.stages.append(.init(stage: stage, report: result))
                chainRows += MigrationProgress.chainStepRows(runTotal: stepRows, step: index, rowsBefore: chainRows)
                chainWork += MigrationProgress.chainStepWork(runWorkTotal: stepWork, step: index, workBefore: chainWork)
            } catch {
                var error = MigrationManager.wrap(error)
                error.message =
                    "\(stage.sourceVersionName) → \(stage.destinationVersionName) (\(stage.mappingModelNames.joined(separator: ", "))): "
                    + error.message
                throw error
            }
            if index > 0 {
                StoreFiles.removeTemporaryStore(input)
                ExternalDataHandOver.removeFiles(ofStore: input)
            }
            input = output
        }
        return input
    }

    /// The external data files that go with the chain's result: those of the last stage's store
    /// (in the work folder), or the source's when the store was copied unchanged.
    private func externalDataFolder(ofResult result: String, copied: Bool) -> String {
        ExternalBinaryData.folder(forStore: copied ? plan.storePath : result)
    }

    /// A private folder beside `destination` (same file system, so the hand-over is one rename),
    /// unique to this run: `<destination>.cdmigrate-stages-XXXXXX`.
    static func makeWorkFolder(beside destination: String) throws -> String {
        let folder: String
        do {
            folder = try FileIO.makeTemporaryDirectory(template: destination + ".cdmigrate-stages-XXXXXX")
        } catch let error as MigrationError {
            throw MigrationError(
                .migrationManagerDestinationStore,
                "cannot create a temporary folder beside '\(destination)': \(error.message)")
        }
        DestinationLock.noteTemporary(folder)
        return folder
    }

    /// Removes the work folder and what this run wrote in it (every name in it is this run's).
    static func removeWorkFolder(_ folder: String) {
        for entry in (try? FileIO.directoryEntries(path: folder)) ?? [] {
            // The stages' external data: `.<stage>_SUPPORT/_EXTERNAL_DATA/…`, this run's too.
            if entry.hasPrefix("."), entry.hasSuffix("_SUPPORT") {
                let support = folder + "/" + entry
                ExternalDataHandOver.removeFolder(support + "/_EXTERNAL_DATA")
                rmdir(support)
                continue
            }
            FileIO.remove(folder + "/" + entry)
        }
        rmdir(folder)
    }

    private static func refuseIfOpenElsewhere(_ path: String) throws {
        if SourceAccess.isOpenElsewhere(path) == true {
            throw MigrationError(
                .migrationManagerSourceStore,
                "the store '\(path)' is busy: another program or connection has it open; close it there before migrating it in place"
            )
        }
    }

    /// A consistent copy of a store (its `-wal` folded in), read as a migration reads its source.
    static func copySnapshot(of source: String, to path: String) throws {
        let access = try SourceAccess.prepare(source: source, scratchBeside: path)
        defer { access.removeSnapshot() }
        let database: SQLiteDatabase
        do {
            database = try SQLiteDatabase(path: source, mode: .readOnly, uri: access.uri)
        } catch let error as MigrationError {
            throw MigrationError(.migrationManagerSourceStore, "cannot open the store '\(source)': \(error.message)")
        }
        do {
            try database.run("VACUUM INTO ?", [.string(path)])
            database.close()
        } catch let error as MigrationError {
            database.close()
            throw MigrationError(
                .migrationManagerDestinationStore, "cannot copy the store '\(source)' to '\(path)': \(error.message)")
        }
        try access.checkUnchanged()
    }
}

/// What a staged migration did: per stage, its mapping models and the single migration's report.
public struct StagedMigrationReport {
    /// One stage that ran: which, and the report of its single migration.
    public struct Stage {
        /// The stage.
        public var stage: MigrationStage
        /// What its migration did.
        public var report: MigrationReport
    }

    /// The version the store was at.
    public var storeVersionName: String
    /// The version the store was migrated to.
    public var targetVersionName: String
    /// The stages that ran, in order (empty when the store was at the target).
    public var stages: [Stage] = []
    /// Whether the store was already at the target and was copied unchanged.
    public var copied = false

    /// True when the store was already at the target version.
    public var wasAtTarget: Bool { stages.isEmpty }

    /// How many steps of the plan ran: a fused pass counts the steps it ran.
    public var stepCount: Int { stages.reduce(0) { $0 + max(1, $1.stage.fusedStages.count) } }

    /// An empty report for a chain from `storeVersionName` to `targetVersionName`.
    public init(storeVersionName: String, targetVersionName: String) {
        self.storeVersionName = storeVersionName
        self.targetVersionName = targetVersionName
    }
}
