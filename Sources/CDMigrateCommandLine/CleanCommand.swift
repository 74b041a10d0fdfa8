import ArgumentParser
import CDMigrate
import FoundationEssentials

/// `cdmigrate clean`: what killed migrations left beside their destinations, reported or removed.
struct CleanCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clean",
        abstract: "Report (or, with --remove, remove) what killed migrations left beside their destinations.",
        discussion: """
            A migration records itself and every temporary file it makes beside its destination in \
            the destination's lock file, <destination>.cdmigrate-lock. A migration killed outright \
            (SIGKILL, power loss) leaves that lock file and its temporary stores; the next migration \
            to the same destination removes them, and so does this command. Give stores, destinations \
            or folders (every lock file in a folder). A lock that a running migration holds is \
            reported as in use and left alone; a file under a lock's name that cdmigrate did not make \
            is never touched, and neither is any other file, even one named like a temporary \
            (<destination>.cdmigrate-…) that no lock file records: those are listed as not recognised.

            Examples:
              cdmigrate clean Notes.sqlite
              cdmigrate clean ~/stores --remove

            \(ExitStatus.table)
            """
    )

    @Argument(help: ArgumentHelp("Stores, destinations or folders.", valueName: "path"), completion: .file())
    var paths: [String]

    @Flag(help: "Remove the leftovers (else only report them).")
    var remove = false

    @Flag(help: "Print the results as JSON on standard output.")
    var json = false

    func validate() throws {
        if paths.isEmpty { throw ValidationError("give the stores, destinations or folders to look at") }
    }

    func run() throws {
        let output = Output(json: json, quiet: false)
        var results: [[String: Any]] = []
        var failure: MigrationError?
        for path in paths {
            for destination in destinations(path) {
                do {
                    let found = try DestinationLock.leftovers(of: destination, remove: remove)
                    let stray = unrecognised(destination, recorded: found.files)
                    var object: [String: Any] = [
                        "destination": destination, "lockFile": found.lockPath, "inUse": found.inUse,
                        "cdmigrateLock": found.isRecord, "leftovers": found.files, "notRecognised": stray,
                    ]
                    if let owner = found.owner { object["owner"] = owner }
                    if found.inUse {
                        output.line(
                            "\(destination): in use by a running migration\(found.owner.map { " (\($0))" } ?? "")")
                    } else if !found.isRecord {
                        output.line("\(destination): '\(found.lockPath)' is not a cdmigrate lock file; left alone")
                    } else {
                        object["removed"] = remove
                        let what =
                            found.files.isEmpty
                            ? "its lock file"
                            : "its lock file and \(found.files.count) temporar\(found.files.count == 1 ? "y" : "ies"): "
                                + found.files.joined(separator: ", ")
                        output.line(
                            "\(destination): a killed run\(found.owner.map { " (\($0))" } ?? "") left \(what)\(remove ? "; removed" : "")"
                        )
                    }
                    if !stray.isEmpty {
                        output.line(
                            "  not recognised (no lock file records them), left alone: \(stray.joined(separator: ", "))"
                        )
                    }
                    results.append(object)
                } catch {
                    let error = MigrationError.from(error)
                    output.error(error)
                    results.append(["destination": destination, "error": Output.errorObject(error)])
                    failure = failure ?? error
                }
            }
        }
        if results.isEmpty { output.line("no leftovers of cdmigrate runs") }
        output.document(["ok": failure == nil, "results": results])
        if let failure = failure { throw ExitStatus(failure).exitCode }
    }

    /// The destinations with a lock file: `path` itself, or every lock file's in a folder.
    private func destinations(_ path: String) -> [String] {
        let suffix = ".cdmigrate-lock"
        if FleetStoreList.isFolder(path) {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
            let prefix = path.hasSuffix("/") ? path : path + "/"
            return names.filter { $0.hasSuffix(suffix) && $0.count > suffix.count }.sorted().map {
                prefix + $0.dropLast(suffix.count)
            }
        }
        let destination = path.hasSuffix(suffix) ? String(path.dropLast(suffix.count)) : path
        return FileManager.default.fileExists(atPath: destination + suffix) ? [destination] : []
    }

    /// `<destination>.cdmigrate-…` names in its folder that no lock file records (nor the lock itself).
    private func unrecognised(_ destination: String, recorded: [String]) -> [String] {
        let url = URL(fileURLWithPath: destination)
        let folder = url.deletingLastPathComponent().path
        let base = url.lastPathComponent + ".cdmigrate-"
        let known = Set(recorded.map { URL(fileURLWithPath: $0).lastPathComponent })
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return names.filter { name in
            guard name.hasPrefix(base), name != url.lastPathComponent + ".cdmigrate-lock" else { return false }
            return !known.contains(where: {
                name == $0 || name.hasPrefix($0 + "-") || name.hasPrefix($0 + ".cdmigrate-")
            })
        }.sorted().map { folder + "/" + $0 }
    }
}
