import ArgumentParser
import CDMigrate
import FoundationEssentials

/// `cdmigrate infer`: the lightweight mapping model Core Data would infer, written as mapping JSON.
struct InferCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "infer",
        abstract: "Write the mapping model Core Data would infer between two models, as JSON.",
        discussion: """
            Infers the lightweight mapping (NSMappingModel.inferredMappingModel) between the two models \
            and writes it as mapping JSON (docs/mapping-format.md): entity mappings named as Core Data \
            names them (IEM_Copy_<Entity>, IEM_Transform_<Entity>, IEM_Add_<Entity>, IEM_Remove_<Entity>), \
            every expression written out. Edit it, then run it with `migrate --mapping`.

            When the change cannot be inferred, nothing is written; each problem names the entity, the \
            property and the rule it breaks, and the command exits with 65.

            Examples:
              cdmigrate infer --source-model v1.json --destination-model v2.json
              cdmigrate infer --source-model Model.xcdatamodeld/v1.xcdatamodel \\
                              --destination-model Model.xcdatamodeld/v2.xcdatamodel \\
                              -o v1-v2.mapping.json

            \(ExitStatus.table)
            """
    )

    @Option(
        name: .customLong("source-model"),
        help: ArgumentHelp("The model the stores were written with.", valueName: "path"), completion: .file())
    var sourceModel: String

    @Option(
        name: .customLong("destination-model"), help: ArgumentHelp("The model to migrate to.", valueName: "path"),
        completion: .file())
    var destinationModel: String

    @Option(
        name: [.customShort("o"), .customLong("output")],
        help: ArgumentHelp("Where to write the mapping JSON (default: standard output).", valueName: "file"),
        completion: .file())
    var output: String?

    @Flag(help: "Print errors as JSON on standard output.")
    var json = false

    func run() throws {
        let out = Output(json: json, quiet: false)
        do {
            let source = try ManagedObjectModel(contentsOf: sourceModel)
            let destination = try ManagedObjectModel(contentsOf: destinationModel)
            let mapping = try MappingModel.inferred(from: source, to: destination)
            try Output.write(mapping.jsonText() + "\n", to: output)
            if let output = output {
                out.note("wrote \(mapping.entityMappings.count) entity mappings to \(output)")
            }
        } catch {
            let error = MigrationError.from(error)
            out.error(error)
            out.document(["ok": false, "error": Output.errorObject(error)])
            throw ExitStatus(error).exitCode
        }
    }
}
