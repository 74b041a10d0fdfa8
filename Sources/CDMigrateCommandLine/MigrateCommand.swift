import ArgumentParser
import CDMigrate
import FoundationEssentials

/// `cdmigrate migrate`: one store, to a new file or in place.
struct MigrateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Migrate a store to the destination model, or through every version of a model set.",
        discussion: """
            One step: --source-model, --destination-model and one or more --mapping (passes, in order).

            Progressive: --models PATH (an .xcdatamodeld, a folder of JSON models or a .momd, with the \
            mapping models beside them) finds the store's version by its entity hashes and migrates it \
            one version at a time up to --to-version (default: the current version), each step with \
            the mapping models that record its versions, else Core Data's inferred mapping. \
            `cdmigrate plan` shows the steps first. Intermediate stores live in a temporary folder \
            beside the destination and are removed; a store already at the target is copied (with \
            --in-place: left as it is).

            The source store is only read. With --to the result is written to a new file, which must \
            not exist; with --in-place it replaces the store only after the migration has succeeded. \
            Either way nothing is left behind on failure or Ctrl-C.

            Every run reports what did not reach the destination (docs/loss-report.md): each loss \
            the mapping does not declare as intended is a warning ("lost: Post.color: 1001 values \
            that no property mapping reads …"), the full report is under --json ("losses", per step \
            with --models). --strict makes such a loss an error before anything is written.

            Entity mappings that name a policy need it registered: --policies LIBRARY loads a shared \
            library of C policies (docs/c-api.md) and calls its cdm_register_policies(cdm_migration *), \
            which registers them with cdm_migration_register_policy. With --models the library \
            registers once, on a chain handle, and its policies serve every step that names them.

            Many stores: give several stores, a folder of stores or @FILE (a list, one path a line) \
            with --out-dir DIR or --in-place. A folder stands for the Core Data stores directly in \
            it, told by content as cdmigrate check tells them; its other files are listed as skipped \
            with the reason (folders inside are not searched, symbolic links not followed). Each \
            store is migrated by a process of its own, --jobs at a time; one result line per store \
            (with --json, one JSON object per line), then a summary; --junit FILE also writes the \
            results as JUnit XML. The exit code is 1 when any store failed, 66 when the folders hold \
            no store.

            Examples:
              cdmigrate migrate Notes.sqlite --to Notes-v2.sqlite --source-model v1.json \\
                        --destination-model v2.json --mapping v1-v2.json
              cdmigrate migrate Notes.sqlite --to Notes-v4.sqlite --models Notes.xcdatamodeld \\
                        --policies ./libnotepolicies.so
              cdmigrate migrate Notes.sqlite --in-place --json --source-model v1.json \\
                        --destination-model v2.json --mapping v1-v2.json
              cdmigrate migrate Notes.sqlite --to out.sqlite \\
                        --policies ./libnotepolicies.so --source-model v1.json \\
                        --destination-model v2.json --mapping v1-v2.json
              cdmigrate migrate Notes.sqlite --to out.sqlite --dry-run ...

            \(ExitStatus.table)
            """
    )

    @Argument(
        help: ArgumentHelp(
            "The store to migrate (its -wal and -shm files beside it are read too); several stores, folders of stores or @FILE lists migrate as a fleet (see --jobs).",
            valueName: "store"), completion: .file())
    var stores: [String] = []

    /// The one store of a single-store run.
    var store: String { stores.first ?? "" }

    @Option(
        name: .customLong("to"), help: ArgumentHelp("Where to write the migrated store.", valueName: "path"),
        completion: .file())
    var destination: String?

    @Flag(name: .customLong("in-place"), help: "Replace the store with the migrated one.")
    var inPlace = false

    @OptionGroup var models: ModelOptions

    @OptionGroup var policies: PolicyOptions

    @Option(
        name: .customLong("models"),
        help: ArgumentHelp("A model set: migrate through its versions (see cdmigrate plan).", valueName: "path"),
        completion: .file())
    var modelSet: String?

    @OptionGroup var mappings: MappingFolderOptions

    @Option(
        name: .customLong("to-version"),
        help: ArgumentHelp("With --models: the version to reach (default: the current one).", valueName: "name"))
    var targetVersion: String?

    @OptionGroup var fleet: FleetOptions

    @Flag(
        name: .customLong("dry-run"),
        help: "Check the models, the mapping models and the store's version; write nothing.")
    var dryRun = false

    @Flag(
        name: .customLong("no-version-check"),
        help: "Do not compare the store's version hashes with the source model's.")
    var noVersionCheck = false

    @Flag(
        help:
            "Fail, writing nothing, when the migration would lose data its mapping does not declare as intended (docs/loss-report.md)."
    )
    var strict = false

    @Flag(
        name: .customLong("no-fuse"),
        help:
            "With --models: run every step of the chain on its own instead of fusing steps without policies into one pass (docs/chains.md)."
    )
    var noFuse = false

    @Flag(help: "Print the report as JSON on standard output.")
    var json = false

    @Flag(help: "Print nothing but errors.")
    var quiet = false

    func validate() throws {
        if isFleet {
            try validateFleet()
        } else if inPlace == (destination != nil) {
            throw ValidationError("give either --to PATH or --in-place")
        }
        if modelSet != nil {
            if models.isGiven {
                throw ValidationError("give either --models or --source-model/--destination-model/--mapping, not both")
            }
            if dryRun || noVersionCheck {
                throw ValidationError(
                    "--dry-run and --no-version-check go with a single step; with --models use cdmigrate plan")
            }
        } else {
            if targetVersion != nil { throw ValidationError("--to-version goes with --models") }
            if !mappings.folders.isEmpty { throw ValidationError("--mappings goes with --models") }
            try models.validateStep()
        }
    }

    func run() throws {
        if isFleet { return try FleetRun(self).run() }
        let output = Output(json: json, quiet: quiet)
        if let modelSet = modelSet { return try runStaged(modelSet, output) }
        do {
            let manager = try models.manager()
            let hosted = try policies.register(on: manager)
            manager.failsOnUnintendedLoss = strict
            for warning in manager.warnings { output.warning(warning) }
            if dryRun { return try checkOnly(manager, output) }
            let progress = ProgressDisplay(enabled: !quiet && !json)
            manager.progressHandler = { p in
                progress.show(p)
                return !Interrupt.requested
            }
            Interrupt.install()
            let migrate = { (manager: MigrationManager) throws -> MigrationReport in
                inPlace
                    ? try manager.migrateStoreInPlace(at: store, checkSourceVersion: !noVersionCheck)
                    : try manager.migrateStore(from: store, to: destination ?? "", checkSourceVersion: !noVersionCheck)
            }
            // With policy libraries, the run goes through their cdm_migration, as cdm_migration_run's does.
            let report = try hosted.map { try $0.run(migrate) } ?? migrate(manager)
            withExtendedLifetime(hosted) {}
            progress.finish()
            let written = inPlace ? store : destination ?? ""
            output.line("migrated \(store) → \(written)")
            for counts in report.destinationCounts { output.line("  \(counts.entityName): \(counts.count)") }
            for warning in report.warnings { output.warning(warning) }
            LossSummary.warn(report.losses, output)
            output.document(["ok": true, "source": store, "destination": written, "report": ReportJSON.object(report)])
        } catch {
            let error = MigrationError.from(error)
            output.error(error)
            output.document(["ok": false, "source": store, "error": Output.errorObject(error)])
            throw ExitStatus(error).exitCode
        }
    }

    /// `--models`: the staged migration of `cdmigrate plan`.
    private func runStaged(_ modelSet: String, _ output: Output) throws {
        do {
            let set = try ModelSet(contentsOf: modelSet, mappingFolders: mappings.folders)
            let manager = try StagedMigrationManager(storeAt: store, models: set, targetVersion: targetVersion)
            manager.failsOnUnintendedLoss = strict
            manager.fusesSteps = !noFuse
            let hosted = try policies.registerChain(through: set, targetVersion: targetVersion)
            for warning in manager.plan.warnings { output.warning(warning) }
            let progress = ProgressDisplay(
                enabled: !quiet && !json,
                stepNames: manager.plan.stages.map { "\($0.sourceVersionName) → \($0.destinationVersionName)" })
            let onProgress = { (_: Int, p: MigrationProgress) -> Bool in
                progress.show(p)
                return !Interrupt.requested
            }
            manager.progressHandler = onProgress
            Interrupt.install()
            // With policy libraries, every step goes through their chain handle, as cdm_migration_run's does.
            let report =
                try hosted.map {
                    try $0.runChain(manager, destination: inPlace ? nil : destination ?? "", progress: onProgress)
                }
                ?? (inPlace ? try manager.migrateStoreInPlace() : try manager.migrateStore(to: destination ?? ""))
            withExtendedLifetime(hosted) {}
            progress.finish()
            let written = inPlace ? store : destination ?? ""
            if report.wasAtTarget {
                output.line(
                    inPlace
                        ? "\(store) is already at version \(report.targetVersionName); nothing to do"
                        : "\(store) is already at version \(report.targetVersionName); copied to \(written)")
            } else {
                output.line(
                    "migrated \(store) (\(report.storeVersionName)) → \(written) (\(report.targetVersionName)) in \(report.stepCount) step\(report.stepCount == 1 ? "" : "s")\(report.stepCount == report.stages.count ? "" : " (\(report.stages.count) pass\(report.stages.count == 1 ? "" : "es"))")"
                )
            }
            for step in report.stages {
                output.line(
                    "  \(step.stage.sourceVersionName) → \(step.stage.destinationVersionName): \(step.stage.kindLabel())\(step.stage.fusedLabel)"
                )
                for counts in step.report.destinationCounts { output.line("    \(counts.entityName): \(counts.count)") }
                // Each step's warnings named by its step, as the plan names them (printed once).
                for warning in step.report.warnings { output.warning(step.stage.warningLabel + warning) }
                LossSummary.warn(
                    step.report.losses,
                    prefix: step.stage.lossLabel,
                    output)
            }
            output.document(
                ReportJSON.object(
                    report,
                    adding: [
                        "ok": true, "source": store, "destination": written,
                        "warnings": manager.plan.warnings,
                    ]))
        } catch {
            let error = MigrationError.from(error)
            output.error(error)
            output.document(["ok": false, "source": store, "error": Output.errorObject(error)])
            throw ExitStatus(error).exitCode
        }
    }

    /// `--dry-run`: everything but the migration — the models and mappings were checked when the
    /// manager was made; here the store is opened and its version compared.
    private func checkOnly(_ manager: MigrationManager, _ output: Output) throws {
        // Read as a migration reads its source: nothing beside it, its -wal's transactions included.
        let counts = try PersistentStore.withSourceStore(
            at: store, model: manager.sourceModel, checkVersion: !noVersionCheck
        ) { source in
            var counts: [String: Int] = [:]
            for entity in manager.sourceModel.entities where !entity.isAbstract {
                var request = FetchRequest(entityName: entity.name)
                request.includesSubentities = false
                counts[entity.name] = try source.count(request)
            }
            return counts
        }
        output.line(
            "\(store) is at the source model's version; \(manager.mappingModels.count) mapping model(s) check out; nothing written"
        )
        for (name, count) in counts.sorted(by: { $0.key < $1.key }) { output.line("  \(name): \(count)") }
        output.document(["ok": true, "dryRun": true, "source": store, "sourceCounts": counts])
    }
}

/// A migration report as JSON: the engine's encoder (docs/cli.md, "The report's JSON").
enum ReportJSON {
    static func object(_ report: MigrationReport) -> [String: Any] { report.json.dictionaryValue }

    /// A staged migration's report with the command's own members (`ok`, `source`, …) added.
    static func object(_ report: StagedMigrationReport, adding members: [String: Any]) -> [String: Any] {
        report.json.dictionaryValue.merging(members) { _, added in added }
    }
}
