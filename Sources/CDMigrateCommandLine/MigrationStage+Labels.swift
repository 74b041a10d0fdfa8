import CDMigrate

/// How the commands name a step of a chain in their lines: "v1 → v2 (inferred)",
/// "v2 → v3 (Mapping, fused: …)".
extension MigrationStage {
    /// "inferred", "inferred directly" (over the versions between), or the step's mapping models'
    /// names joined by `separator`.
    func kindLabel(separator: String = ", ") -> String {
        isInferred ? (isDirect ? "inferred directly" : "inferred") : mappingModelNames.joined(separator: separator)
    }

    /// " (fused: v1 → v2, v2 → v3)" for a fused step, "" for a step of its own.
    var fusedLabel: String {
        isFused
            ? " (fused: \(fusedStages.map { "\($0.sourceVersionName) → \($0.destinationVersionName)" }.joined(separator: ", ")))"
            : ""
    }

    /// "v1 → v2 (inferred)": the step as a line names it.
    var stepLabel: String { "\(sourceVersionName) → \(destinationVersionName) (\(kindLabel()))" }

    /// "v1 → v2 (inferred, fused: …): ": what a step's loss lines start with.
    var lossLabel: String {
        "\(sourceVersionName) → \(destinationVersionName) (\(kindLabel())\(fusedLabel)): "
    }
}
