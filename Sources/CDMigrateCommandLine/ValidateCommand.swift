import ArgumentParser
import CDMigrate

/// `cdmigrate validate`: the models and mapping models, checked against each other, without a store.
struct ValidateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Check models and mapping models against each other, without running.",
        discussion: """
        Every problem is reported with the file and the JSON path at fault; warnings (a mapping \
        without a source expression, a version hash that differs from the computed one, …) are \
        printed but do not fail. With --policies, the libraries are loaded and every policy an \
        entity mapping names must be registered by one of them.

        Examples:
          cdmigrate validate --source-model Model.xcdatamodeld/v1.xcdatamodel \\
                    --destination-model Model.xcdatamodeld/v2.xcdatamodel \\
                    --mapping v1-v2.json
          cdmigrate validate --source-model v1.json --destination-model v2.json \\
                    --mapping v1-v2.json --policies ./libnotepolicies.so --json

        \(ExitStatus.table)
        """
    )

    @OptionGroup var models: ModelOptions

    @OptionGroup var policies: PolicyOptions

    @Flag(help: "Print the result as JSON on standard output.")
    var json = false

    func validate() throws { try models.validateStep() }

    func run() throws {
        let output = Output(json: json, quiet: false)
        do {
            let manager = try models.manager()
            let hosted = try policies.register(on: manager)
            if hosted != nil, let error = MigrationError.collecting(PolicyOptions.unregistered(manager), code: .invalidMapping,
                                                                   summary: "policies are missing") {
                throw error
            }
            let warnings = manager.warnings
            for warning in warnings { output.warning(warning) }
            let entityMappings = manager.mappingModels.reduce(0) { $0 + $1.entityMappings.count }
            output.line("ok: \(manager.mappingModels.count) mapping model(s), \(entityMappings) entity mappings fit both models")
            output.document(["ok": true, "warnings": warnings, "entityMappings": entityMappings])
        } catch {
            let error = MigrationError.from(error)
            output.error(error)
            output.document(["ok": false, "error": Output.errorObject(error)])
            throw ExitStatus(error).exitCode
        }
    }
}
