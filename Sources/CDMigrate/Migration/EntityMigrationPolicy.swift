/// NSEntityMigrationPolicy: the hooks a migration calls for one entity mapping.
///
/// Subclass it and register the subclass under the name the mapping's `policy` gives
/// (`MigrationManager.register(policyNamed:_:)`). Unlike Core Data, which makes a new policy object
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
    public init() {}

    /// Whether `createRelationships` is known to be the default's (a subclass in this package that
    /// keeps it says so): for a mapping without relationship mappings the migration then skips
    /// stage 2's walk over its destination instances, which would do nothing.
    package var createsRelationshipsByDefault = false

    open func begin(_ mapping: EntityMapping, with manager: MigrationManager) throws {}

    /// The default makes a destination instance of the mapping's destination entity, applies the
    /// mapping's attribute mappings, and associates it with the source instance.
    open func createDestinationInstances(forSource sInstance: ManagedObject, in mapping: EntityMapping, manager: MigrationManager) throws {
        try defaultCreateDestinationInstances(forSource: sInstance, in: mapping, manager: manager)
    }

    open func endInstanceCreation(forMapping mapping: EntityMapping, manager: MigrationManager) throws {}

    /// The default evaluates the mapping's relationship mappings for the destination instance.
    open func createRelationships(forDestination dInstance: ManagedObject, in mapping: EntityMapping, manager: MigrationManager) throws {
        try defaultCreateRelationships(forDestination: dInstance, in: mapping, manager: manager)
    }

    open func endRelationshipCreation(forMapping mapping: EntityMapping, manager: MigrationManager) throws {}

    open func performCustomValidation(forMapping mapping: EntityMapping, manager: MigrationManager) throws {}

    open func end(_ mapping: EntityMapping, manager: MigrationManager) throws {}

    /// Answers `FUNCTION($entityPolicy, "selector:", …)` in value expressions; nil means the policy
    /// has no such selector.
    open func perform(selector: String, arguments: [Value], manager: MigrationManager) throws -> Value? { nil }

    /// What `createDestinationInstances` does by default, for subclasses that want it as `super`
    /// from elsewhere; returns the instance it made (nil for a mapping without a destination entity).
    @discardableResult
    public final func defaultCreateDestinationInstances(forSource sInstance: ManagedObject, in mapping: EntityMapping, manager: MigrationManager) throws -> ManagedObject? {
        guard let entityName = mapping.destinationEntityName else { return nil }
        let dInstance = try manager.createDestinationInstance(entityName: entityName)
        try manager.applyAttributeMappings(of: mapping, source: sInstance, destination: dInstance)
        try manager.associate(sourceInstance: sInstance, withDestinationInstance: dInstance, for: mapping)
        return dInstance
    }

    public final func defaultCreateRelationships(forDestination dInstance: ManagedObject, in mapping: EntityMapping, manager: MigrationManager) throws {
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
