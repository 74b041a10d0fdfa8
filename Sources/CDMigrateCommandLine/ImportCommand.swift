import ArgumentParser
import CDMigrate
import FoundationEssentials

/// `cdmigrate import`: Xcode's model and mapping files, source or compiled, as cdmigrate's JSON.
struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Convert Xcode model and mapping files (source or compiled) to JSON.",
        discussion: """
            What is written depends on what PATH is:
              .xcdatamodel (or its contents file), .mom
                  one model JSON, to -o FILE or standard output;
              .xcdatamodeld, .momd (or any folder holding a VersionInfo.plist)
                  every version into -o DIR as <version>.json, a current-version
                  file naming the current one, and each mapping model of the set
                  (.xcmappingmodel beside or inside the .xcdatamodeld, .cdm beside or
                  inside the .momd) as <name>.mapping.json, bound to the two versions
                  it records and carrying their entity hashes (with migration-passes.json
                  when the set has one): a folder --models reads as the same set;
              .xcmappingmodel (or its xcmapping.xml)
                  mapping JSON, compiled against --source-model and
                  --destination-model, every expression Xcode would generate
                  written out.

            Model JSON carries each entity's version hash (Apple's, base64), so a store written by the \
            app is recognised by the imported model. See docs/model-format.md and docs/mapping-format.md.

            Examples:
              cdmigrate import Model.xcdatamodeld -o models/
              cdmigrate import Model.momd -o models/
              cdmigrate import "Model.xcdatamodeld/Model 2.xcdatamodel" -o v2.json
              cdmigrate import V1toV2.xcmappingmodel --source-model models/v1.json \\
                               --destination-model models/v2.json -o v1-v2.mapping.json

            \(ExitStatus.table)
            """
    )

    @Argument(
        help: ArgumentHelp("The Xcode model, model bundle, compiled model or mapping model.", valueName: "path"),
        completion: .file())
    var path: String

    @Option(
        name: [.customShort("o"), .customLong("output")],
        help: ArgumentHelp(
            "The file to write (default: standard output), or for a model bundle the folder (created if needed).",
            valueName: "file|dir"), completion: .file())
    var output: String?

    @OptionGroup var mappings: MappingFolderOptions

    @Option(
        name: .customLong("source-model"),
        help: ArgumentHelp("For a mapping model: the model it maps from.", valueName: "path"), completion: .file())
    var sourceModel: String?

    @Option(
        name: .customLong("destination-model"),
        help: ArgumentHelp("For a mapping model: the model it maps to.", valueName: "path"), completion: .file())
    var destinationModel: String?

    @Flag(help: "Print errors as JSON on standard output.")
    var json = false

    /// What PATH holds, told apart by its name (and, for folders, by a VersionInfo.plist inside).
    enum Kind {
        case model, modelBundle, compiledModel, compiledBundle, mappingModel
    }

    static func kind(of path: String) -> Kind? {
        var trimmed = path
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed.removeLast() }
        if trimmed.hasSuffix(".xcmappingmodel") || trimmed.hasSuffix(".xcmappingmodel/xcmapping.xml") {
            return .mappingModel
        }
        if trimmed.hasSuffix(".xcdatamodeld") { return .modelBundle }
        if trimmed.hasSuffix(".xcdatamodel") || trimmed.hasSuffix(".xcdatamodel/contents") { return .model }
        if trimmed.hasSuffix(".mom") { return .compiledModel }
        if trimmed.hasSuffix(".momd") || FileManager.default.fileExists(atPath: trimmed + "/VersionInfo.plist") {
            return .compiledBundle
        }
        return nil
    }

    func validate() throws {
        guard let kind = Self.kind(of: path) else {
            throw ValidationError("'\(path)' is not an .xcdatamodel, .xcdatamodeld, .mom, .momd or .xcmappingmodel")
        }
        switch kind {
        case .mappingModel, .model, .compiledModel:
            if !mappings.folders.isEmpty {
                throw ValidationError("--mappings goes with a model bundle (.xcdatamodeld or .momd)")
            }
        default: break
        }
        switch kind {
        case .mappingModel:
            if sourceModel == nil || destinationModel == nil {
                throw ValidationError(
                    "a mapping model is compiled against its models: give --source-model and --destination-model")
            }
        case .modelBundle, .compiledBundle:
            if output == nil || output == "-" {
                throw ValidationError("a model bundle has several versions: give -o DIR for their JSON files")
            }
            if sourceModel != nil || destinationModel != nil {
                throw ValidationError("--source-model and --destination-model are for mapping models")
            }
        case .model, .compiledModel:
            if sourceModel != nil || destinationModel != nil {
                throw ValidationError("--source-model and --destination-model are for mapping models")
            }
        }
    }

    func run() throws {
        let out = Output(json: json, quiet: false)
        do {
            switch Self.kind(of: path) {
            case .model?:
                let model = try ManagedObjectModel(contentsOf: path)
                for warning in model.warnings { out.warning(warning) }
                try Output.write(model.jsonText() + "\n", to: output)
            case .compiledModel?:
                let model = try CompiledModelReader.model(contentsOf: path)
                for warning in model.warnings { out.warning(warning) }
                try Output.write(model.jsonText() + "\n", to: output)
            case .modelBundle?, .compiledBundle?:
                try writeSet(ModelSetJSON(contentsOf: path, mappingFolders: mappings.folders), output: out)
            case .mappingModel?:
                let source = try ManagedObjectModel(contentsOf: sourceModel ?? "")
                let destination = try ManagedObjectModel(contentsOf: destinationModel ?? "")
                let mapping = try MappingModel(contentsOf: path, sourceModel: source, destinationModel: destination)
                for warning in mapping.warnings { out.warning(warning) }
                try Output.write(mapping.jsonText() + "\n", to: output)
            case nil:
                throw MigrationError(.invalidArgument, "'\(path)' is not an Xcode model or mapping model")
            }
        } catch {
            let error = MigrationError.from(error)
            out.error(error)
            out.document(["ok": false, "error": Output.errorObject(error)])
            throw ExitStatus(error).exitCode
        }
    }

    /// Every version as `<dir>/<version>.json`, each mapping model as `<dir>/<name>.mapping.json`,
    /// the passes manifest, and `<dir>/current-version` naming the current version.
    private func writeSet(_ set: ModelSetJSON, output out: Output) throws {
        let folder = output ?? "."
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        } catch {
            throw MigrationError(.io, "cannot create the folder '\(folder)': \(error)")
        }
        for warning in set.warnings { out.warning(warning) }
        for file in set.files { try Output.write(file.text, to: folder + "/" + file.name) }
        let mappingNames = set.mappingModels.map { $0.name }
        out.note(
            "wrote \(set.models.count) version(s) and \(mappingNames.count) mapping model(s) to \(folder) (current: \(set.currentVersionName))"
        )
        out.document([
            "ok": true, "versions": set.models.map { $0.version }, "currentVersion": set.currentVersionName,
            "mappingModels": mappingNames, "folder": folder,
        ])
    }
}
