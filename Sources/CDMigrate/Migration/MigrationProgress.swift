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
    /// Rows handled so far in the whole run: every stage of every entity mapping of every pass,
    /// and in a chain (`StagedMigrationManager`) every step before this one. With `runTotal`, what
    /// a time-remaining estimate for the whole run is computed from. Core Data counterpart: none
    /// (`migrationProgress` is a fraction of steps, whatever their sizes).
    public var runProcessed: Int = 0
    /// Rows the whole run handles, as far as known (0 when nothing is known yet): each entity
    /// mapping's source count for each of its three stages, replaced by each step's own total when
    /// it starts; in a chain, the finished steps' rows plus the current step's for it and for
    /// every step still to come. It may grow (or shrink) as the run learns.
    public var runTotal: Int = 0
    /// The step of a chain running (0-based; 0 outside a chain), as `StagedMigrationManager`'s
    /// progress handler's index. Core Data counterpart: `NSStagedMigrationManager`'s stages.
    public var step: Int = 0
    /// How many steps the chain has (1 outside a chain).
    public var stepCount: Int = 1
    /// The work done in the whole run, and all of it as far as known: `runProcessed` and
    /// `runTotal` with each row weighted by what a row of its stage costs (`RunRows.stageWeights`:
    /// a row copied in stage 1 weighs more than one validated in stage 3), for a time-remaining
    /// estimate that does not jump between stages (the command line's progress line). 0 when
    /// nothing is known.
    package var runWork: Double = 0
    package var runWorkTotal: Double = 0
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

extension MigrationProgress {
    /// This progress of one step as progress of a chain: the step named, the rows of the steps
    /// before it (`rowsBefore`) added, and every step still to come counted as the size of this
    /// one until it runs (a step that knows no rows counts as the
    /// average of the steps before it, its share done as its `fraction`). `fraction` stays the
    /// step's own (the C API makes it the chain's).
    /// The work (`runWork`) is chained the same way from `workBefore`.
    func inChain(step: Int, of count: Int, rowsBefore: Int, workBefore: Double = 0) -> MigrationProgress {
        var chained = self
        chained.step = step
        chained.stepCount = max(1, count)
        let stepRows = Self.chainStepRows(runTotal: runTotal, step: step, rowsBefore: rowsBefore)
        let stepDone = runTotal > 0 ? runProcessed : Int(Double(stepRows) * min(1, max(0, fraction)))
        let later = max(0, chained.stepCount - step - 1)
        let (scaled, overflow) = stepRows.multipliedReportingOverflow(by: later + 1)
        chained.runProcessed = rowsBefore.addingReportingOverflow(stepDone).overflow ? Int.max : rowsBefore + stepDone
        chained.runTotal =
            overflow || rowsBefore.addingReportingOverflow(scaled).overflow ? Int.max : rowsBefore + scaled
        let stepWork = Self.chainStepWork(runWorkTotal: runWorkTotal, step: step, workBefore: workBefore)
        let workDone = runWorkTotal > 0 ? runWork : stepWork * min(1, max(0, fraction))
        chained.runWork = workBefore + workDone
        chained.runWorkTotal = workBefore + stepWork * Double(later + 1)
        return chained
    }

    /// The work a chain's step counts as: its own total, or, when it knows none, the average of
    /// the steps before it (as `chainStepRows`).
    static func chainStepWork(runWorkTotal: Double, step: Int, workBefore: Double) -> Double {
        runWorkTotal > 0 ? runWorkTotal : (step > 0 ? workBefore / Double(step) : 0)
    }

    /// The rows a chain's step counts as: its own total, or, when it knows none, the average of
    /// the steps before it.
    static func chainStepRows(runTotal: Int, step: Int, rowsBefore: Int) -> Int {
        runTotal > 0 ? runTotal : (step > 0 ? rowsBefore / step : 0)
    }
}
