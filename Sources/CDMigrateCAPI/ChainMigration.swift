import CDMigrate

/// What a cdm_migration made by cdm_migration_new_chain holds besides its registrations: the
/// model set its runs go through, the target, what every step's userInfo starts with, and the
/// last run's report. Each run plans again from the store it is given (its version is found by
/// its entity hashes), so one handle serves stores at any version of the set.
///
/// Core Data counterpart: an `NSStagedMigrationManager` whose stages are
/// `NSCustomMigrationStage`s with the app's `NSEntityMigrationPolicy` classes.
final class ChainSetup {
    let models: ModelSet
    let targetVersion: String?
    /// Set with cdm_migration_set_user_info between runs: every step's manager starts with it;
    /// released when a run ends, as a single migration's userInfo is.
    var userInfo: [String: Any] = [:]
    var progressInterval: Int?
    var batchSize: Int?
    var report: StagedMigrationReport?
    /// cdm_migration_set_fail_on_unintended_loss: passed on to every step.
    var failsOnUnintendedLoss = false
    /// cdm_migration_set_fuse_steps: whether runs fuse steps without policies into one pass.
    var fusesSteps = true

    init(models: ModelSet, targetVersion: String?) {
        self.models = models
        self.targetVersion = targetVersion
    }
}

extension MigrationHandle {
    /// Runs the chain of a handle of cdm_migration_new_chain on the store at `source`, into a
    /// new store at `destination` (nil: in place).
    func runChain(source: String, destination: String?) throws {
        guard let chain = chain else { throw MigrationError.misuse("the migration handle is not a chain") }
        if running {
            throw MigrationError.misuse("the migration is running: this cannot be done from inside its callbacks")
        }
        chain.report = nil
        let staged = try StagedMigrationManager(
            storeAt: source, models: chain.models, targetVersion: chain.targetVersion)
        staged.fusesSteps = chain.fusesSteps
        _ = try runChain(staged, destination: destination, progress: nil)
    }

    /// Runs a staged migration with this handle's registrations: every step's manager gets the
    /// registered policies, functions, progress callback, progress interval and user info, and
    /// is the handle's manager while it runs, so that callbacks' contexts are that step's.
    /// `progress`, when given, is asked first on every progress step (false cancels).
    func runChain(
        _ staged: StagedMigrationManager, destination: String?,
        progress swiftProgress: ((Int, MigrationProgress) -> Bool)?
    ) throws -> StagedMigrationReport {
        guard let chain = chain else { throw MigrationError.misuse("the migration handle is not a chain") }
        if running {
            throw MigrationError.misuse("the migration is running: this cannot be done from inside its callbacks")
        }
        for (name, registration) in policies {
            staged.registerPolicy(named: name) { [unowned self] in CPolicy(registration, migration: self) }
        }
        for function in functions.values {
            let registration = function.registration
            staged.registerFunction(className: function.className, selector: function.selector) {
                [unowned self] arguments in
                try self.call(registration, arguments)
            }
        }
        if chain.failsOnUnintendedLoss { staged.failsOnUnintendedLoss = true }
        let count = max(1, staged.passes.count)
        staged.progressHandler = { [unowned self] index, progress in
            if let swiftProgress = swiftProgress, !swiftProgress(index, progress) { return false }
            // The fraction is over the whole chain: step `index` of `count` is that share of it.
            var overall = progress
            overall.fraction = (Double(index) + progress.fraction) / Double(count)
            return self.report(overall)
        }
        staged.stageWillBegin = { [unowned self] _, manager in
            // Instances retained in the step before belong to its stores, which are closed now.
            self.endRetention()
            if let interval = chain.progressInterval { manager.progressInterval = interval }
            if let size = chain.batchSize { manager.batchSize = size }
            for (key, value) in chain.userInfo { manager.userInfo[key] = value }
            self.manager = manager
        }
        running = true
        defer {
            running = false
            manager = nil
            endRetention()
            chain.userInfo = [:]
        }
        chain.report = nil
        let result = try destination.map { try staged.migrateStore(to: $0) } ?? staged.migrateStoreInPlace()
        chain.report = result
        return result
    }
}

@_cdecl("cdm_migration_new_chain")
public func cdm_migration_new_chain(
    _ models: UnsafePointer<CChar>?, _ target: UnsafePointer<CChar>?,
    _ out: UnsafeMutablePointer<OpaquePointer?>?
) -> Int32 {
    cdm_migration_new_chain_with_mappings(models, nil, target, out)
}

@_cdecl("cdm_migration_new_chain_with_mappings")
public func cdm_migration_new_chain_with_mappings(
    _ models: UnsafePointer<CChar>?, _ mappingDirs: UnsafePointer<UnsafePointer<CChar>?>?,
    _ target: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<OpaquePointer?>?
) -> Int32 {
    construct(out, MigrationHandle()) { handle in
        let set = try ModelSet(
            contentsOf: try CString.argument(models, "the models path"),
            mappingFolders: try CString.folders(mappingDirs))
        let targetVersion = try target.map { try CString.argument($0, "the target version") }
        if let targetVersion = targetVersion, !set.versionNames.contains(targetVersion) {
            throw MigrationError(
                .invalidArgument,
                "the model set '\(set.path)' has no version '\(targetVersion)' (it holds \(set.versionNames.joined(separator: ", ")))"
            )
        }
        handle.chain = ChainSetup(models: set, targetVersion: targetVersion)
    }
}
