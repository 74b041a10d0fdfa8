import CDMigrate
import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#endif

/// What a command prints: human lines on standard output (errors on standard error), or one
/// JSON document with `--json`. `--quiet` leaves errors only. Warnings go to standard error as
/// `warning: …`, each once per command however many reports repeat it.
final class Output {
    let json: Bool
    let quiet: Bool
    /// The warnings printed so far.
    private var told: Set<String> = []

    /// The underlying errors an error prints on a terminal (all of them are in `--json`).
    static let shownUnderlyingErrors = 5

    init(json: Bool, quiet: Bool) {
        self.json = json
        self.quiet = quiet
    }

    func line(_ text: String) {
        if !json && !quiet {
            ProgressDisplay.endPartialLine()
            print(text)
        }
    }

    /// Prints `warning: text` on standard error, unless the same warning was printed before.
    func warning(_ text: String) {
        guard told.insert(text).inserted, !json, !quiet else { return }
        Output.standardError("warning: \(text)\n")
    }

    /// A line about what was done, on standard error (standard output may carry the result).
    func note(_ text: String) {
        if !json && !quiet { Output.standardError("\(text)\n") }
    }

    func error(_ error: MigrationError) {
        if !json { Output.standardError("cdmigrate: \(Output.summary(error))\n") }
    }

    /// An error as a terminal shows it: its message, then at most `shownUnderlyingErrors` of the
    /// errors under it (each with at most as many of its own), and how many more `--json` lists.
    static func summary(_ error: MigrationError, indent: String = "") -> String {
        var text = "error \(error.code.rawValue): \(error.message)"
        if let path = error.path { text += " (at \(path))" }
        if let offset = error.offset { text += " (at character \(offset))" }
        for underlying in error.underlying.prefix(shownUnderlyingErrors) {
            text += "\n\(indent)  - " + summary(underlying, indent: indent + "    ")
        }
        if error.underlying.count > shownUnderlyingErrors {
            let more = error.underlying.count - shownUnderlyingErrors
            text += "\n\(indent)  … and \(more) more (--json lists all \(error.underlying.count))"
        }
        return text
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
        ProgressDisplay.endPartialLine()
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
        var object: [String: Any] = [
            "code": Int(error.code.rawValue), "name": error.code.name, "message": error.message,
        ]
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
