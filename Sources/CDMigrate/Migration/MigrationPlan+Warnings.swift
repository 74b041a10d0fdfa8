/// The warnings of a plan as every surface gives them: the plan's own, then each step's (its
/// models' and mapping models', what `MigrationManager.warnings` says before a run), named by the
/// step (`v1 → v2: …`), each once. `cdmigrate plan`, `validate`, `check` and `cdm_chain_plan`
/// say the same.
extension MigrationPlan {
    /// The plan's warnings, then every step's, without repeats: a model's own warning is said at
    /// the first step that reads the model (a version is one step's destination and the next
    /// one's source).
    ///
    /// - Throws: `MigrationError` when a step's models and mapping models do not fit (the plan
    ///   checked them already, so only in what it could not check).
    package func allWarnings() throws -> [String] {
        var all = warnings
        var seen = Set(all)
        var seenModelWarnings: Set<String> = []
        for stage in stages {
            let manager = try MigrationManager(
                sourceModel: stage.sourceModel, destinationModel: stage.destinationModel,
                mappingModels: stage.mappingModels)
            for warning in manager.warnings {
                if let modelWarning = Self.modelWarning(warning), !seenModelWarnings.insert(modelWarning).inserted {
                    continue
                }
                if seen.insert(stage.warningLabel + warning).inserted { all.append(stage.warningLabel + warning) }
            }
        }
        return all
    }

    /// A model's warning as `MigrationManager.warnings` words it ("source model 'v2': …",
    /// "destination model 'v2': …"), without the side: the same for either step reading the model.
    private static func modelWarning(_ warning: String) -> String? {
        for side in ["source model ", "destination model "] where warning.hasPrefix(side) {
            return String(warning.dropFirst(side.count))
        }
        return nil
    }
}

extension MigrationStage {
    /// How a step's warnings start: "v1 → v2: ".
    package var warningLabel: String { "\(sourceVersionName) → \(destinationVersionName): " }
}
