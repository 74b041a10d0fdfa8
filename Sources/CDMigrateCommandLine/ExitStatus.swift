import ArgumentParser
import CDMigrate

/// The documented exit codes, one per kind of failure a script may want to tell apart.
enum ExitStatus: Int32, CaseIterable {
    case success = 0
    /// The migration ran and failed: validation of the result, a policy, an expression's value.
    case migrationFailed = 1
    /// Wrong command-line arguments (argument-parser's own code).
    case usage = 64
    /// A model, mapping model or expression is invalid.
    case invalidInput = 65
    /// The store is not at the source model's version (or not a Core Data store).
    case incompatibleStore = 66
    /// A file could not be read or written, or the destination exists or is busy.
    case io = 74
    /// Cancelled (Ctrl-C; a SIGTERM or SIGHUP exits with 143 or 129, see `exitCode`).
    case cancelled = 130

    /// The exit codes as every command's help lists them.
    static let table = """
        Exit codes:
          0    success
          1    the migration ran and failed: validation, a policy (failed or
               missing), an expression
          64   wrong command-line arguments
          65   an invalid model, mapping model or expression
          66   the store is not at the source model's version, or is not a Core
               Data store (or not an SQLite database); check or a folder
               migrated: the folder holds no store; inspect
               --fail-on-mismatch: the store is not at the model's version
          74   a file could not be read or written, or the destination exists
          130  cancelled (Ctrl-C); 143 on SIGTERM, 129 on SIGHUP, each cleaned
               up as Ctrl-C is
        """

    init(_ error: MigrationError) {
        // A file that is not an SQLite database is not a store, whichever command opens it.
        if ExitStatus.isNotADatabase(error) {
            self = .incompatibleStore
            return
        }
        switch error.code {
        case .invalidJSON, .invalidModel, .invalidMapping, .expressionSyntax, .invalidArgument, .inferredMappingModel:
            self = .invalidInput
        case .incompatibleVersionHash, .migrationMissingSourceModel:
            self = .incompatibleStore
        case .io, .migrationManagerSourceStore, .migrationManagerDestinationStore:
            self = .io
        case .migrationCancelled:
            self = .cancelled
        default:
            self = .migrationFailed
        }
    }

    /// SQLITE_NOTADB: the file is not an SQLite database.
    static let sqliteNotADatabase: Int32 = 26

    /// Whether SQLite said the file is not a database (SQLITE_NOTADB), here or under `error`.
    static func isNotADatabase(_ error: MigrationError) -> Bool {
        if error.code == .sqlite, (error.sqliteResultCode ?? 0) & 0xff == sqliteNotADatabase { return true }
        return error.underlying.contains(where: isNotADatabase)
    }

    /// The process's exit code: a cancellation exits with 128 + the signal that asked for it.
    var exitCode: ExitCode { self == .cancelled ? ExitCode(Interrupt.exitStatus) : ExitCode(rawValue) }
}
