import CDMigrate
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// What a command prints: human lines on standard output (errors on standard error), or one
/// JSON document with `--json`.
struct Output {
    var json: Bool
    var quiet: Bool

    func line(_ text: String) {
        if !json && !quiet { print(text) }
    }

    func warning(_ text: String) {
        if !json { Output.standardError("warning: \(text)\n") }
    }

    /// A line about what was done, on standard error (standard output may carry the result).
    func note(_ text: String) {
        if !json && !quiet { Output.standardError("\(text)\n") }
    }

    func error(_ error: MigrationError) {
        if !json { Output.standardError("cdmigrate: \(error.description)\n") }
    }

    /// Prints `object` as JSON (keys sorted, so output is stable; "/" unescaped, as in paths).
    func document(_ object: [String: Any]) {
        guard json else { return }
        print(JSON(document: object).serialized(indent: 2))
    }

    /// Writes `text` to the file at `path`, or to standard output when `path` is nil or "-".
    /// - Throws: `MigrationError` `.io` naming the file when it cannot be written.
    static func write(_ text: String, to path: String?) throws {
        guard let path = path, path != "-" else {
            fflush(stdout)
            fputs(text, stdout)
            fflush(stdout)
            return
        }
        do {
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        } catch {
            throw MigrationError(.io, "cannot write '\(path)': \(error)")
        }
    }

    /// Writes `text` to standard error (after what standard output holds, so the two interleave
    /// in order on a terminal).
    static func standardError(_ text: String) {
        fflush(stdout)
        fputs(text, stderr)
    }

    /// Seconds with two decimals ("1.25").
    static func seconds(_ value: Double) -> String {
        let hundredths = Int((max(0, value) * 100).rounded())
        let fraction = hundredths % 100
        return "\(hundredths / 100)." + (fraction < 10 ? "0" : "") + "\(fraction)"
    }

    /// An error as JSON: code, name, message, path, offset and the underlying errors.
    static func errorObject(_ error: MigrationError) -> [String: Any] {
        var object: [String: Any] = ["code": Int(error.code.rawValue), "name": error.code.name, "message": error.message]
        if let path = error.path { object["path"] = path }
        if let offset = error.offset { object["offset"] = offset }
        if !error.underlying.isEmpty { object["errors"] = error.underlying.map(errorObject) }
        return object
    }
}

extension MigrationError {
    /// Any error as a MigrationError (Foundation's file errors become I/O errors).
    static func from(_ error: Error) -> MigrationError {
        if let error = error as? MigrationError { return error }
        return MigrationError(.io, "\(error)")
    }
}
