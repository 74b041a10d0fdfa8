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
        printed but do not fail.

        \(ExitStatus.table)
        """
    )

    @OptionGroup var models: ModelOptions

    @Flag(help: "Print the result as JSON on standard output.")
    var json = false

    func validate() throws { try models.validateStep() }

    func run() throws {
        let output = Output(json: json, quiet: false)
        do {
            let manager = try models.manager()
            let warnings = manager.mappingModels.flatMap { $0.warnings }
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
