import ArgumentParser
import CDMigrate

/// `cdmigrate inspect`: what a store says about itself.
struct InspectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Show a store's metadata, entities and row counts.",
        discussion: """
        The store is only read. With --model, says whether the store is at that model's version \
        and, when it is not, which entities differ.

        \(ExitStatus.table)
        """
    )

    @Argument(help: ArgumentHelp("The store to inspect.", valueName: "store"))
    var store: String

    @Option(help: ArgumentHelp("A model to compare the store's version hashes with.", valueName: "path"))
    var model: String?

    @Flag(help: "Print the result as JSON on standard output.")
    var json = false

    func run() throws {
        let output = Output(json: json, quiet: false)
        do {
            let info = try StoreInfo.read(at: store)
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
            if let path = model {
                let differences = try Self.differences(metadata, try ModelReader.model(fromFile: path))
                output.line(differences.isEmpty ? "at the version of \(path)" : "not at the version of \(path): " + differences.joined(separator: "; "))
                document["compatible"] = differences.isEmpty
                document["differences"] = differences
            }
            output.document(document)
        } catch {
            let error = MigrationError.from(error)
            output.error(error)
            output.document(["ok": false, "error": Output.errorObject(error)])
            throw ExitStatus(error).exitCode
        }
    }

    /// Entities whose version hashes differ between a store and a model.
    static func differences(_ metadata: StoreMetadata, _ model: ManagedObjectModel) throws -> [String] {
        let modelHashes = model.entityVersionHashes
        var differences: [String] = []
        for name in Set(modelHashes.keys).union(metadata.versionHashes.keys).sorted() {
            switch (modelHashes[name], metadata.versionHashes[name]) {
            case (let m?, let s?) where m != s: differences.append("\(name): store \(Base64.encode(s)), model \(Base64.encode(m))")
            case (_?, nil): differences.append("\(name) is not in the store")
            case (nil, _?): differences.append("\(name) is only in the store")
            default: break
            }
        }
        return differences
    }
}
