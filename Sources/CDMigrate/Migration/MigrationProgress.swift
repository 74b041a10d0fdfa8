/// Where a migration stands, as handed to the progress handler.
public struct MigrationProgress {
    /// Core Data's `migrationProgress`: finished steps (entity mappings × 3 stages, over all passes)
    /// plus the fraction of the current step done, over the number of steps. 0…1.
    public var fraction: Double
    /// The three stages of one entity mapping's step, in the order a pass runs them.
    ///
    /// The raw values (1, 2, 3) are the stage numbers of the C API's `cdm_progress.stage` and the
    /// Python binding's `Progress.stage`.
    public enum Stage: Int, CaseIterable, CustomStringConvertible {
        /// Stage 1: a destination instance for each source instance, attribute mappings applied
        /// (Core Data: `createDestinationInstances(forSource:in:manager:)`).
        case createDestinationInstances = 1
        /// Stage 2: relationship mappings applied to each destination instance
        /// (Core Data: `createRelationships(forDestination:in:manager:)`).
        case createRelationships = 2
        /// Stage 3: the destination instances validated against the destination model, then
        /// `performCustomValidation(forMapping:manager:)` (Core Data: the same).
        case validate = 3

        /// A short name for progress displays: "instances", "relationships", "validation".
        public var description: String {
            switch self {
            case .createDestinationInstances: return "instances"
            case .createRelationships: return "relationships"
            case .validate: return "validation"
            }
        }
    }
    /// The stage running.
    public var stage: Stage
    /// Which mapping model (0-based) of a multi-pass migration runs.
    public var pass: Int
    /// The entity mapping running (empty in the last call, once the migration has finished).
    public var entityMappingName: String
    /// Instances handled so far in the current step, and how many there are (0 when not known).
    public var processed: Int
    /// How many instances the current step has (0 when not known).
    public var total: Int
}

/// What a finished migration did.
public struct MigrationReport {
    /// What one entity mapping did in one pass.
    public struct MappingCounts {
        /// The pass (index of the mapping model).
        public var pass: Int
        /// The entity mapping.
        public var entityMappingName: String
        /// Source instances the mapping fetched.
        public var sourceInstances: Int
        /// Associations it made (one per destination instance for the default policy).
        public var associations: Int
        /// Whether stage 1 (instances) and stage 2 (relationships) ran as SQL statements rather than per instance.
        public var instancesBySQL = false
        /// Whether stage 2 (relationships) ran as SQL statements rather than per instance.
        public var relationshipsBySQL = false
    }
    /// Per entity mapping and pass, in the order they ran.
    public var mappings: [MappingCounts] = []
    /// Source entities with instances that no entity mapping took, and how many (Core Data says nothing).
    public var untakenSourceInstances: [(entityName: String, count: Int)] = []
    /// Instances per destination entity (own instances, not sub-entities').
    public var destinationCounts: [(entityName: String, count: Int)] = []
    /// What the migration noticed without failing (mapping warnings, unknown metadata).
    public var warnings: [String] = []
    /// External binary data files that source rows name but that are missing from the source's
    /// `.<name>_SUPPORT/_EXTERNAL_DATA` folder, each counted once: their values were read as nil
    /// (the warnings name the first few). Core Data raises an exception on reading such a value.
    public var missingExternalDataFiles = 0
    /// What did not reach the destination, per entity and property, with counts (docs/loss-report.md).
    public var losses = LossReport()
    /// Whether the step was done as schema changes on a copy of the source file (renamed, added
    /// and dropped tables and columns) rather than by writing every row: see docs/schema-step.md.
    /// Core Data counterpart: none (its lightweight migration decides this internally).
    public var bySchemaChanges = false
    /// The schema changes, in words, when `bySchemaChanges`; empty otherwise.
    public var schemaChanges: [String] = []
    /// Why a step that might have been done as schema changes was not (nil when it was, or when
    /// the manager does not try: `MigrationManager.triesSchemaChanges` off).
    public var schemaChangesNotDone: String?
}
