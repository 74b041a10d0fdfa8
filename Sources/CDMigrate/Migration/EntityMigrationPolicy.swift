/// NSEntityMigrationPolicy: the hooks a migration calls for one entity mapping.
///
/// Subclass it and register the subclass under the name the mapping's `policy` gives
/// (`MigrationManager.registerPolicy(named:_:)`). Unlike Core Data, which makes a new policy object
/// for every stage, one policy object serves its entity mapping through all three stages of a pass,
/// so state kept in properties (a dictionary of categories already made, say) survives from
/// instance creation to relationship creation. State shared by several mappings belongs in
/// `MigrationManager.userInfo`.
///
/// The hooks run in Core Data's order: for each entity mapping `begin`, then
/// `createDestinationInstances` for each source instance, then `endInstanceCreation`; then for each
/// mapping `createRelationships` for each destination instance and `endRelationshipCreation`; then for
/// each mapping `performCustomValidation` and `end`. Throwing from any hook aborts the migration:
/// the partial destination is removed and the source is untouched.
open class EntityMigrationPolicy {
    /// Creates a policy. The manager calls the factory given to `registerPolicy(named:_:)` once per
    /// entity mapping and pass, so a subclass's initializer runs before `begin`.
    public init() {}

    /// Whether `createRelationships` is known to be the default's (a subclass in this package that
    /// keeps it says so): for a mapping without relationship mappings the migration then skips
    /// stage 2's walk over its destination instances, which would do nothing.
    package var createsRelationshipsByDefault = false

    /// Called once before the first destination instance of `mapping` is made.
    ///
    /// The default does nothing.
    ///
    /// - parameter mapping: The entity mapping about to run.
    /// - parameter manager: The running migration (`userInfo`, fetches, `currentPass`).
    /// - throws: Any error, which aborts the migration.
    ///
    /// Core Data: `NSEntityMigrationPolicy.begin(_:with:)`; the label is `manager:` here, as in
    /// every other hook.
    open func begin(_ mapping: EntityMapping, manager: MigrationManager) throws {
        try begin(mapping, with: manager)
    }

    /// Core Data's spelling of `begin(_:manager:)`, kept so that a policy ported from an app compiles
    /// and runs unchanged: the default `begin(_:manager:)` calls it. New code overrides
    /// `begin(_:manager:)`.
    ///
    /// - parameter mapping: The entity mapping about to run.
    /// - parameter manager: The running migration.
    /// - throws: Any error, which aborts the migration.
    ///
    /// Core Data: `NSEntityMigrationPolicy.begin(_:with:)`.
    open func begin(_ mapping: EntityMapping, with manager: MigrationManager) throws {}

    /// Called for each source instance the mapping's source expression selects (stage 1).
    ///
    /// The default makes a destination instance of the mapping's destination entity, applies the
    /// mapping's attribute mappings, and associates it with the source instance
    /// (`defaultCreateDestinationInstances(forSource:in:manager:)`). An override that makes its own
    /// instances with `manager.createDestinationInstance(entityName:)` associates them with
    /// `manager.associate(sourceInstance:withDestinationInstance:for:)` so that relationship
    /// mappings find them.
    ///
    /// - parameter sInstance: The source instance.
    /// - parameter mapping: The entity mapping being run.
    /// - parameter manager: The running migration.
    /// - throws: Any error, which aborts the migration.
    ///
    /// Core Data: `NSEntityMigrationPolicy.createDestinationInstances(forSource:in:manager:)`.
    open func createDestinationInstances(
        forSource sInstance: ManagedObject, in mapping: EntityMapping, manager: MigrationManager
    ) throws {
        try defaultCreateDestinationInstances(forSource: sInstance, in: mapping, manager: manager)
    }

    /// Whether the policy overrides `createDestinationInstances(forSourceBatch:in:manager:)`: the
    /// migration then calls that for the mapping's source rows in batches, and never the
    /// single-row `createDestinationInstances(forSource:in:manager:)`.
    ///
    /// The default is false. cdmigrate's extension beyond Core Data.
    open var createsDestinationInstancesInBatches: Bool { false }

    /// Called for each batch of the source rows the mapping's source expression selects (stage 1)
    /// when `createsDestinationInstancesInBatches` is true: up to `MigrationManager.batchSize`
    /// rows, in primary-key order, each batch once. A batch hook works on whole arrays
    /// (`SourceBatch`): the rows' keys and attribute columns, Core Data's default for every row
    /// (`batch.applyDefault()`), associations for many rows, and the manager's
    /// `createDestinationInstances(entityName:values:)` and `relate(entityName:relationshipName:owners:targets:)`.
    ///
    /// The default applies the default to the whole batch.
    ///
    /// - parameter batch: The source rows; valid only during this call.
    /// - parameter mapping: The entity mapping being run.
    /// - parameter manager: The running migration.
    /// - throws: Any error, which aborts the migration.
    ///
    /// cdmigrate's extension beyond Core Data, whose `createDestinationInstances(forSource:in:manager:)`
    /// sees one source instance per call.
    open func createDestinationInstances(
        forSourceBatch batch: SourceBatch, in mapping: EntityMapping, manager: MigrationManager
    ) throws {
        try batch.applyDefault()
    }

    /// Called once after the last destination instance of `mapping` was made.
    ///
    /// The default does nothing.
    ///
    /// - parameter mapping: The entity mapping being run.
    /// - parameter manager: The running migration.
    /// - throws: Any error, which aborts the migration.
    ///
    /// Core Data: `NSEntityMigrationPolicy.endInstanceCreation(forMapping:manager:)`.
    open func endInstanceCreation(forMapping mapping: EntityMapping, manager: MigrationManager) throws {}

    /// Called once for each destination instance associated with `mapping` (stage 2).
    ///
    /// The default evaluates the mapping's relationship mappings for the destination instance
    /// (`defaultCreateRelationships(forDestination:in:manager:)`), refusing with 134110 an
    /// instance made from several source instances.
    ///
    /// - parameter dInstance: The destination instance.
    /// - parameter mapping: The entity mapping being run.
    /// - parameter manager: The running migration (`sourceInstances(forEntityMappingName:destinationInstances:)`
    ///   finds the instance's sources).
    /// - throws: Any error, which aborts the migration.
    ///
    /// Core Data: `NSEntityMigrationPolicy.createRelationships(forDestination:in:manager:)`.
    open func createRelationships(
        forDestination dInstance: ManagedObject, in mapping: EntityMapping, manager: MigrationManager
    ) throws {
        try defaultCreateRelationships(forDestination: dInstance, in: mapping, manager: manager)
    }

    /// Called once after the relationships of every destination instance of `mapping` were set.
    ///
    /// The default does nothing.
    ///
    /// - parameter mapping: The entity mapping being run.
    /// - parameter manager: The running migration.
    /// - throws: Any error, which aborts the migration.
    ///
    /// Core Data: `NSEntityMigrationPolicy.endRelationshipCreation(forMapping:manager:)`.
    open func endRelationshipCreation(forMapping mapping: EntityMapping, manager: MigrationManager) throws {}

    /// Called once in stage 3, after every destination instance passed the model's validation
    /// (mandatory properties, relationship counts, numeric bounds); not called when it failed.
    ///
    /// The default does nothing.
    ///
    /// - parameter mapping: The entity mapping being run.
    /// - parameter manager: The running migration (`fetchDestinationInstances(entityName:…)`).
    /// - throws: Any error, which aborts the migration.
    ///
    /// Core Data: `NSEntityMigrationPolicy.performCustomValidation(forMapping:manager:)`.
    open func performCustomValidation(forMapping mapping: EntityMapping, manager: MigrationManager) throws {}

    /// Called last for `mapping`, after `performCustomValidation`; not called when validation failed.
    ///
    /// The default does nothing.
    ///
    /// - parameter mapping: The entity mapping being run.
    /// - parameter manager: The running migration.
    /// - throws: Any error, which aborts the migration.
    ///
    /// Core Data: `NSEntityMigrationPolicy.end(_:manager:)`.
    open func end(_ mapping: EntityMapping, manager: MigrationManager) throws {}

    /// Answers `FUNCTION($entityPolicy, "selector:", …)` in value expressions.
    ///
    /// The default answers nothing (nil), and the migration fails naming the policy and selector.
    ///
    /// - parameter selector: The selector as written, `"dateFromString:"`.
    /// - parameter arguments: The evaluated arguments, one per `:`.
    /// - parameter manager: The running migration.
    /// - returns: The value, or nil when the policy has no such selector.
    /// - throws: Any error, which aborts the migration.
    ///
    /// Core Data: a method of the `NSEntityMigrationPolicy` subclass, called through the
    /// Objective-C runtime.
    open func perform(selector: String, arguments: [Value], manager: MigrationManager) throws -> Value? { nil }

    /// What `createDestinationInstances` does by default, for subclasses that want it as `super`
    /// from elsewhere.
    ///
    /// - parameter sInstance: The source instance.
    /// - parameter mapping: The entity mapping being run.
    /// - parameter manager: The running migration.
    /// - returns: The instance it made (nil for a mapping without a destination entity).
    /// - throws: `MigrationError` when an attribute mapping fails to evaluate or set.
    ///
    /// Core Data: `super.createDestinationInstances(forSource:in:manager:)`.
    @discardableResult
    public final func defaultCreateDestinationInstances(
        forSource sInstance: ManagedObject, in mapping: EntityMapping, manager: MigrationManager
    ) throws -> ManagedObject? {
        guard let entityName = mapping.destinationEntityName else { return nil }
        let dInstance = try manager.createDestinationInstance(entityName: entityName)
        try manager.applyAttributeMappings(of: mapping, source: sInstance, destination: dInstance)
        try manager.associate(sourceInstance: sInstance, withDestinationInstance: dInstance, for: mapping)
        return dInstance
    }

    /// What `createRelationships` does by default: applies the mapping's relationship mappings.
    ///
    /// - parameter dInstance: The destination instance.
    /// - parameter mapping: The entity mapping being run.
    /// - parameter manager: The running migration.
    /// - throws: `MigrationError` 134110 for an instance made from several source instances, or
    ///   when a relationship mapping fails to evaluate or set.
    ///
    /// Core Data: `super.createRelationships(forDestination:in:manager:)`.
    public final func defaultCreateRelationships(
        forDestination dInstance: ManagedObject, in mapping: EntityMapping, manager: MigrationManager
    ) throws {
        try manager.applyRelationshipMappings(of: mapping, destination: dInstance)
    }
}

/// The policy used for mappings that name none.
final class DefaultEntityMigrationPolicy: EntityMigrationPolicy {
    override init() {
        super.init()
        createsRelationshipsByDefault = true
    }
}
