import ArgumentParser
import CDMigrate

/// The models and mapping models of one migration step.
struct ModelOptions: ParsableArguments {
    @Option(
        name: .customLong("source-model"),
        help: ArgumentHelp("The model the store was written with.", valueName: "path"), completion: .file())
    var sourceModel: String?

    @Option(
        name: .customLong("destination-model"), help: ArgumentHelp("The model to migrate to.", valueName: "path"),
        completion: .file())
    var destinationModel: String?

    @Option(
        name: .customLong("mapping"),
        help: ArgumentHelp(
            "A mapping model (JSON, .xcmappingmodel or .cdm); several run as passes, in order.", valueName: "path"),
        completion: .file())
    var mappings: [String] = []

    /// Whether any of the options was given.
    var isGiven: Bool { sourceModel != nil || destinationModel != nil || !mappings.isEmpty }

    /// Checks that the step is complete: both models and at least one mapping model.
    func validateStep() throws {
        if sourceModel == nil || destinationModel == nil {
            throw ValidationError("give --source-model and --destination-model")
        }
        if mappings.isEmpty { throw ValidationError("give at least one --mapping") }
    }

    /// Loads the models and mapping models and checks them against each other.
    /// - Throws: `MigrationError` naming the file and what is wrong in it.
    func manager() throws -> MigrationManager {
        let source = try ManagedObjectModel(contentsOf: sourceModel ?? "")
        let destination = try ManagedObjectModel(contentsOf: destinationModel ?? "")
        // JSON, Xcode's .xcmappingmodel (compiled against the two models) or a compiled .cdm.
        let mappingModels = try mappings.map {
            try MappingModel(contentsOf: $0, sourceModel: source, destinationModel: destination)
        }
        return try MigrationManager(sourceModel: source, destinationModel: destination, mappingModels: mappingModels)
    }
}
