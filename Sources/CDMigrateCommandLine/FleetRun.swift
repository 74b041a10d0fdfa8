import ArgumentParser
import CDMigrate
import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#endif

/// `cdmigrate migrate --jobs N STORE… --out-dir DIR` (or `--in-place`): many stores, each migrated
/// by a child process of this executable running the one-store command
/// (`cdmigrate migrate STORE --to DEST --json --quiet` with the same model options), at most N at
/// a time. A child that fails or crashes harms no other store; sources are only read (with
/// --in-place a store is replaced only after its own migration succeeded). One result line per
/// store as it finishes, then a summary; exit 0 when every store migrated, 1 when any failed or
/// crashed, 130 when interrupted.
struct FleetRun {
    let command: MigrateCommand
    let output: Output

    init(_ command: MigrateCommand) {
        self.command = command
        output = Output(json: command.json, quiet: command.quiet)
    }

    /// A store and where it goes.
    struct Job {
        var index: Int
        var store: String
        var destination: String
        /// In place, the index of an earlier job naming the same file (through a symbolic or hard
        /// link): that store is migrated once, by the earlier job, and this one reports its result.
        var sameStoreAs: Int?
    }

    func run() throws {
        let found: FleetStoreList.Found
        let jobs: [Job]
        do {
            (found, jobs) = try plannedJobs()
        } catch let error as FleetUsageError {
            Output.standardError("cdmigrate: \(error.description)\n")
            throw ExitStatus.usage.exitCode
        }
        var junit = JUnitReport(
            name: "cdmigrate migrate", className: "cdmigrate.migrate", started: Date().timeIntervalSince1970)
        junit.properties = [("models", command.modelSet ?? command.models.mappings.joined(separator: ", "))]
        if let version = command.targetVersion { junit.properties.append(("targetVersion", version)) }
        // Models that cannot be read fail every store alike: say so once, before starting.
        do {
            if let file = command.fleet.junitOutput.file { try JUnitReport.checkWritable(file) }
        } catch {
            let error = MigrationError.from(error)
            if command.json { emit(["ok": false, "error": Output.errorObject(error)]) } else { output.error(error) }
            throw ExitStatus(error).exitCode
        }
        do {
            try command.checkFleetModels()
        } catch {
            let error = MigrationError.from(error)
            if command.json { emit(["ok": false, "error": Output.errorObject(error)]) } else { output.error(error) }
            if let file = command.fleet.junitOutput.file {
                junit.cases = [
                    JUnitReport.TestCase(
                        name: "models", file: command.modelSet ?? "", time: 0, outcome: JUnitReport.failure(error))
                ]
                try? junit.write(to: file)
            }
            throw ExitStatus(error).exitCode
        }
        // The files of the folders given that are not stores: listed first, never migrated.
        let notStores = found.skipped.map { FleetStoreResult(notAStore: $0) }
        for result in notStores { report(result) }
        junit.cases = notStores.map(\.junitCase)
        if jobs.isEmpty {
            let error = FleetRun.noStore(in: found.folders, skipped: found.skipped.count)
            if command.json { emit(["ok": false, "error": Output.errorObject(error)]) } else { output.error(error) }
            try command.fleet.junitOutput.file.map { try junit.write(to: $0) }
            throw ExitStatus(error).exitCode
        }
        if let folder = command.fleet.outDirectory {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        }
        let width = max(1, command.fleet.jobs ?? ProcessInfo.processInfo.activeProcessorCount)
        let started = ContinuousClock.now
        Interrupt.install()
        let results = try runChildren(jobs, width: width)
        let seconds = (ContinuousClock.now - started).seconds
        junit.cases = results.map(\.junitCase) + junit.cases
        junit.time = seconds
        let tally = Dictionary(grouping: results, by: \.status).mapValues(\.count)
        let migrated = tally[.migrated] ?? 0
        let checked = tally[.checked] ?? 0
        let failed = tally[.failed] ?? 0
        let crashed = tally[.crashed] ?? 0
        let skipped = tally[.skipped] ?? 0
        if command.json {
            emit([
                "summary": [
                    "stores": results.count, "migrated": migrated, "checked": checked, "failed": failed,
                    "crashed": crashed, "skipped": skipped, "notStores": notStores.count,
                    "duration": (seconds * 1000).rounded() / 1000, "jobs": width,
                ]
            ])
        } else if !command.quiet || failed + crashed + skipped > 0 {
            let text =
                (checked > 0
                    ? "\(checked) of \(results.count) stores checked, "
                    : "\(migrated) of \(results.count) stores migrated, ")
                + "\(failed) failed, \(crashed) crashed, \(skipped) skipped"
                + (notStores.isEmpty ? "" : ", \(notStores.count) not stores") + "; "
                + "\(Output.seconds(seconds)) s with \(width) job" + (width == 1 ? "" : "s")
            if command.quiet { Output.standardError(text + "\n") } else { print(text) }
        }
        if let file = command.fleet.junitOutput.file {
            do { try junit.write(to: file) } catch {
                let error = MigrationError.from(error)
                output.error(error)
                if skipped == 0 && failed + crashed == 0 { throw ExitStatus(error).exitCode }
            }
        }
        if skipped > 0 { throw ExitStatus.cancelled.exitCode }
        if failed + crashed > 0 { throw ExitStatus.migrationFailed.exitCode }
    }

    /// The error of a run whose folders hold no Core Data store (exit 66, as a file that is not a
    /// store given by name).
    static func noStore(in folders: [String], skipped: Int) -> MigrationError {
        let named = folders.map { "'\($0)'" }.joined(separator: ", ")
        return MigrationError(
            .incompatibleVersionHash,
            "no Core Data store in \(named): "
                + (skipped == 0
                    ? "the folder is empty"
                    : "\(skipped) file\(skipped == 1 ? "" : "s") skipped, none a Core Data store"))
    }

    /// The stores and their destinations; refuses two stores with one destination. No stores at
    /// all is a usage error, unless folders were given (they hold no store: the caller says so).
    func plannedJobs() throws -> (FleetStoreList.Found, [Job]) {
        let found = try FleetStoreList.stores(arguments: command.stores, listFiles: command.fleet.listFiles)
        if found.stores.isEmpty && found.folders.isEmpty { throw FleetUsageError("no stores to migrate") }
        var seen: [String: String] = [:]
        var files: [String: Int] = [:]
        return (
            found,
            try found.stores.enumerated().map { index, store in
                if command.inPlace, let identity = Self.fileIdentity(store) {
                    if let first = files[identity] {
                        return Job(index: index, store: store, destination: store, sameStoreAs: first)
                    }
                    files[identity] = index
                }
                let destination: String
                if let folder = command.fleet.outDirectory {
                    let name = URL(fileURLWithPath: store).lastPathComponent
                    destination = folder.hasSuffix("/") ? folder + name : folder + "/" + name
                } else {
                    destination = store
                }
                let key = URL(fileURLWithPath: destination).standardizedFileURL.path
                if let other = seen[key] {
                    throw FleetUsageError("\(other) and \(store) would both be written to \(destination)")
                }
                seen[key] = store
                return Job(index: index, store: store, destination: destination)
            }
        )
    }

    /// The device and inode a path leads to (links followed), nil when it leads nowhere.
    static func fileIdentity(_ path: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return "\(info.st_dev):\(info.st_ino)"
    }

    /// The result of a job that named the same store as an earlier one: that one's, under its own name.
    private func sameStore(_ job: Job, as result: FleetStoreResult, of first: Job) -> FleetStoreResult {
        var copy = result
        copy.store = job.store
        copy.destination = job.destination
        copy.sameStoreAs = first.store
        return copy
    }

    /// Runs the children, at most `width` at a time; prints each result as it comes.
    private func runChildren(_ jobs: [Job], width: Int) throws -> [FleetStoreResult] {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        // The executable, or the host's command (`python -m cdmigrate`).
        let childCommand = CommandLineHost.current.childCommand ?? [Self.executable]
        let executable = childCommand.first ?? Self.executable
        var running: [pid_t: (job: Job, started: ContinuousClock.Instant)] = [:]
        var results = [FleetStoreResult?](repeating: nil, count: jobs.count)
        var next = 0
        var forwarded = false
        while next < jobs.count || !running.isEmpty {
            while running.count < width && next < jobs.count && !Interrupt.requested {
                let job = jobs[next]
                next += 1
                if job.sameStoreAs != nil { continue }
                let arguments = childCommand + command.childArguments(store: job.store, destination: job.destination)
                let started = ContinuousClock.now
                do {
                    let pid = try Self.spawn(
                        executable, arguments, stdout: scratch.file("\(job.index).out"),
                        stderr: scratch.file("\(job.index).err"))
                    running[pid] = (job, started)
                } catch {
                    let result = FleetStoreResult(
                        store: job.store, destination: job.destination, exitStatus: nil, signal: nil, document: Data(),
                        errorText: "\(error)", duration: 0)
                    report(result)
                    results[job.index] = result
                }
            }
            if running.isEmpty {
                if Interrupt.requested { break }
                continue
            }
            // A signal sent to this process alone (`kill`, `systemctl stop`): pass it on, once, so
            // that every running child stops and cleans up too. (Ctrl-C reaches them from the
            // terminal already; a second one changes nothing.)
            if Interrupt.requested && !forwarded {
                forwarded = true
                for pid in running.keys { kill(pid, Interrupt.signal) }
            }
            var status: Int32 = 0
            // Polled, so that a signal is seen while children run (the handlers restart waitpid).
            let pid = waitpid(-1, &status, WNOHANG)
            if pid == 0 {
                usleep(20_000)
                continue
            }
            if pid < 0 {
                if errno == EINTR { continue }
                throw MigrationError(.io, "waiting for the migrations: \(String(cString: strerror(errno)))")
            }
            guard let (job, started) = running.removeValue(forKey: pid) else { continue }
            // FileIO rather than FileManager.contents(atPath:), whose buffers LeakSanitizer reports as lost.
            let document = Data((try? FileIO.readBytes(path: scratch.file("\(job.index).out"))) ?? [])
            let errorText = String(
                decoding: (try? FileIO.readBytes(path: scratch.file("\(job.index).err"))) ?? [], as: UTF8.self)
            let exited = status & 0x7f == 0
            let result = FleetStoreResult(
                store: job.store, destination: job.destination,
                exitStatus: exited ? (status >> 8) & 0xff : nil, signal: exited ? nil : status & 0x7f,
                document: document, errorText: errorText, duration: (ContinuousClock.now - started).seconds)
            report(result)
            results[job.index] = result
            for other in jobs where other.sameStoreAs == job.index {
                let copy = sameStore(other, as: result, of: job)
                report(copy)
                results[other.index] = copy
            }
        }
        return jobs.map { job in
            results[job.index] ?? FleetStoreResult(skipped: job.store, destination: job.destination)
        }
    }

    private func report(_ result: FleetStoreResult) {
        if command.json {
            emit(result.jsonObject)
            return
        }
        if result.status == .migrated || result.status == .checked || result.notAStore {
            if !command.quiet { print(result.line) }
        } else {
            if command.quiet { Output.standardError(result.line + "\n") } else { print(result.line) }
        }
        // The stores' warnings as the one-store command prints them, each once for the run.
        for warning in result.warnings { output.warning(warning) }
        fflush(stdout)
    }

    /// One JSON object on one line.
    private func emit(_ object: [String: Any]) {
        print(JSON(document: object).serialized())
        fflush(stdout)
    }

    /// This executable (children run the same binary).
    static var executable: String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }

    /// Starts `arguments` with standard input from /dev/null and standard output and error into files.
    static func spawn(_ executable: String, _ arguments: [String], stdout: String, stderr: String) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, stderr, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let argv = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let code = posix_spawn(&pid, executable, &actions, nil, argv, environ)
        if code != 0 { throw MigrationError(.io, "cannot start \(executable): \(String(cString: strerror(code)))") }
        return pid
    }
}

/// A private temporary folder for the children's output, removed afterwards.
private struct ScratchFolder {
    let path: String

    init() throws {
        path = try FileIO.makeTemporaryDirectory(
            template: (ProcessInfo.processInfo.environment["TMPDIR"] ?? "/tmp") + "/cdmigrate-fleet-XXXXXX")
    }

    func file(_ name: String) -> String { path + "/" + name }

    func remove() { try? FileManager.default.removeItem(atPath: path) }
}

extension Duration {
    fileprivate var seconds: Double {
        let (whole, attoseconds) = components
        return Double(whole) + Double(attoseconds) / 1e18
    }
}

extension MigrateCommand {
    /// Whether this is a fleet run: fleet options, several stores, a folder or a list of stores.
    var isFleet: Bool {
        fleet.isGiven || stores.count != 1 || stores.contains(where: FleetStoreList.isList)
    }

    func validateFleet() throws {
        if destination != nil {
            throw ValidationError(
                "--to names one store's destination; with several stores give --out-dir DIR or --in-place")
        }
        if inPlace == (fleet.outDirectory != nil) { throw ValidationError("give either --out-dir DIR or --in-place") }
        if let jobs = fleet.jobs, jobs < 1 { throw ValidationError("--jobs must be at least 1") }
        if stores.isEmpty && fleet.listFiles.isEmpty { throw ValidationError("give the stores to migrate") }
    }

    /// Reads the models (or the model set) once before any child starts.
    func checkFleetModels() throws {
        if let modelSet = modelSet {
            _ = try ModelSet(contentsOf: modelSet, mappingFolders: mappings.folders)
        } else {
            _ = try models.manager()
        }
    }

    /// The one-store command a child runs: the same model options, JSON on standard output.
    func childArguments(store: String, destination: String) -> [String] {
        // "--name=value": a value starting with "-" stays a value.
        var arguments = ["migrate"] + (inPlace ? ["--in-place"] : ["--to=" + destination]) + ["--json", "--quiet"]
        if let model = models.sourceModel { arguments.append("--source-model=" + model) }
        if let model = models.destinationModel { arguments.append("--destination-model=" + model) }
        for mapping in models.mappings { arguments.append("--mapping=" + mapping) }
        if let modelSet = modelSet { arguments.append("--models=" + modelSet) }
        for folder in mappings.folders { arguments.append("--mappings=" + folder) }
        if let version = targetVersion { arguments.append("--to-version=" + version) }
        if dryRun { arguments.append("--dry-run") }
        if noVersionCheck { arguments.append("--no-version-check") }
        if strict { arguments.append("--strict") }
        for library in policies.libraries { arguments.append("--policies=" + library) }
        // After "--" the store is a path even when its name starts with "-".
        return arguments + ["--", store]
    }
}
