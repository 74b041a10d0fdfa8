import ArgumentParser
import CDMigrate
import CDMigrateCAPI
import FoundationEssentials

/// `cdmigrate check`: every store of a folder (say one per released version; stores told by
/// content, `StoreFolder`) migrated to the current version, or `--to-version`'s, in a scratch
/// folder and opened against that version's model.
struct CheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Migrate every store in a folder to the current (or another) version and check the results.",
        discussion: """
            For a release check: keep one or more stores per released version in FOLDER, then run \
            cdmigrate check FOLDER --models PATH. Each store of the folder is migrated as cdmigrate \
            migrate --models would, into a temporary folder that is removed afterwards; the result is \
            then opened against the target version's model (its entity version hashes must equal the \
            model's) and its instances are counted. The target is the current version, or the one \
            --to-version names. The stores themselves are only read. Steps whose mappings name a \
            policy need it: --policies LIBRARY loads a shared library of C policies (docs/c-api.md), \
            registered once for every store and step.

            Stores are told by content: an SQLite database with Core Data's tables (Z_METADATA, \
            Z_PRIMARYKEY), whatever its name, with its -wal, -shm and -journal files and its \
            .NAME_SUPPORT folder of external data. Every other name is listed as skipped with the \
            reason (not an SQLite database, an SQLite database without Core Data's tables, a folder, \
            which is not searched, a symbolic link, which is not followed, a hidden file) and never \
            fails the check; a folder without any store exits with 66.

            A report line per store: its version, the steps and their mapping models (or "inferred"), \
            and the destination's instance counts, or the error; below it, what each step lost \
            (docs/loss-report.md: values no mapping reads, instances no mapping took, links not \
            carried), and with --json each step's full "losses". --strict fails a store whose steps \
            lose anything their mappings do not declare as intended. The exit code is 0 when every store \
            passes, else the code of the first failure (see below); --json prints one document with a \
            result per store; --junit FILE also writes the results as JUnit XML for CI systems (one \
            test case per store, skipped files as skipped test cases).

            \(ExitStatus.table)
            """
    )

    @Argument(help: ArgumentHelp("The folder of stores.", valueName: "folder"), completion: .directory)
    var folder: String

    @Option(
        name: .customLong("models"), help: ArgumentHelp("The model set (see cdmigrate plan).", valueName: "path"),
        completion: .file())
    var modelSet: String

    @OptionGroup var mappings: MappingFolderOptions

    @OptionGroup var policies: PolicyOptions

    @Flag(
        help:
            "Fail a store whose migration would lose data its mapping does not declare as intended (docs/loss-report.md)."
    )
    var strict = false

    @Option(
        name: .customLong("to-version"),
        help: ArgumentHelp("The version every store must reach (default: the current one).", valueName: "name"))
    var targetVersion: String?

    @OptionGroup var junitOutput: JUnitOption

    @Flag(help: "Print the results as JSON on standard output.")
    var json = false

    @Flag(help: "Print nothing but failures.")
    var quiet = false

    func run() throws {
        let output = Output(json: json, quiet: quiet)
        var junit = JUnitReport(
            name: "cdmigrate check", className: "cdmigrate.check", started: Date().timeIntervalSince1970)
        let set: ModelSet
        let entries: [StoreFolder.Entry]
        let hosted: HostedMigration?
        let target: String
        let targetModel: ManagedObjectModel
        do {
            if let file = junitOutput.file { try JUnitReport.checkWritable(file) }
            set = try ModelSet(contentsOf: modelSet, mappingFolders: mappings.folders)
            target = targetVersion ?? set.currentVersionName
            guard let model = set.models[target] else {
                throw MigrationError(
                    .invalidArgument,
                    "the model set '\(modelSet)' has no version '\(target)' (it holds \(set.versionNames.joined(separator: ", ")))"
                )
            }
            targetModel = model
            entries = try StoreFolder.entries(in: folder)
            // Registered once, on a chain handle: the policies serve every store's steps.
            hosted = try policies.registerChain(through: set, targetVersion: targetVersion)
        } catch {
            let error = MigrationError.from(error)
            output.error(error)
            output.document(["ok": false, "error": Output.errorObject(error)])
            if let file = junitOutput.file, (try? JUnitReport.checkWritable(file)) != nil {
                junit.cases = [
                    JUnitReport.TestCase(name: "models", file: modelSet, time: 0, outcome: JUnitReport.failure(error))
                ]
                try? junit.write(to: file)
            }
            throw ExitStatus(error).exitCode
        }
        junit.properties = [
            ("models", modelSet), ("targetVersion", target), ("currentVersion", set.currentVersionName),
        ]
        let stores = entries.filter(\.isStore)
        let skipped = entries.filter { !$0.isStore }
        let isCurrent = target == set.currentVersionName
        output.line("target version \(target)" + (isCurrent ? " (current)" : " (current: \(set.currentVersionName))"))
        for warning in set.warnings { output.warning(warning) }
        // What planning a store's steps adds (a pass needing another's instances), once each.
        var told = Set(set.warnings)
        var warnings = set.warnings
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent(
            "cdmigrate-check-\(UUID().uuidString)"
        ).path
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        var results: [[String: Any]] = []
        var firstFailure: ExitStatus?
        Interrupt.install()
        do {
            try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        } catch {
            let error = MigrationError(.io, "cannot create a scratch folder '\(scratch)': \(error)")
            output.error(error)
            throw ExitStatus(error).exitCode
        }
        let runStarted = ContinuousClock.now
        for entry in skipped {
            output.line("skip  \(entry.name): \(entry.skipReason ?? "")")
            junit.cases.append(
                JUnitReport.TestCase(
                    name: entry.name, file: entry.path, time: 0, outcome: .skipped(message: entry.skipReason ?? "")))
        }
        for (index, entry) in stores.enumerated() {
            let store = entry.path
            let name = entry.name
            if Interrupt.requested {
                firstFailure = firstFailure ?? .cancelled
                junit.cases.append(
                    JUnitReport.TestCase(
                        name: name, file: store, time: 0,
                        outcome: .skipped(message: "not started: the run was interrupted")))
                continue
            }
            let destination = scratch + "/\(index)-" + name
            let started = ContinuousClock.now
            do {
                let manager = try StagedMigrationManager(storeAt: store, models: set, targetVersion: targetVersion)
                for warning in try manager.plan.allWarnings() where told.insert(warning).inserted {
                    output.warning(warning)
                    warnings.append(warning)
                }
                manager.failsOnUnintendedLoss = strict
                let onProgress = { (_: Int, _: MigrationProgress) in !Interrupt.requested }
                manager.progressHandler = onProgress
                let report =
                    try hosted.map { try $0.runChain(manager, destination: destination, progress: onProgress) }
                    ?? manager.migrateStore(to: destination)
                let counts = try CheckCommand.openAndCount(destination, model: targetModel)
                // A fused pass lists the steps it ran (its losses are named by the pass, below).
                let steps = report.stages.flatMap { $0.stage.isFused ? $0.stage.fusedStages : [$0.stage] }.map(
                    \.stepLabel)
                let line =
                    "ok    \(name): \(report.storeVersionName)"
                    + (steps.isEmpty
                        ? (isCurrent ? ", already current" : ", already at the target")
                        : ": " + steps.joined(separator: ", "))
                    + "; " + counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
                output.line(line)
                var lossLines: [String] = []
                for step in report.stages {
                    let label = step.stage.lossLabel
                    for line in LossSummary.lines(step.report.losses, prefix: label) {
                        output.line("      \(line)")
                        lossLines.append("      \(line)")
                    }
                }
                let seconds = CheckCommand.seconds(ContinuousClock.now - started)
                results.append([
                    "store": store, "ok": true, "version": report.storeVersionName,
                    "steps": report.json["steps"]?.anyValue ?? [], "counts": counts,
                    "duration": (seconds * 1000).rounded() / 1000,
                ])
                junit.cases.append(
                    JUnitReport.TestCase(
                        name: name, file: store, time: seconds, outcome: .passed,
                        output: ([line] + lossLines).joined(separator: "\n")))
            } catch {
                let error = MigrationError.from(error)
                let seconds = CheckCommand.seconds(ContinuousClock.now - started)
                if !json { Output.standardError("FAIL  \(name): \(Output.summary(error))\n") }
                results.append([
                    "store": store, "ok": false, "error": Output.errorObject(error),
                    "duration": (seconds * 1000).rounded() / 1000,
                ])
                junit.cases.append(
                    JUnitReport.TestCase(name: name, file: store, time: seconds, outcome: JUnitReport.failure(error)))
                firstFailure = firstFailure ?? ExitStatus(error)
            }
            try? FileManager.default.removeItem(atPath: destination)
        }
        junit.time = CheckCommand.seconds(ContinuousClock.now - runStarted)
        let failed = results.filter { ($0["ok"] as? Bool) != true }.count
        let skippedObjects = skipped.map { ["store": $0.path, "reason": $0.skipReason ?? ""] }
        var noStore: MigrationError?
        if stores.isEmpty {
            let error = FleetRun.noStore(in: [folder], skipped: skipped.count)
            output.error(error)
            noStore = error
            firstFailure = firstFailure ?? ExitStatus(error)
        } else {
            let plural = stores.count == 1 ? "" : "s"
            output.line(
                "\(stores.count - failed) of \(stores.count) store\(plural) reach version \(target)"
                    + (skipped.isEmpty
                        ? "" : "; \(skipped.count) file\(skipped.count == 1 ? "" : "s") skipped (not stores)"))
        }
        var document: [String: Any] = [
            "ok": failed == 0 && noStore == nil, "currentVersion": set.currentVersionName, "targetVersion": target,
            "stores": results, "skipped": skippedObjects, "warnings": warnings,
        ]
        if let error = noStore { document["error"] = Output.errorObject(error) }
        output.document(document)
        withExtendedLifetime(hosted) {}
        if let file = junitOutput.file {
            do { try junit.write(to: file) } catch {
                let error = MigrationError.from(error)
                output.error(error)
                firstFailure = firstFailure ?? ExitStatus(error)
            }
        }
        if let failure = firstFailure {
            throw failure.exitCode
        }
    }

    static func seconds(_ duration: Duration) -> Double {
        let (whole, attoseconds) = duration.components
        return Double(whole) + Double(attoseconds) / 1e18
    }

    /// Opens the migrated store against the target version's model (its hashes must match) and counts
    /// each entity's own instances.
    static func openAndCount(_ path: String, model: ManagedObjectModel) throws -> [String: Int] {
        let store = try PersistentStore.open(at: path, model: model, readOnly: true, checkVersion: true)
        defer { store.close() }
        var counts: [String: Int] = [:]
        for entity in model.entities where !entity.isAbstract {
            var request = FetchRequest(entityName: entity.name)
            request.includesSubentities = false
            counts[entity.name] = try store.count(request)
        }
        return counts
    }
}
