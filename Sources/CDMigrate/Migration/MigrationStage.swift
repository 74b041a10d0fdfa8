/// One step of a progressive migration: a store at one version becomes a store at the next.
///
/// Core Data counterpart: `NSMigrationStage` — `NSLightweightMigrationStage` for an inferred
/// step, `NSCustomMigrationStage` for one with mapping models.
public struct MigrationStage {
    public enum Kind: String {
        /// Mapping models found for the step run as passes.
        case custom
        /// No mapping model: Core Data's inferred mapping (`MappingModel.inferred(from:to:)`).
        case lightweight
    }

    public let sourceVersionName: String
    public let destinationVersionName: String
    public let kind: Kind
    /// The mapping models' names (file names without extension; the inferred one is named
    /// "inferred"), in pass order.
    public let mappingModelNames: [String]
    /// The mapping models bound to the step's models, in pass order.
    public let mappingModels: [MappingModel]
    /// Why these mapping models: which files matched and how, or why none did.
    public let reason: String
    public let sourceModel: ManagedObjectModel
    public let destinationModel: ManagedObjectModel

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

    public var isInferred: Bool { kind == .lightweight }
}
