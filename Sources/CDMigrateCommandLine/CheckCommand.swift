import ArgumentParser
import CDMigrate
import CDMigrateCAPI
import FoundationEssentials

/// `cdmigrate check`: every store of a folder (say one per released version) migrated to the
/// current version in a scratch folder and opened against the current model.
struct CheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Migrate every store in a folder to the current version and check the results.",
        discussion: """
            For a release check: keep one or more stores per released version in FOLDER, then run \
            cdmigrate check FOLDER --models PATH. Each store (every file of the folder but SQLite's \
            -wal, -shm and -journal companions and hidden files) is migrated as \
            cdmigrate migrate --models would, into a temporary folder that is removed afterwards; the \
            result is then opened against the current model (its entity version hashes must equal the \
            model's) and its instances are counted. The stores themselves are only read. Steps whose \
            mappings name a policy need it: --policies LIBRARY loads a shared library of C policies \
            (docs/c-api.md), registered once for every store and step.

            A report line per store: its version, the steps and their mapping models (or "inferred"), \
            and the destination's instance counts, or the error; below it, what each step lost \
            (docs/loss-report.md: values no mapping reads, instances no mapping took, links not \
            carried), and with --json each step's full "losses". --strict fails a store whose steps \
            lose anything their mappings do not declare as intended. The exit code is 0 when every store \
            passes, else the code of the first failure (see below); --json prints one document with a \
            result per store.

            \(ExitStatus.table)
            """
    )

    @Argument(help: ArgumentHelp("The folder of stores.", valueName: "folder"), completion: .directory)
    var folder: String

    @Option(
        name: .customLong("models"), help: ArgumentHelp("The model set (see cdmigrate plan).", valueName: "path"),
        completion: .file())
    var modelSet: String

    @Option(
        name: .customLong("mappings"),
        help: ArgumentHelp(
            "A folder of mapping models kept apart from the model set, searched with its subfolders (repeatable).",
            valueName: "dir"), completion: .directory)
    var mappingFolders: [String] = []

    @OptionGroup var policies: PolicyOptions

    @Flag(
        help:
            "Fail a store whose migration would lose data its mapping does not declare as intended (docs/loss-report.md)."
    )
    var strict = false

    @Flag(help: "Print the results as JSON on standard output.")
    var json = false

    @Flag(help: "Print nothing but failures.")
    var quiet = false

    func run() throws {
        let output = Output(json: json, quiet: quiet)
        let set: ModelSet
        let stores: [String]
        let hosted: HostedMigration?
        do {
            set = try ModelSet(contentsOf: modelSet, mappingFolders: mappingFolders)
            stores = try CheckCommand.stores(in: folder)
            // Registered once, on a chain handle: the policies serve every store's steps.
            hosted = try policies.registerChain(through: set)
        } catch {
            let error = MigrationError.from(error)
            output.error(error)
            output.document(["ok": false, "error": Output.errorObject(error)])
            throw ExitStatus(error).exitCode
        }
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
        for (index, store) in stores.enumerated() {
            if Interrupt.requested {
                firstFailure = firstFailure ?? .cancelled
                break
            }
            let name = URL(fileURLWithPath: store).lastPathComponent
            let destination = scratch + "/\(index)-" + name
            do {
                let manager = try StagedMigrationManager(storeAt: store, models: set)
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
                let counts = try CheckCommand.openAndCount(destination, model: set.currentModel)
                // A fused pass lists the steps it ran (its losses are named by the pass, below).
                let steps = report.stages.flatMap { $0.stage.isFused ? $0.stage.fusedStages : [$0.stage] }.map {
                    "\($0.sourceVersionName) → \($0.destinationVersionName) (\($0.isInferred ? ($0.isDirect ? "inferred directly" : "inferred") : $0.mappingModelNames.joined(separator: ", ")))"
                }
                output.line(
                    "ok    \(name): \(report.storeVersionName)"
                        + (steps.isEmpty ? ", already current" : ": " + steps.joined(separator: ", "))
                        + "; " + counts.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
                for step in report.stages {
                    let label =
                        "\(step.stage.sourceVersionName) → \(step.stage.destinationVersionName) (\(step.stage.isInferred ? (step.stage.isDirect ? "inferred directly" : "inferred") : step.stage.mappingModelNames.joined(separator: ", "))\(step.stage.fusedLabel)): "
                    for line in LossSummary.lines(step.report.losses, prefix: label) { output.line("      \(line)") }
                }
                results.append([
                    "store": store, "ok": true, "version": report.storeVersionName,
                    "steps": report.json["steps"]?.anyValue ?? [], "counts": counts,
                ])
            } catch {
                let error = MigrationError.from(error)
                if !json { Output.standardError("FAIL  \(name): \(Output.summary(error))\n") }
                results.append(["store": store, "ok": false, "error": Output.errorObject(error)])
                firstFailure = firstFailure ?? ExitStatus(error)
            }
            try? FileManager.default.removeItem(atPath: destination)
        }
        let failed = results.filter { ($0["ok"] as? Bool) != true }.count
        output.line(
            "\(stores.count - failed) of \(stores.count) store\(stores.count == 1 ? "" : "s") reach version \(set.currentVersionName)"
        )
        output.document([
            "ok": failed == 0, "currentVersion": set.currentVersionName, "stores": results, "warnings": warnings,
        ])
        withExtendedLifetime(hosted) {}
        if let failure = firstFailure {
            throw failure.exitCode
        }
    }

    /// The stores of a folder: every regular file but SQLite's companions and hidden files.
    static func stores(in folder: String) throws -> [String] {
        guard FileIO.isDirectory(folder) else { throw MigrationError(.io, "'\(folder)' is not a folder") }
        return try FileIO.directoryEntries(path: folder).filter { name in
            !name.hasPrefix(".") && !["-wal", "-shm", "-journal"].contains { name.hasSuffix($0) }
                && !name.contains(".cdmigrate-") && !FileIO.isDirectory(folder + "/" + name)
        }.map { folder + "/" + $0 }
    }

    /// Opens the migrated store against the current model (its hashes must match) and counts
    /// each entity's own instances.
    static func openAndCount(_ path: String, model: ManagedObjectModel?) throws -> [String: Int] {
        guard let model = model else { throw MigrationError(.invalidModel, "the model set has no current model") }
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
