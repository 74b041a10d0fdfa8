import CDMigrate

/// An EntityMigrationPolicy whose hooks are the host's C functions; a NULL hook keeps the
/// engine's default.
final class CPolicy: EntityMigrationPolicy {
    let registration: PolicyRegistration
    unowned let migration: MigrationHandle

    /// The single-row hooks' names in errors, made once rather than once per row.
    private let createLabel: String
    private let relationshipsLabel: String

    init(_ registration: PolicyRegistration, migration: MigrationHandle) {
        self.registration = registration
        self.migration = migration
        createLabel = "\(registration.name).create_destination_instances"
        relationshipsLabel = "\(registration.name).create_relationships"
        super.init()
        createsRelationshipsByDefault = registration.hooks.createRelationships == nil
    }

    private var user: UnsafeMutableRawPointer? { registration.user }

    private func run(_ hook: HookFunction?, _ name: String, _ mapping: EntityMapping) throws {
        guard let hook = hook else { return }
        let user = self.user
        try migration.callback(mapping, "\(registration.name).\(name)") { context, _ in hook(context, user) }
    }

    /// Runs a single-row hook on `instance`; false when the host left it NULL, for the caller to
    /// run Core Data's default instead.
    private func runRow(
        _ hook: InstanceHookFunction?, _ label: String, _ instance: ManagedObject, _ mapping: EntityMapping
    ) throws -> Bool {
        guard let hook = hook else { return false }
        let user = self.user
        try migration.rowCallback(mapping, label) { context, scope, table in
            hook(context, scope.callbackHandle(for: instance, in: table), user)
        }
        return true
    }

    override func begin(_ mapping: EntityMapping, manager: MigrationManager) throws {
        try run(registration.hooks.begin, "begin", mapping)
    }

    override func createDestinationInstances(
        forSource sInstance: ManagedObject, in mapping: EntityMapping, manager: MigrationManager
    ) throws {
        guard try runRow(registration.hooks.createDestinationInstances, createLabel, sInstance, mapping) else {
            return try super.createDestinationInstances(forSource: sInstance, in: mapping, manager: manager)
        }
    }

    override var createsDestinationInstancesInBatches: Bool {
        registration.hooks.createDestinationInstancesBatch != nil
    }

    override func createDestinationInstances(
        forSourceBatch batch: SourceBatch, in mapping: EntityMapping, manager: MigrationManager
    ) throws {
        guard let hook = registration.hooks.createDestinationInstancesBatch else {
            return try super.createDestinationInstances(forSourceBatch: batch, in: mapping, manager: manager)
        }
        let user = self.user
        try migration.callback(mapping, "\(registration.name).create_destination_instances_batch") { context, scope in
            hook(context, scope.handle(BatchEntry(batch, manager: manager)), user)
        }
    }

    override func endInstanceCreation(forMapping mapping: EntityMapping, manager: MigrationManager) throws {
        migration.endRowCallbacks()
        try run(registration.hooks.endInstanceCreation, "end_instance_creation", mapping)
    }

    override func createRelationships(
        forDestination dInstance: ManagedObject, in mapping: EntityMapping, manager: MigrationManager
    ) throws {
        guard try runRow(registration.hooks.createRelationships, relationshipsLabel, dInstance, mapping) else {
            return try super.createRelationships(forDestination: dInstance, in: mapping, manager: manager)
        }
    }

    override func endRelationshipCreation(forMapping mapping: EntityMapping, manager: MigrationManager) throws {
        migration.endRowCallbacks()
        try run(registration.hooks.endRelationshipCreation, "end_relationship_creation", mapping)
    }

    override func performCustomValidation(forMapping mapping: EntityMapping, manager: MigrationManager) throws {
        try run(registration.hooks.performCustomValidation, "perform_custom_validation", mapping)
    }

    override func end(_ mapping: EntityMapping, manager: MigrationManager) throws {
        try run(registration.hooks.end, "end", mapping)
    }

    override func perform(selector: String, arguments: [Value], manager: MigrationManager) throws -> Value? {
        try migration.performPolicyMethod(policy: registration.name, selector: selector, arguments: arguments)
    }
}
