/// The state of one migration run of a `MigrationManager`: the stores it has open, where it is
/// (pass, stage, entity mapping, the instance a hook or an expression is working on), the
/// associations and indexes it made, its counts and its report. A run starts with a fresh one
/// and drops it when it ends, whatever way it ends: nothing of one run is left for the next.
///
/// The manager's `current…` properties, `sourceStore`, `destinationStore` and `migrationProgress`
/// are views of it; the manager keeps only its configuration (models, mapping models, policies,
/// functions, options) and what lives across runs.
final class MigrationRun {
    /// How far the run is, 0…1 (the manager's `migrationProgress`).
    var migrationProgress: Double = 0
    /// The entity mapping being run (the manager's `currentEntityMapping`).
    var currentEntityMapping: EntityMapping?
    /// The property mapping whose expression is being evaluated.
    var currentPropertyMapping: PropertyMapping?
    /// The pass running: the index of its mapping model in `mappingModels`.
    var currentPass = 0
    /// The source store, read-only, once opened.
    var sourceStore: PersistentStore?
    /// The store being written, once created.
    var destinationStore: PersistentStore?
    /// How the run reads its source; its private snapshot (if any) goes with it.
    var sourceAccess: SourceAccess?
    /// Whether the source is attached to the destination's connection (for the SQL paths).
    var sourceAttached = false

    /// Source → destination instances, in a table of the destination's database.
    var associations: AssociationTable?
    /// Each entity mapping's number in the association table, by the mapping's identity.
    var mappingIDs: [ObjectIdentifier: Int] = [:] { didSet { lastMappingID = nil } }
    /// The mapping `MigrationManager.mappingID` looked up last, and its number (a policy's
    /// single-row hook associates instance after instance for one mapping).
    var lastMappingID: (mapping: ObjectIdentifier, id: Int)?
    var currentPolicy: EntityMigrationPolicy?
    var currentSource: ManagedObject?
    var currentDestination: ManagedObject?
    /// The attribute mappings last applied, resolved (a policy applies one mapping instance after instance).
    var attributeMappingPlan: AttributeMappingPlan?
    /// The attribute mappings of the mapping whose stage 1 runs row by row, written by SQL (`DeferredAttributeMappings`).
    var deferredAttributeMappings: DeferredAttributeMappings?
    /// One evaluator per run (it caches compiled MATCHES patterns); it holds the manager as its
    /// environment, which dropping the run releases.
    var evaluator: ExpressionEvaluator?
    var evaluationDepth = 0
    /// The indexes the run made on the source's tables for fetches and look-ups, dropped at its end.
    var lookupIndexes = Set<String>()
    var lookupIndexNames: [String] = []

    var stage: MigrationProgress.Stage = .createDestinationInstances
    var stepsDone = 0
    var totalSteps = 1
    /// The run's rows for progress (`estimateRunRows`).
    var runRows = RunRows()
    var report = MigrationReport()
    /// Per entity mapping (by its ID), the non-nil values of the source attributes it leaves
    /// behind, counted by its SQL copy (`attributesLeftBehind`); the loss report then scans nothing for them.
    var leftBehindCounts: [Int: [Int]] = [:]
    /// Per entity mapping run row by row (by its ID), the source values of the attributes the loss
    /// report compares (`nilledPairs`), counted as stage 1 went through the rows it took.
    var nilledSourceCounts: [Int: NonNilValueCounts] = [:]
    /// The destination rows whose attribute rules the run's SQL copies enforced (stage 3 skips them).
    var validatedByCopy = ValidatedByCopy()
    /// The run's counts of source rows, by the SQL that counts them (`countSource`).
    var sourceCounts: [String: Int] = [:]
    /// Per entity mapping whose stage 1 ran as SQL, the destination entity and the rows its copy
    /// wrote: the report's destination counts without reading the tables (`copiedDestinationCounts`).
    var copiedRows: [ObjectIdentifier: (entity: EntityDescription, rows: Int)] = [:]
    /// The private folder holding the external data files of the run's new store (see
    /// `ExternalDataHandOver`), nil when it wrote none.
    var stagedExternalData: String?

    /// Closes the stores the run still has open (the destination first, then the source).
    func closeStores() {
        destinationStore?.close()
        destinationStore = nil
        sourceStore?.close()
        sourceStore = nil
    }
}
