import CDMigrate

/// A cdm_migration handle around a migration manager a Swift host made itself — the `cdmigrate`
/// command line — so that a policy library it loads can register C policies and functions on it
/// with `cdm_migration_register_policy` / `_register_function`, exactly as a C program does on
/// the handle `cdm_migration_new` gives. The host keeps this object for as long as the migration
/// runs; the registered policies are the manager's.
package final class HostedMigration {
    private let handle: MigrationHandle

    /// - Parameter manager: the manager whose policies the library registers.
    package init(manager: MigrationManager) {
        handle = MigrationHandle()
        handle.manager = manager
        handle.ownedByHost = true
    }

    /// A chain handle, as `cdm_migration_new_chain` makes, for a staged migration through
    /// `models`: what the library registers applies to every step (`runChain`).
    /// - Parameters:
    ///   - models: the model set the chain goes through.
    ///   - targetVersion: the version to reach; nil for the set's current one.
    package init(chainThrough models: ModelSet, targetVersion: String? = nil) {
        handle = MigrationHandle()
        handle.chain = ChainSetup(models: models, targetVersion: targetVersion)
        handle.ownedByHost = true
    }

    /// The `cdm_migration *` to pass to the library (valid while this object lives).
    package var pointer: UnsafeMutableRawPointer { Unmanaged.passUnretained(handle).toOpaque() }

    /// The message of the last C API call on the handle that failed ("" when none failed).
    package var lastErrorMessage: String { handle.lastError.map { String(cString: $0.message) } ?? "" }

    /// Runs the migration as `cdm_migration_run` does: while it runs, the handle refuses calls
    /// that may only be made between runs.
    /// - Throws: what `body` throws.
    package func run(_ body: (MigrationManager) throws -> MigrationReport) throws -> MigrationReport {
        try handle.run(body)
        guard let report = handle.report else { throw MigrationError(.invalidArgument, "the migration gave no report") }
        return report
    }

    /// Runs a staged migration with the policies and functions the library registered on this
    /// chain handle (`init(chainThrough:targetVersion:)`), as `cdm_migration_run` runs a chain.
    /// - Parameters:
    ///   - staged: the planned migration (its own policy registrations are kept).
    ///   - destination: the new store; nil migrates in place.
    ///   - progress: called on every progress step with the step's index; false cancels.
    /// - Throws: `MigrationError` as `StagedMigrationManager.migrateStore(to:)`; `.misuse` for a
    ///   handle that is not a chain.
    package func runChain(
        _ staged: StagedMigrationManager, destination: String?,
        progress: ((Int, MigrationProgress) -> Bool)? = nil
    ) throws -> StagedMigrationReport {
        try handle.runChain(staged, destination: destination, progress: progress)
    }

    /// Whether a policy of that name was registered on this handle (a chain handle's policies
    /// serve every step that names them).
    package func registersPolicy(named name: String) -> Bool { handle.policies[name] != nil }
}
