import Synchronization

/// NSMigrationManager: migrates a store from a source model to a destination model with one or
/// more mapping models (passes), in Core Data's three stages.
///
/// Safety (docs/reliability.md): the source is never written and nothing is created beside it;
/// the destination name is locked for the run; the new store is built in a unique temporary file
/// beside the destination and moved into place in one step only when everything succeeded; on
/// any error or cancellation the temporary file is deleted.
///
/// Memory: source rows are streamed, associations live in a table of the destination's database
/// connection (not in memory), destination rows are written in batches.
public final class MigrationManager {
    public let sourceModel: ManagedObjectModel
    public let destinationModel: ManagedObjectModel
    /// One mapping model per pass, applied in order to the same source into one destination.
    public let mappingModels: [MappingModel]

    /// Values shared by all policies of one migration (Core Data's `userInfo`); cleared when a migration ends.
    public var userInfo: [String: Any] = [:]
    /// Called as the migration advances; returning false cancels it.
    public var progressHandler: ((MigrationProgress) -> Bool)?
    /// How often (in instances) the handler hears about progress within a step.
    public var progressInterval = 500
    /// Instances inserted between commits of the destination.
    public var batchSize = 5_000
    /// Whether declarative entity mappings may run as one SQL statement (off: every mapping row by row).
    public var pushDownSQL = true
    /// Whether a declarative mapping that takes its source entity whole into an empty table keeps
    /// the source keys (its associations are then identities, not rows; see `AssociationTable`).
    var keepsSourceKeys = true

    public private(set) var migrationProgress: Double = 0
    public internal(set) var currentEntityMapping: EntityMapping?
    /// The property mapping whose expression is being evaluated.
    public internal(set) var currentPropertyMapping: PropertyMapping?
    public private(set) var currentPass = 0
    public private(set) var sourceStore: PersistentStore?
    public private(set) var destinationStore: PersistentStore?

    var policyFactories: [String: () -> EntityMigrationPolicy] = [:]
    var hostFunctions: [String: ([Value]) throws -> Value] = [:]
    var associations: AssociationTable?
    var mappingIDs: [ObjectIdentifier: Int] = [:]
    var currentPolicy: EntityMigrationPolicy?
    var currentSource: ManagedObject?
    var currentDestination: ManagedObject?
    /// One evaluator per run (it caches compiled MATCHES patterns); released when the run ends,
    /// since it holds the manager as its environment.
    var evaluator: ExpressionEvaluator?
    var evaluationDepth = 0
    var lookupIndexes = Set<String>()
    var lookupIndexNames: [String] = []
    /// Set by `cancel()` from any thread, read by the migration's thread.
    private let cancelRequest = Atomic<Bool>(false)
    private var sourceAttached = false
    /// How this run reads its source; its private snapshot (if any) goes with it.
    private var sourceAccess: SourceAccess?
    private var stepsDone = 0
    private var totalSteps = 1
    private var stage = 0
    private var report = MigrationReport()

    /// Checks every mapping model against the two models (errors name what does not fit) and
    /// keeps its own copies bound to them: the mapping models given are not changed, so they may
    /// be shared with other migrations.
    public init(sourceModel: ManagedObjectModel, destinationModel: ManagedObjectModel, mappingModels: [MappingModel]) throws {
        if mappingModels.isEmpty {
            throw MigrationError(.migrationMissingMappingModel, "a migration needs at least one mapping model")
        }
        self.mappingModels = try mappingModels.map { try $0.validate(sourceModel: sourceModel, destinationModel: destinationModel) }
        self.sourceModel = sourceModel
        self.destinationModel = destinationModel
    }

    public convenience init(sourceModel: ManagedObjectModel, destinationModel: ManagedObjectModel, mappingModel: MappingModel) throws {
        try self.init(sourceModel: sourceModel, destinationModel: destinationModel, mappingModels: [mappingModel])
    }

    /// Registers the policy class for mappings whose `policy` is `name`: a new object per entity mapping and pass.
    /// A module-qualified name (`UnCloudNotes.AttachmentPolicy`, as Xcode's editor shows a Swift class)
    /// and the bare class name find each other, whichever of the two the mapping and the registration use.
    public func register(policyNamed name: String, _ factory: @escaping () -> EntityMigrationPolicy) {
        policyFactories[name] = factory
    }

    /// The factory registered for `name`: under that very name, else under the same class name with
    /// or without a module prefix.
    func policyFactory(named name: String) -> (() -> EntityMigrationPolicy)? {
        if let factory = policyFactories[name] { return factory }
        let bare = XcodeMappingModelReader.unqualified(name)
        if let factory = policyFactories[bare] { return factory }
        return policyFactories.keys.sorted().first { XcodeMappingModelReader.unqualified($0) == bare }.flatMap { policyFactories[$0] }
    }

    /// Registers the function `FUNCTION(CAST("className", "Class"), "selector", …)` calls.
    public func registerFunction(className: String, selector: String, _ body: @escaping ([Value]) throws -> Value) {
        hostFunctions[className + " " + selector] = body
    }

    /// Asks a running migration to stop; it ends with `.migrationCancelled` at the next instance.
    /// Safe to call from any thread (Core Data: `cancelMigrationWithError:`).
    public func cancel() { cancelRequest.store(true, ordering: .relaxed) }

    // MARK: Running

    /// Migrates the store at `sourcePath` into a new store at `destinationPath`, which must not
    /// exist — neither before nor when the new store is moved there (the move refuses, atomically,
    /// a destination that appeared meanwhile) — and must have no `-wal`, `-shm` or `-journal`
    /// beside it (SQLite would replay a stale log onto the new store).
    ///
    /// The destination name is locked for the run (`<destination>.cdmigrate-lock`): a second
    /// migration to it fails at once with a "busy" error. The new store is written to a unique
    /// temporary file beside the destination and renamed onto it only when everything succeeded.
    /// The source is read without creating or changing any file beside it (see `SourceAccess`).
    ///
    /// - Throws: `MigrationError` — `.migrationManagerDestinationStore` for a destination that
    ///   exists, is busy or has stale companion files; `.migrationManagerSourceStore` for a source
    ///   that cannot be read or that another process changed meanwhile; any error of the run.
    /// - Core Data: `NSMigrationManager.migrateStore(from:type:options:mapping:to:type:options:)`.
    @discardableResult
    public func migrateStore(from sourcePath: String, to destinationPath: String, checkSourceVersion: Bool = true) throws -> MigrationReport {
        if StoreFiles.sameFile(sourcePath, destinationPath) {
            throw MigrationError(.migrationManagerDestinationStore, "the destination '\(destinationPath)' is the source store; use migrateStoreInPlace(at:) to replace a store")
        }
        let lock = try DestinationLock.acquire(for: destinationPath)
        defer { lock.release() }
        if FileIO.exists(destinationPath) {
            throw MigrationError(.migrationManagerDestinationStore, "the destination '\(destinationPath)' already exists; cdmigrate never overwrites a store it did not make in this run")
        }
        let stale = StoreFiles.presentCompanions(of: destinationPath)
        if !stale.isEmpty {
            throw MigrationError(.migrationManagerDestinationStore, "the destination '\(destinationPath)' does not exist but SQLite's companion files of an earlier store are beside it: \(stale.map { "'\($0)'" }.joined(separator: ", ")); SQLite would replay them onto the new store — remove them (or move them away with the store they belong to) and run the migration again")
        }
        let temporary = try StoreFiles.makeTemporaryFile(beside: destinationPath)
        do {
            let result = try run(sourcePath: sourcePath, temporaryPath: temporary, checkSourceVersion: checkSourceVersion)
            try StoreFiles.handOver(temporary, to: destinationPath, replacing: false)
            return result
        } catch {
            StoreFiles.removeTemporaryStore(temporary)
            throw MigrationManager.wrap(error)
        }
    }

    /// Migrates a store and replaces it by the result, only after everything succeeded: the new
    /// store is written to a unique temporary file beside it and renamed over the old one in one
    /// step. The old store is not touched before that step, with one exception, stated in every
    /// error after it: committed transactions waiting in its `-wal` are first checkpointed into
    /// its main file (same contents, other bytes), since a `-wal` left beside the new file would
    /// be replayed onto it. Fails with a "busy" error while another process has the store open
    /// or another migration holds its name.
    ///
    /// - Throws: `MigrationError` as `migrateStore(from:to:)`.
    /// - Core Data: what `NSPersistentStoreCoordinator` does on opening a store with
    ///   `NSMigratePersistentStoresAutomaticallyOption`.
    @discardableResult
    public func migrateStoreInPlace(at path: String, checkSourceVersion: Bool = true) throws -> MigrationReport {
        let lock = try DestinationLock.acquire(for: path)
        defer { lock.release() }
        try refuseIfOpenElsewhere(path)
        let temporary = try StoreFiles.makeTemporaryFile(beside: path)
        let result: MigrationReport
        do {
            result = try run(sourcePath: path, temporaryPath: temporary, checkSourceVersion: checkSourceVersion)
        } catch {
            StoreFiles.removeTemporaryStore(temporary)
            throw MigrationManager.wrap(error)
        }
        var changed = "the store is unchanged"
        do {
            try refuseIfOpenElsewhere(path)
            if (FileIO.size(path + "-wal") ?? 0) > 0 {
                changed = "the store's contents are unchanged, but the committed transactions of its write-ahead log '\(path)-wal' may have been checkpointed into its main file"
                try StoreFiles.checkpointLog(path)
                changed = "the store's contents are unchanged, but the committed transactions of its write-ahead log '\(path)-wal' were checkpointed into its main file (which therefore has other bytes) and the log emptied"
            }
            try StoreFiles.handOver(temporary, to: path, replacing: true)
        } catch {
            StoreFiles.removeTemporaryStore(temporary)
            let reason = (error as? MigrationError)?.message ?? "\(error)"
            throw MigrationError(.migrationManagerDestinationStore, "the migration succeeded but '\(path)' could not be replaced: \(reason); the migrated store was discarded and \(changed)")
        }
        return result
    }

    /// In-place migration needs the store to itself: a process writing it meanwhile would lose its writes.
    private func refuseIfOpenElsewhere(_ path: String) throws {
        if SourceAccess.isOpenElsewhere(path) == true {
            throw MigrationError(.migrationManagerSourceStore, "the store '\(path)' is busy: another program or connection has it open; close it there before migrating it in place")
        }
    }

    /// The run proper: reads the source (see `SourceAccess`) and writes the new store into
    /// `temporaryPath`, an empty file this run created; the caller hands it over or removes it.
    private func run(sourcePath: String, temporaryPath: String, checkSourceVersion: Bool) throws -> MigrationReport {
        for model in mappingModels {
            for mapping in model.entityMappings {
                if let name = mapping.entityMigrationPolicyClassName, policyFactory(named: name) == nil {
                    throw MigrationError(.entityMigrationPolicy, "entity mapping '\(mapping.name)' names policy '\(name)', which is not registered", path: mapping.path + ".policy")
                }
            }
        }
        cancelRequest.store(false, ordering: .relaxed)
        report = MigrationReport()
        report.warnings = mappingModels.flatMap { $0.warnings }
        evaluator = ExpressionEvaluator(environment: self)
        evaluator?.isCancelled = { [unowned self] in self.cancelRequest.load(ordering: .relaxed) }
        stepsDone = 0
        totalSteps = max(1, mappingModels.reduce(0) { $0 + $1.entityMappings.count * 3 })
        migrationProgress = 0
        defer {
            associations = nil
            sourceAttached = false
            sourceAccess = nil
            destinationStore?.close()
            destinationStore = nil
            sourceStore?.close()
            sourceStore = nil
            currentEntityMapping = nil
            currentPropertyMapping = nil
            currentPolicy = nil
            currentSource = nil
            currentDestination = nil
            mappingIDs = [:]
            lookupIndexes = []
            lookupIndexNames = []
            evaluator = nil
            userInfo = [:]
        }
        do {
            let access = try SourceAccess.prepare(source: sourcePath, scratchBeside: temporaryPath)
            sourceAccess = access
            let source: PersistentStore
            do {
                source = try PersistentStore.openSource(at: sourcePath, uri: access.uri, model: sourceModel, checkVersion: checkSourceVersion)
            } catch let error as MigrationError where error.code == .incompatibleVersionHash {
                // Core Data's word for "this store is not at the source model's version".
                throw MigrationError(.migrationMissingSourceModel, "the source store '\(sourcePath)' does not match the source model: \(error.message)", underlying: [error])
            } catch let error as MigrationError {
                throw MigrationError(.migrationManagerSourceStore, "cannot open the source store '\(sourcePath)': \(error.message)", underlying: [error])
            }
            sourceStore = source
            // One read transaction for the whole run (begun by openSource): a consistent snapshot
            // of the source, and no lock taken and released around every query.
            if !source.database.isInTransaction { try source.database.begin() }
            report.warnings += source.warnings
            var options = PersistentStore.CreateOptions()
            options.privateFile = true
            options.adoptsEmptyFile = true
            let destination: PersistentStore
            do {
                destination = try PersistentStore.create(at: temporaryPath, model: destinationModel, options: options)
            } catch let error as MigrationError {
                throw MigrationError(.migrationManagerDestinationStore, "cannot create the destination store '\(temporaryPath)': \(error.message)", underlying: [error])
            }
            destinationStore = destination
            associations = try AssociationTable(database: destination.database)

            for (pass, model) in mappingModels.enumerated() {
                try runPass(pass, model)
            }
            // Hooks of the last stage may have fetched (and so indexed) again.
            try detachSource()
            try dropLookupIndexes()
            try collectCounts()
            try destination.save()
            try destination.closeForHandOver()
            FileIO.fsync(path: temporaryPath)
            migrationProgress = 1
            try notifyProgress(entityMappingName: "", processed: 0, total: 0, force: true)
            // Last: the source read without locks must not have changed under the run.
            sourceStore?.close()
            try access.checkUnchanged()
            return report
        } catch {
            destinationStore?.close()
            destinationStore = nil
            throw MigrationManager.wrap(error)
        }
    }

    private func runPass(_ pass: Int, _ model: MappingModel) throws {
        currentPass = pass
        let mappings = model.entityMappings
        for (index, mapping) in mappings.enumerated() { mappingIDs[ObjectIdentifier(mapping)] = pass * 1_000_000 + index }
        let policies: [EntityMigrationPolicy] = mappings.map { mapping in
            if let name = mapping.entityMigrationPolicyClassName, let factory = policyFactory(named: name) { return factory() }
            return DefaultEntityMigrationPolicy()
        }
        guard let source = sourceStore, let destination = destinationStore, let associations = associations else { return }
        let plans = SourceFetchPlan.plans(for: mappings, sourceStore: source)

        // Stage 1: create destination instances.
        stage = 1
        for (index, mapping) in mappings.enumerated() {
            try enter(mapping, policy: policies[index])
            try policies[index].begin(mapping, with: self)
            var counts = MigrationReport.MappingCounts(pass: pass, entityMappingName: mapping.name, sourceInstances: 0, associations: 0)
            if let request = plans[index] {
                let total = try source.count(request)
                var processed = 0
                try notifyProgress(entityMappingName: mapping.name, processed: 0, total: total, force: true)
                if pushDownSQL, sourceAccess?.allowsAttach == true, policies[index] is DefaultEntityMigrationPolicy,
                   try runDeclaratively(mapping, request: request, total: total, source: source, destination: destination) {
                    processed = total
                    counts.instancesBySQL = true
                    try notifyProgress(entityMappingName: mapping.name, processed: total, total: total, force: true)
                } else {
                    processed = try createInstancesPerSource(mapping, policy: policies[index], request: request, total: total,
                                                             source: source, destination: destination)
                }
                counts.sourceInstances = processed
            }
            try policies[index].endInstanceCreation(forMapping: mapping, manager: self)
            try destination.save()
            counts.associations = try associations.count(mapping: mappingID(mapping))
            report.mappings.append(counts)
            finishStep()
        }

        // Stage 2: create relationships.
        stage = 2
        for (index, mapping) in mappings.enumerated() {
            try enter(mapping, policy: policies[index])
            // The default createRelationships with no relationship mappings (or with ones SQL has set) has nothing to do per instance.
            var idle = policies[index].createsRelationshipsByDefault && mapping.relationshipMappings.allSatisfy { $0.valueExpression == nil }
            if !idle && pushDownSQL && sourceAccess?.allowsAttach == true && policies[index] is DefaultEntityMigrationPolicy {
                idle = try setRelationshipsDeclaratively(mapping, source: source, destination: destination)
                if idle, let i = report.mappings.lastIndex(where: { $0.pass == pass && $0.entityMappingName == mapping.name }) {
                    report.mappings[i].relationshipsBySQL = true
                }
            }
            if !idle {
                try createRelationshipsPerDestination(mapping, policy: policies[index], associations: associations,
                                                      source: source, destination: destination)
            } else {
                try notifyProgress(entityMappingName: mapping.name, processed: 0, total: 0, force: true)
            }
            try policies[index].endRelationshipCreation(forMapping: mapping, manager: self)
            try destination.save()
            finishStep()
        }

        // Stage 3: validate. As Core Data, every destination instance is validated before any
        // policy's performCustomValidation and end, which do not run when validation fails. The
        // passes share one destination, so it is validated once whole, in the last pass.
        stage = 3
        if pass == mappingModels.count - 1 {
            try detachSource()
            try dropLookupIndexes()
            try DestinationValidation(store: destination).validate()
        }
        for (index, mapping) in mappings.enumerated() {
            try enter(mapping, policy: policies[index])
            try notifyProgress(entityMappingName: mapping.name, processed: 0, total: 0, force: true)
            try policies[index].performCustomValidation(forMapping: mapping, manager: self)
            try policies[index].end(mapping, manager: self)
            try destination.save()
            finishStep()
        }
        currentEntityMapping = nil
        currentPolicy = nil
    }

    /// Stage 1 row by row: the policy's `createDestinationInstances` for each source instance.
    private func createInstancesPerSource(_ mapping: EntityMapping, policy: EntityMigrationPolicy, request: FetchRequest, total: Int,
                                          source: PersistentStore, destination: PersistentStore) throws -> Int {
        var processed = 0
        try source.enumerate(request) { sInstance in
            try checkCancelled()
            currentSource = sInstance
            try policy.createDestinationInstances(forSource: sInstance, in: mapping, manager: self)
            currentSource = nil
            processed += 1
            if processed % batchSize == 0 { try destination.save() }
            try notifyProgress(entityMappingName: mapping.name, processed: processed, total: total)
            return true
        }
        return processed
    }

    /// Stage 2 per instance, as Core Data runs it: the policy's `createRelationships` once for each
    /// destination instance the mapping made (however many sources it was associated with), with
    /// `$source` the instance it was made from when there is exactly one (both as faults).
    private func createRelationshipsPerDestination(_ mapping: EntityMapping, policy: EntityMigrationPolicy, associations: AssociationTable,
                                                   source: PersistentStore, destination: PersistentStore) throws {
        let total = try associations.destinationCount(mapping: mappingID(mapping))
        var processed = 0
        try notifyProgress(entityMappingName: mapping.name, processed: 0, total: total, force: true)
        try associations.forEachDestination(mapping: mappingID(mapping)) { association, hasSeveralSources in
            try checkCancelled()
            let dInstance = try association.destination(in: destinationModel, store: destination)
            currentDestination = dInstance
            currentSource = hasSeveralSources ? nil : try association.source(in: sourceModel, store: source)
            try policy.createRelationships(forDestination: dInstance, in: mapping, manager: self)
            currentSource = nil
            currentDestination = nil
            processed += 1
            if processed % batchSize == 0 { try destination.save() }
            try notifyProgress(entityMappingName: mapping.name, processed: processed, total: total)
        }
    }

    /// Runs stage 1 of a declarative mapping as SQL (see `DeclarativeMappingSQL`); false when the
    /// mapping needs the row-by-row path.
    private func runDeclaratively(_ mapping: EntityMapping, request: FetchRequest, total: Int,
                                  source: PersistentStore, destination: PersistentStore) throws -> Bool {
        guard total > 0, let destinationEntity = mapping.destinationEntity, let sourceEntity = mapping.sourceEntity,
              let associations = associations else { return false }
        let keepsKeys = keepsSourceKeys && DeclarativeMappingSQL.canKeepSourceKeys(
            mapping: mapping, request: request, destinationTableIsEmpty: destination.lastAllocatedPrimaryKey(for: destinationEntity) == 0)
        guard let plan = DeclarativeMappingSQL.plan(mapping: mapping, request: request, mappingID: mappingID(mapping), keepsSourceKeys: keepsKeys,
                                                    source: source, destination: destination)
        else { return false }
        try attachSource(source, to: destination)
        try destination.database.begin()
        if let insertAssociations = plan.insertAssociations {
            let arguments = plan.arguments(firstPrimaryKey: destination.allocatePrimaryKeys(for: destinationEntity, count: total))
            try destination.database.run(plan.insertRows, arguments)
            try destination.database.run(insertAssociations, arguments)
        } else {
            try destination.database.run(plan.insertRows, plan.predicateArguments)
            let table = SQLiteDatabase.quote(destination.layout.table(for: destinationEntity))
            // Two queries: SQLite answers a lone MIN or MAX from the end of the table's b-tree.
            guard let low = try destination.database.scalar("SELECT MIN(Z_PK) FROM main.\(table)")?.integer,
                  let high = try destination.database.scalar("SELECT MAX(Z_PK) FROM main.\(table)")?.integer else {
                throw MigrationError(.migration, "entity mapping '\(mapping.name)': the rows it made in '\(destinationEntity.name)' cannot be counted")
            }
            destination.reservePrimaryKeys(for: destinationEntity, upTo: high)
            try associations.recordIdentity(mapping: mappingID(mapping), sourceEntity: sourceEntity.entityNumber,
                                            destinationEntity: destinationEntity.entityNumber, destinationTable: table,
                                            low: low, high: high, count: total)
        }
        try destination.save()
        return true
    }

    /// Stage 2 of a declarative mapping as SQL (see `DeclarativeRelationshipSQL`); false when it
    /// needs the per-instance path.
    private func setRelationshipsDeclaratively(_ mapping: EntityMapping, source: PersistentStore, destination: PersistentStore) throws -> Bool {
        guard let statements = try DeclarativeRelationshipSQL.plan(mapping: mapping, manager: self, source: source, destination: destination) else { return false }
        try attachSource(source, to: destination)
        try destination.database.begin()
        for statement in statements { try destination.database.run(statement) }
        try destination.save()
        return true
    }

    private func attachSource(_ source: PersistentStore, to destination: PersistentStore) throws {
        // ATTACH and DETACH cannot run inside a transaction.
        try destination.save()
        guard !sourceAttached, let uri = sourceAccess?.uri else { return }
        try destination.database.run("ATTACH DATABASE ? AS \(DeclarativeMappingSQL.sourceSchema)", [.string(uri)])
        sourceAttached = true
    }

    private func detachSource() throws {
        guard sourceAttached, let destination = destinationStore else { return }
        try destination.save()
        try destination.database.exec("DETACH DATABASE \(DeclarativeMappingSQL.sourceSchema)")
        sourceAttached = false
    }

    private func enter(_ mapping: EntityMapping, policy: EntityMigrationPolicy) throws {
        try checkCancelled()
        currentEntityMapping = mapping
        currentPolicy = policy
    }

    private func finishStep() {
        stepsDone += 1
        migrationProgress = Double(stepsDone) / Double(totalSteps)
    }

    private func checkCancelled() throws {
        if cancelRequest.load(ordering: .relaxed) { throw MigrationError(.migrationCancelled, "the migration was cancelled") }
    }

    private func notifyProgress(entityMappingName: String, processed: Int, total: Int, force: Bool = false) throws {
        guard let handler = progressHandler else { return }
        guard force || processed % max(1, progressInterval) == 0 else { return }
        let within = total > 0 ? min(1, Double(processed) / Double(total)) : 0
        let fraction = min(1, (Double(stepsDone) + within) / Double(totalSteps))
        migrationProgress = fraction
        let progress = MigrationProgress(fraction: fraction, stage: stage, pass: currentPass, entityMappingName: entityMappingName, processed: processed, total: total)
        if !handler(progress) { cancelRequest.store(true, ordering: .relaxed) }
        try checkCancelled()
    }

    private func collectCounts() throws {
        guard let source = sourceStore, let destination = destinationStore, let associations = associations else { return }
        let taken = try associations.distinctSourceCounts()
        for entity in sourceModel.entitiesInStoreOrder where !entity.isAbstract {
            var request = FetchRequest(entityName: entity.name)
            request.includesSubentities = false
            let total = try source.count(request)
            let left = total - (taken[entity.entityNumber] ?? 0)
            if left > 0 { report.untakenSourceInstances.append((entity.name, left)) }
        }
        for entity in destinationModel.entitiesInStoreOrder where !entity.isAbstract {
            var request = FetchRequest(entityName: entity.name)
            request.includesSubentities = false
            report.destinationCounts.append((entity.name, try destination.count(request)))
        }
    }

    func mappingID(_ mapping: EntityMapping) -> Int { mappingIDs[ObjectIdentifier(mapping)] ?? -1 }

    /// Errors thrown by host code become entity policy errors; cdmigrate's own pass through.
    static func wrap(_ error: Error) -> MigrationError {
        if let error = error as? MigrationError { return error }
        return MigrationError(.entityMigrationPolicy, "a migration policy failed: \(error)")
    }
}
