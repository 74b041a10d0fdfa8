import ArgumentParser
import FoundationEssentials
import CDMigrate

/// `cdmigrate inspect`: what a store says about itself.
struct InspectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Show a store's metadata, entities and row counts, or a model as a Graphviz graph.",
        discussion: """
        The store is only read. With --model, says whether the store is at that model's version \
        and, when it is not, which entities differ (the store's hash and the model's); with \
        --models, which version of an .xcdatamodeld or a folder of JSON models wrote it.

        With --dot, prints a Graphviz digraph instead: of --model when given (no store needed), \
        else of the store's own model (its model cache, or the model rebuilt from its schema). \
        Entities are record nodes with their attributes and types; relationships are edges \
        labelled with their name and "to-many"; inheritance is a dashed edge to the parent.

        Examples:
          cdmigrate inspect Notes.sqlite
          cdmigrate inspect Notes.sqlite --model v2.json --json
          cdmigrate inspect Notes.sqlite --models Model.xcdatamodeld
          cdmigrate inspect --dot --model Model.xcdatamodeld | dot -Tsvg > model.svg

        \(ExitStatus.table)
        """
    )

    @Argument(help: ArgumentHelp("The store to inspect (optional with --dot --model).", valueName: "store"))
    var store: String?

    @Option(help: ArgumentHelp("A model to compare the store's version hashes with.", valueName: "path"))
    var model: String?

    @Option(help: ArgumentHelp("A model's versions (an .xcdatamodeld or a folder of JSON models): names the one the store was written with.", valueName: "path"))
    var models: String?

    @Flag(help: "Print the result as JSON on standard output.")
    var json = false

    @Flag(help: "Print the model (--model, else the store's own) as a Graphviz digraph.")
    var dot = false

    func validate() throws {
        if dot && json { throw ValidationError("--dot and --json cannot be combined") }
        if dot && models != nil { throw ValidationError("--dot draws one model: give --model, not --models") }
        if store == nil && !(dot && model != nil) { throw ValidationError("give the store to inspect (only --dot --model needs none)") }
    }

    func run() throws {
        let output = Output(json: json, quiet: false)
        do {
            if dot {
                let drawn = try model.map { try ModelReader.model(fromFile: $0) } ?? StoreModelRecovery.storeModel(at: store ?? "")
                print(ModelGraph.dot(drawn, title: drawn.name ?? model ?? store ?? "model"), terminator: "")
                return
            }
            let store = self.store ?? ""
            let info = try StoreInfo.readSource(at: store)
            let metadata = info.metadata
            output.line("store \(store)")
            output.line("  UUID \(metadata.storeUUID), type \(metadata.storeType)")
            output.line("  model version identifiers: \(metadata.versionIdentifiers.map { "\"\($0)\"" }.joined(separator: ", "))")
            if metadata.isEmpty { output.line("  no version metadata (empty Z_PLIST)") }
            for entity in info.entities {
                let parent = entity.superentityName.map { " : \($0)" } ?? ""
                let hash = metadata.versionHashes[entity.name].map { "  " + Base64.encode($0) } ?? ""
                output.line("  \(entity.name)\(parent): \(entity.rowCount) rows\(hash)")
            }
            // External binary data: the files beside the store, and the references rows hold.
            let census = try ExternalDataCensus.readSource(at: store)
            if census.files > 0 || census.references > 0 {
                output.line("  external binary data: \(census.files) file\(census.files == 1 ? "" : "s") in \(census.folder), "
                            + "\(census.references) referenced by rows, \(census.missingFiles.count) missing")
                for file in census.missingFiles.prefix(5) { output.warning("external binary data file missing: \(file)") }
            }
            var document: [String: Any] = [
                "store": store, "uuid": metadata.storeUUID, "storeType": metadata.storeType,
                "versionIdentifiers": metadata.versionIdentifiers, "hasVersionMetadata": !metadata.isEmpty,
                "entities": info.entities.map { e -> [String: Any] in
                    var object: [String: Any] = ["name": e.name, "entityNumber": e.entityNumber, "rows": e.rowCount]
                    if let parent = e.superentityName { object["superentity"] = parent }
                    if let hash = metadata.versionHashes[e.name] { object["versionHash"] = Base64.encode(hash) }
                    return object
                },
            ]
            document["externalData"] = ["folder": census.folder, "files": census.files, "references": census.references,
                                        "missing": census.missingFiles.count, "missingFiles": census.missingFiles] as [String: Any]
            if let path = model {
                let differences = try ModelReader.model(fromFile: path).versionDifferences(fromStoreMetadata: metadata).map { $0.description }
                output.line(differences.isEmpty ? "at the version of \(path)" : "not at the version of \(path): " + differences.joined(separator: "; "))
                document["compatible"] = differences.isEmpty
                document["differences"] = differences
            }
            if let path = models {
                let set = try ModelVersionSet(contentsOf: path)
                for warning in set.warnings { output.warning(warning) }
                let version = set.versionName(forStoreMetadata: metadata)
                output.line(version.map { "written with version \($0) of \(path) (current: \(set.currentVersionName))" }
                            ?? "written with none of the versions in \(path) (\(set.versionNames.joined(separator: ", ")))")
                document["version"] = version ?? JSON.null
                document["currentVersion"] = set.currentVersionName
            }
            output.document(document)
        } catch {
            let error = MigrationError.from(error)
            output.error(error)
            output.document(["ok": false, "error": Output.errorObject(error)])
            throw ExitStatus(error).exitCode
        }
    }
}
