/// One step of a progressive migration: a store at one version becomes a store at the next.
///
/// Core Data counterpart: `NSMigrationStage` — `NSLightweightMigrationStage` for an inferred
/// step, `NSCustomMigrationStage` for one with mapping models.
public struct MigrationStage {
    /// How a stage migrates: with mapping models from files, or with an inferred mapping.
    public enum Kind: String {
        /// Mapping models found for the step run as passes.
        case custom
        /// No mapping model: Core Data's inferred mapping (`MappingModel.inferred(from:to:)`).
        case lightweight
    }

    /// The version the stage migrates from.
    public let sourceVersionName: String
    /// The version the stage migrates to.
    public let destinationVersionName: String
    /// Custom (mapping models from files) or lightweight (inferred).
    public let kind: Kind
    /// The mapping models' names (file names without extension; the inferred one is named
    /// "inferred"), in pass order.
    public let mappingModelNames: [String]
    /// The mapping models bound to the step's models, in pass order.
    public let mappingModels: [MappingModel]
    /// Why these mapping models: which files matched and how, or why none did.
    public let reason: String
    /// The model of `sourceVersionName`.
    public let sourceModel: ManagedObjectModel
    /// The model of `destinationVersionName`.
    public let destinationModel: ManagedObjectModel
    /// Whether the stage is Core Data's own step: one mapping inferred straight from the store's
    /// version (or from where mapping models left it) to the target, over the versions between,
    /// taken because the version-by-version steps cannot be inferred or ordered (`reason` says
    /// which). Core Data counterpart: the mapping automatic migration infers from the store's
    /// model to the current one.
    public internal(set) var isDirect = false
    /// For a step that fuses consecutive steps of a chain into one pass (`MigrationPlan.passes`),
    /// the steps it replaces, in order; empty for a step of its own.
    public internal(set) var fusedStages: [MigrationStage] = []

    /// Whether the step fuses several steps of the chain into one pass.
    public var isFused: Bool { !fusedStages.isEmpty }

    /// The policy class names the step's entity mappings name.
    public var policyNames: [String] {
        var names: [String] = []
        for model in mappingModels {
            for mapping in model.entityMappings {
                if let name = mapping.entityMigrationPolicyClassName, !names.contains(name) { names.append(name) }
            }
        }
        return names
    }

    /// Whether the stage runs an inferred mapping (Core Data: `NSLightweightMigrationStage`).
    public var isInferred: Bool { kind == .lightweight }
}
