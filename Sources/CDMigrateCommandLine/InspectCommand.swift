import ArgumentParser
import CDMigrate
import FoundationEssentials

/// `cdmigrate inspect`: what a store says about itself.
struct InspectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Show a store's metadata, entities and row counts, or a model as a Graphviz graph.",
        discussion: """
            The store is only read. With --model, says whether the store is at that model's version \
            and, when it is not, which entities differ (the store's hash and the model's); with \
            --models, which version of an .xcdatamodeld or a folder of JSON models wrote it. A store \
            whose metadata records no entity version hashes is at no model's version, and says so. \
            With --fail-on-mismatch the command exits with 66 when the store is not at --model's \
            version or at none of --models' (for CI: cdmigrate inspect --quiet --fail-on-mismatch). \
            Version hashes are printed in base64, as Core Data's metadata holds them (--hex: in \
            hexadecimal).

            With --dot, prints a Graphviz digraph instead: of --model when given (no store needed), \
            else of the store's own model (its model cache, or the model rebuilt from its schema). \
            Entities are record nodes with their attributes and types; relationships are edges \
            labelled with their name and "to-many"; inheritance is a dashed edge to the parent.

            Examples:
              cdmigrate inspect Notes.sqlite
              cdmigrate inspect Notes.sqlite --model v2.json --json
              cdmigrate inspect Notes.sqlite --models Model.xcdatamodeld
              cdmigrate inspect Notes.sqlite --model v2.json --fail-on-mismatch --quiet
              cdmigrate inspect --dot --model Model.xcdatamodeld | dot -Tsvg > model.svg

            \(ExitStatus.table)
            """
    )

    @Argument(
        help: ArgumentHelp("The store to inspect (optional with --dot --model).", valueName: "store"),
        completion: .file())
    var store: String?

    @Option(
        help: ArgumentHelp("A model to compare the store's version hashes with.", valueName: "path"),
        completion: .file())
    var model: String?

    @Option(
        help: ArgumentHelp(
            "A model's versions (an .xcdatamodeld or a folder of JSON models): names the one the store was written with.",
            valueName: "path"), completion: .file())
    var models: String?

    @Flag(
        name: .customLong("fail-on-mismatch"),
        help: "Exit with 66 when the store is not at the version of --model (or of any of --models).")
    var failOnMismatch = false

    @Flag(help: "Print version hashes in hexadecimal instead of base64 (Core Data's metadata encoding).")
    var hex = false

    @Flag(help: "Print the result as JSON on standard output.")
    var json = false

    @Flag(help: "Print nothing but errors (with --fail-on-mismatch: the exit code says it all).")
    var quiet = false

    @Flag(help: "Print the model (--model, else the store's own) as a Graphviz digraph.")
    var dot = false

    func validate() throws {
        if dot && json { throw ValidationError("--dot and --json cannot be combined") }
        if dot && models != nil { throw ValidationError("--dot draws one model: give --model, not --models") }
        if store == nil && !(dot && model != nil) {
            throw ValidationError("give the store to inspect (only --dot --model needs none)")
        }
        if failOnMismatch && (dot || (model == nil && models == nil)) {
            throw ValidationError("--fail-on-mismatch goes with --model or --models")
        }
    }

    func run() throws {
        let output = Output(json: json, quiet: quiet)
        let encode: ([UInt8]) -> String = hex ? VersionHash.hex : Base64.encode
        do {
            if dot {
                let drawn =
                    try model.map { try ManagedObjectModel(contentsOf: $0) }
                    ?? ManagedObjectModel(ofStoreAt: store ?? "")
                print(ModelGraph.dot(drawn, title: drawn.name ?? model ?? store ?? "model"), terminator: "")
                return
            }
            let store = self.store ?? ""
            let info = try StoreInfo(contentsOf: store)
            let metadata = info.metadata
            output.line("store \(store)")
            output.line("  UUID \(metadata.storeUUID), type \(metadata.storeType)")
            output.line(
                "  model version identifiers: \(metadata.versionIdentifiers.map { "\"\($0)\"" }.joined(separator: ", "))"
            )
            if metadata.isEmpty { output.line("  no version metadata (empty Z_PLIST)") }
            for entity in info.entities {
                let parent = entity.superentityName.map { " : \($0)" } ?? ""
                let hash = metadata.versionHashes[entity.name].map { "  " + encode($0) } ?? ""
                output.line("  \(entity.name)\(parent): \(entity.rowCount) rows\(hash)")
            }
            // External binary data: the files beside the store, and the references rows hold.
            let census = try ExternalDataCensus.readSource(at: store)
            if census.files > 0 || census.references > 0 {
                output.line(
                    "  external binary data: \(census.files) file\(census.files == 1 ? "" : "s") in \(census.folder), "
                        + "\(census.references) referenced by rows, \(census.missingFiles.count) missing")
                for file in census.missingFiles.prefix(5) {
                    output.warning("external binary data file missing: \(file)")
                }
            }
            var document: [String: Any] = [
                "store": store, "uuid": metadata.storeUUID, "storeType": metadata.storeType,
                "versionIdentifiers": metadata.versionIdentifiers, "hasVersionMetadata": !metadata.isEmpty,
                "entities": info.entities.map { e -> [String: Any] in
                    var object: [String: Any] = ["name": e.name, "entityNumber": e.entityNumber, "rows": e.rowCount]
                    if let parent = e.superentityName { object["superentity"] = parent }
                    if let hash = metadata.versionHashes[e.name] { object["versionHash"] = encode(hash) }
                    return object
                },
            ]
            document["externalData"] =
                [
                    "folder": census.folder, "files": census.files, "references": census.references,
                    "missing": census.missingFiles.count, "missingFiles": census.missingFiles,
                ] as [String: Any]
            var mismatch = false
            if let path = model {
                let compared = try ManagedObjectModel(contentsOf: path)
                if metadata.versionHashes.isEmpty {
                    // Nothing to compare: not "not in the store" for every entity.
                    output.line("not at the version of \(path): the store records no entity version hashes")
                    document["differences"] = [String]()
                    document["compatible"] = false
                    mismatch = true
                } else {
                    let differences = compared.versionDifferences(fromStoreMetadata: metadata).map {
                        InspectCommand.describe($0, encode)
                    }
                    let compatible = compared.isCompatible(withStoreMetadata: metadata)
                    output.line(
                        compatible
                            ? "at the version of \(path)"
                            : "not at the version of \(path): " + differences.joined(separator: "; "))
                    document["compatible"] = compatible
                    document["differences"] = differences
                    mismatch = !compatible
                }
            }
            if let path = models {
                let set = try ModelVersionSet(contentsOf: path)
                for warning in set.warnings { output.warning(warning) }
                let version = set.versionName(forStoreMetadata: metadata)
                output.line(
                    version.map { "written with version \($0) of \(path) (current: \(set.currentVersionName))" }
                        ?? "written with none of the versions in \(path) (\(set.versionNames.joined(separator: ", ")))")
                document["version"] = version ?? JSON.null
                document["currentVersion"] = set.currentVersionName
                if version == nil { mismatch = true }
            }
            if metadata.versionHashes.isEmpty && (model != nil || models != nil) {
                output.warning(
                    "the store '\(store)' records no entity version hashes (\(metadata.isEmpty ? "empty Z_PLIST" : "no NSStoreModelVersionHashes")): it is at no model's version"
                )
            }
            output.document(document)
            if failOnMismatch && mismatch { throw ExitStatus.incompatibleStore.exitCode }
        } catch let exit as ExitCode {
            throw exit
        } catch {
            let error = MigrationError.from(error)
            output.error(error)
            output.document(["ok": false, "error": Output.errorObject(error)])
            throw ExitStatus(error).exitCode
        }
    }

    /// One entity whose version differs, with the hashes in the encoding asked for.
    static func describe(_ difference: ManagedObjectModel.VersionDifference, _ encode: ([UInt8]) -> String) -> String {
        switch (difference.storeHash, difference.modelHash) {
        case (let s?, let m?): return "\(difference.entityName): store hash \(encode(s)), model hash \(encode(m))"
        case (nil, _?): return "\(difference.entityName) is not in the store"
        case (_?, nil): return "\(difference.entityName) is only in the store"
        case (nil, nil): return difference.entityName
        }
    }
}
