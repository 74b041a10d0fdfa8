/// Where a migration stands, as handed to the progress handler.
public struct MigrationProgress {
    /// Core Data's `migrationProgress`: finished steps (entity mappings × 3 stages, over all passes)
    /// plus the fraction of the current step done, over the number of steps. 0…1.
    public var fraction: Double
    /// 1 create destination instances, 2 create relationships, 3 validate.
    public var stage: Int
    /// Which mapping model (0-based) of a multi-pass migration runs.
    public var pass: Int
    public var entityMappingName: String
    /// Instances handled so far in the current step, and how many there are (0 when not known).
    public var processed: Int
    public var total: Int
}

/// What a finished migration did.
public struct MigrationReport {
    public struct MappingCounts {
        public var pass: Int
        public var entityMappingName: String
        /// Source instances the mapping fetched.
        public var sourceInstances: Int
        /// Associations it made (one per destination instance for the default policy).
        public var associations: Int
        /// Whether stage 1 (instances) and stage 2 (relationships) ran as SQL statements rather than per instance.
        public var instancesBySQL = false
        public var relationshipsBySQL = false
    }
    public var mappings: [MappingCounts] = []
    /// Source entities with instances that no entity mapping took, and how many (Core Data says nothing).
    public var untakenSourceInstances: [(entityName: String, count: Int)] = []
    /// Instances per destination entity (own instances, not sub-entities').
    public var destinationCounts: [(entityName: String, count: Int)] = []
    public var warnings: [String] = []
}
