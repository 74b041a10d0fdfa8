import CDMigrate
import CDMigrateCAPI

/// What the program running the command line provides beyond its arguments: the command a fleet
/// run's children run, and a loader for `--policies` values that are not shared libraries (the
/// Python entry point imports Python modules with it). The executable uses the default: children
/// run the executable itself and every `--policies` value is a shared library.
///
/// Sendable by promise: a host is bound to the thread that runs its command (`current`) and its
/// loader is called on that thread only.
package struct CommandLineHost: @unchecked Sendable {
    /// The program and leading arguments a fleet run's child runs before the one-store command
    /// (`["/usr/bin/python3", "-m", "cdmigrate"]`); nil runs this process's executable.
    package var childCommand: [String]?

    /// Called for each `--policies` value on each migration or chain handle a command makes:
    /// returns true when it registered the value's policies on the handle, false to have the
    /// value loaded as a shared library of C policies.
    /// - Throws: `MigrationError` when the value is the host's and cannot be loaded.
    package var loadPolicies: ((String, HostedMigration) throws -> Bool)?

    package init(childCommand: [String]? = nil, loadPolicies: ((String, HostedMigration) throws -> Bool)? = nil) {
        self.childCommand = childCommand
        self.loadPolicies = loadPolicies
    }

    /// The host of the command running on this thread (the default outside `CommandLineRun.run`):
    /// commands run at the same time on several threads each see their own.
    @TaskLocal static var current = CommandLineHost()
}
