import CDMigrate

/// The warnings of a staged migration's steps as every command prints them: the plan's, then
/// each step's (its models' and mapping models', what `MigrationManager.warnings` says before a
/// run), named by the step (`v1 → v2: …`), each once.
enum StepWarnings {
    /// How a step's warnings start: "v1 → v2: ".
    static func label(_ stage: MigrationStage) -> String {
        "\(stage.sourceVersionName) → \(stage.destinationVersionName): "
    }

    /// The plan's warnings, then every step's, without repeats.
    /// - Throws: `MigrationError` when a step's models and mapping models do not fit (the plan
    ///   checked them already, so only in what it could not check).
    static func all(_ plan: MigrationPlan) throws -> [String] {
        var warnings = plan.warnings
        var seen = Set(warnings)
        for stage in plan.stages {
            let manager = try MigrationManager(sourceModel: stage.sourceModel, destinationModel: stage.destinationModel,
                                               mappingModels: stage.mappingModels)
            for warning in manager.warnings where seen.insert(label(stage) + warning).inserted {
                warnings.append(label(stage) + warning)
            }
        }
        return warnings
    }
}
