import ArgumentParser
import CDMigrate

/// `cdmigrate create-store`: a new store of a model version, holding the instances a JSON
/// description gives — a seed store for tests and CI, made without a device.
struct CreateStoreCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "create-store",
        abstract: "Create a store of a model version holding the objects a JSON file describes.",
        discussion: """
            Writes a new Core Data SQLite store exactly as a migration writes its destination: Core \
            Data's metadata with the version's entity hashes and identifiers, Z_PRIMARYKEY, the model \
            cache (Z_MODELCACHE), WAL journal mode. MODEL is a model file (JSON, .xcdatamodel, .mom) or \
            a model set (an .xcdatamodeld, a .momd or a folder of JSON models), whose version --version \
            names (default: the current one). Without --objects the store holds no instances.

            The objects file (docs/ci.md) lists instances with their attribute values and \
            relationships; an "id" names an object for the relationships of others:
              {"objects": [
                {"entity": "Author", "id": "ann", "values": {"name": "Ann"}},
                {"entity": "Book", "values": {"title": "Notes", "author": "ann"}}]}

            Seed a store per released version, migrate it to the current model, then read the result \
            (docs/ci.md):
              cdmigrate create-store Model.xcdatamodeld --version Model_v1 --objects v1.json -o v1.sqlite
              cdmigrate migrate v1.sqlite --models Model.xcdatamodeld --to migrated.sqlite

            The store is then checked as Core Data's save checks what it writes (required values \
            present, to-many counts and numbers within their bounds); --skip-validation keeps objects \
            that break those rules, to seed the damaged data real devices hold. A problem in the objects \
            file names its JSON path ($.objects[1].values.author), a validation failure the entity, \
            object and property; both exit with 65 and leave no store. An existing output file is \
            refused (74).

            \(ExitStatus.table)
            """
    )

    @Argument(
        help: ArgumentHelp("The model, or a model set with its versions.", valueName: "model"), completion: .file())
    var model: String

    @Option(
        name: .customLong("version"),
        help: ArgumentHelp("The version of the model set to write (default: its current version).", valueName: "name"))
    var version: String?

    @Option(
        name: .customLong("objects"),
        help: ArgumentHelp("A JSON file describing the instances to put in the store.", valueName: "file"),
        completion: .file(extensions: ["json"]))
    var objects: String?

    @Option(
        name: [.customShort("o"), .customLong("output")],
        help: ArgumentHelp("The store to create (must not exist).", valueName: "store"), completion: .file())
    var output: String

    @Flag(
        name: .customLong("skip-validation"),
        help:
            "Keep objects Core Data's save would refuse (a required value missing), to seed the damaged data real devices hold."
    )
    var skipValidation = false

    @Flag(help: "Print the result as JSON on standard output.")
    var json = false

    @Flag(help: "Print nothing but errors.")
    var quiet = false

    func run() throws {
        let out = Output(json: json, quiet: quiet)
        do {
            let (chosen, versionName) = try CreateStoreCommand.model(model, version: version)
            for warning in chosen.warnings { out.warning(warning) }
            let seed = try objects.map { try StoreSeed(contentsOf: $0) } ?? .empty
            let store = try PersistentStore.create(at: output, model: chosen, seed: seed, validates: !skipValidation)
            let uuid = store.storeIdentifier
            store.close()
            out.line(
                "created \(output)\(versionName.map { " (version \($0))" } ?? "") with \(seed.count) object\(seed.count == 1 ? "" : "s")"
            )
            var document: [String: Any] = ["ok": true, "store": output, "objects": seed.count, "uuid": uuid]
            if let versionName = versionName { document["version"] = versionName }
            out.document(document)
        } catch {
            let error = MigrationError.from(error)
            out.error(error)
            out.document(["ok": false, "error": Output.errorObject(error)])
            // Objects Core Data would not save are a fault of the objects file, as a value of the wrong type is.
            if (1560...1620).contains(error.code.rawValue) { throw ExitStatus.invalidInput.exitCode }
            throw ExitStatus(error).exitCode
        }
    }

    /// The model to write: a version of a model set (a folder that is not an `.xcdatamodel`), or
    /// a model file; with its version name when it comes from a set.
    static func model(_ path: String, version: String?) throws -> (ManagedObjectModel, String?) {
        var trimmed = path
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed.removeLast() }
        let isSet = FileIO.isDirectory(trimmed) && !trimmed.hasSuffix(".xcdatamodel")
        guard isSet else {
            if let version = version {
                throw MigrationError(
                    .invalidArgument,
                    "--version \(version) names a version of a model set, but '\(path)' is one model: give an .xcdatamodeld, a .momd or a folder of JSON models"
                )
            }
            return (try ManagedObjectModel(contentsOf: path), nil)
        }
        let set = try ModelSet(contentsOf: trimmed)
        let name = version ?? set.currentVersionName
        guard let model = set.models[name] else {
            throw MigrationError(
                .invalidArgument,
                "'\(path)' has no version '\(name)'\(SpellingSuggestion.hint(name, among: set.versionNames)) (it has \(set.versionNames.joined(separator: ", ")))"
            )
        }
        return (model, name)
    }
}
