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
}
