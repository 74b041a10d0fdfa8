/// The warnings of a plan as every surface gives them: the plan's own, then each step's (its
/// models' and mapping models', what `MigrationManager.warnings` says before a run), named by the
/// step (`v1 → v2: …`), each once. `cdmigrate plan`, `validate`, `check` and `cdm_chain_plan`
/// say the same.
extension MigrationPlan {
    /// The plan's warnings, then every step's, without repeats.
    ///
    /// - Throws: `MigrationError` when a step's models and mapping models do not fit (the plan
    ///   checked them already, so only in what it could not check).
    package func allWarnings() throws -> [String] {
        var all = warnings
        var seen = Set(all)
        for stage in stages {
            let manager = try MigrationManager(
                sourceModel: stage.sourceModel, destinationModel: stage.destinationModel,
                mappingModels: stage.mappingModels)
            for warning in manager.warnings where seen.insert(stage.warningLabel + warning).inserted {
                all.append(stage.warningLabel + warning)
            }
        }
        return all
    }
}

extension MigrationStage {
    /// How a step's warnings start: "v1 → v2: ".
    package var warningLabel: String { "\(sourceVersionName) → \(destinationVersionName): " }
}
