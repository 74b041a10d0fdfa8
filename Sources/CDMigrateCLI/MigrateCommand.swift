import ArgumentParser
import CDMigrate
import Foundation

/// `cdmigrate migrate`: one store, to a new file or in place.
struct MigrateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Migrate a store to the destination model.",
        discussion: """
        The source store is only read. With --to the result is written to a new file, which must \
        not exist; with --in-place it replaces the store only after the migration has succeeded. \
        Either way nothing is left behind on failure or Ctrl-C.

        Many stores: give several stores, a folder of stores or @FILE (a list, one path a line) \
        with --out-dir DIR or --in-place. Each store is migrated by a process of its own, --jobs \
        at a time; one result line per store (with --json, one JSON object per line), then a \
        summary; the exit code is 1 when any store failed.

        \(ExitStatus.table)
        """
    )

    @Argument(help: ArgumentHelp("The store to migrate (its -wal and -shm files beside it are read too); several stores, folders of stores or @FILE lists migrate as a fleet (see --jobs).", valueName: "store"))
    var stores: [String] = []

    /// The one store of a single-store run.
    var store: String { stores.first ?? "" }

    @Option(name: .customLong("to"), help: ArgumentHelp("Where to write the migrated store.", valueName: "path"))
    var destination: String?

    @Flag(name: .customLong("in-place"), help: "Replace the store with the migrated one.")
    var inPlace = false

    @OptionGroup var models: ModelOptions

    @OptionGroup var fleet: FleetOptions

    @Flag(name: .customLong("dry-run"), help: "Check the models, the mapping models and the store's version; write nothing.")
    var dryRun = false

    @Flag(name: .customLong("no-version-check"), help: "Do not compare the store's version hashes with the source model's.")
    var noVersionCheck = false

    @Flag(help: "Print the report as JSON on standard output.")
    var json = false

    @Flag(help: "Print nothing but errors.")
    var quiet = false

    func validate() throws {
        if isFleet { try validateFleet() } else if inPlace == (destination != nil) { throw ValidationError("give either --to PATH or --in-place") }
    }

    func run() throws {
        if isFleet { return try FleetRun(self).run() }
        let output = Output(json: json, quiet: quiet)
        do {
            let manager = try models.manager()
            for warning in manager.mappingModels.flatMap({ $0.warnings }) { output.warning(warning) }
            if dryRun { return try checkOnly(manager, output) }
            let progress = ProgressDisplay(enabled: !quiet && !json)
            manager.progressHandler = { p in
                progress.show(p)
                return !Interrupt.requested
            }
            Interrupt.install()
            let report = inPlace
                ? try manager.migrateStoreInPlace(at: store, checkSourceVersion: !noVersionCheck)
                : try manager.migrateStore(from: store, to: destination ?? "", checkSourceVersion: !noVersionCheck)
            progress.finish()
            let written = inPlace ? store : destination ?? ""
            output.line("migrated \(store) → \(written)")
            for counts in report.destinationCounts { output.line("  \(counts.entityName): \(counts.count)") }
            for untaken in report.untakenSourceInstances { output.warning("\(untaken.count) \(untaken.entityName) instances were taken by no entity mapping") }
            for warning in report.warnings { output.warning(warning) }
            output.document(["ok": true, "source": store, "destination": written, "report": ReportJSON.object(report)])
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
        let source = try PersistentStore.open(at: store, model: manager.sourceModel, readOnly: true, checkVersion: !noVersionCheck)
        var counts: [String: Int] = [:]
        for entity in manager.sourceModel.entities where !entity.isAbstract {
            var request = FetchRequest(entityName: entity.name)
            request.includesSubentities = false
            counts[entity.name] = try source.count(request)
        }
        source.close()
        output.line("\(store) is at the source model's version; \(manager.mappingModels.count) mapping model(s) check out; nothing written")
        for (name, count) in counts.sorted(by: { $0.key < $1.key }) { output.line("  \(name): \(count)") }
        output.document(["ok": true, "dryRun": true, "source": store, "sourceCounts": counts])
    }
}

/// A migration report as JSON.
enum ReportJSON {
    static func object(_ report: MigrationReport) -> [String: Any] {
        [
            "mappings": report.mappings.map { m -> [String: Any] in
                ["pass": m.pass, "entityMapping": m.entityMappingName, "sourceInstances": m.sourceInstances,
                 "associations": m.associations, "instancesBySQL": m.instancesBySQL, "relationshipsBySQL": m.relationshipsBySQL]
            },
            "destinationCounts": Dictionary(report.destinationCounts.map { ($0.entityName, $0.count) }, uniquingKeysWith: +),
            "untakenSourceInstances": Dictionary(report.untakenSourceInstances.map { ($0.entityName, $0.count) }, uniquingKeysWith: +),
            "warnings": report.warnings,
        ]
    }
}
