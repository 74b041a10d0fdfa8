import CDMigrate

// Queries a policy makes through the manager, as Core Data policies do through
// manager.sourceContext / manager.destinationContext: fetch and count with an NSPredicate, and
// turn object IDs back into instances.

/// The fetch flags of cdmigrate.h.
enum FetchFlags {
    static let excludeSubentities: Int32 = 1
}

/// Whether a `CDM_STORE_*` argument names the destination; CDM_INVALID for any other number.
func isDestination(_ store: Int32) throws -> Bool {
    switch store {
    case StoreKind.source: return false
    case StoreKind.destination: return true
    default:
        throw MigrationError(
            .invalidArgument, "store \(store) is neither CDM_STORE_SOURCE (1) nor CDM_STORE_DESTINATION (2)")
    }
}

/// A fetch of one store: `cdm_context_fetch_source`/`_destination`, and `cdm_context_fetch` with
/// its sort descriptors.
func fetch(
    _ ctx: OpaquePointer?, store: Int32, _ entity: UnsafePointer<CChar>?, _ predicate: UnsafePointer<CChar>?,
    _ arguments: UnsafeRawPointer?, _ argumentCount: Int, sort: UnsafeRawPointer? = nil, sortCount: Int = 0,
    _ flags: Int32, _ limit: Int, _ out: UnsafeMutablePointer<OpaquePointer?>?
) -> Int32 {
    withContext(ctx) { context, scope in
        guard let out = out else { throw MigrationError.misuse("the list pointer is NULL") }
        out.pointee = nil
        let destination = try isDestination(store)
        let name = try CString.argument(entity, "the entity name")
        let text = try predicate.map { try CString.argument($0, "the predicate") }
        let (args, variables) = try FieldConversion.arguments(
            arguments?.assumingMemoryBound(to: CField.self), argumentCount)
        let descriptors = try sortDescriptors(sort, sortCount)
        try checkEntity(context.manager, name, destination: destination)
        let subentities = flags & FetchFlags.excludeSubentities == 0
        let limitValue: Int? = limit > 0 ? limit : nil
        let found =
            destination
            ? try context.manager.fetchDestinationInstances(
                entityName: name, predicate: text, arguments: args, variables: variables,
                includesSubentities: subentities, fetchLimit: limitValue, sortDescriptors: descriptors)
            : try context.manager.fetchSourceInstances(
                entityName: name, predicate: text, arguments: args, variables: variables,
                includesSubentities: subentities, fetchLimit: limitValue, sortDescriptors: descriptors)
        out.pointee = scope.handle(ListEntry(found))
    }
}

private func count(
    _ ctx: OpaquePointer?, destination: Bool, _ entity: UnsafePointer<CChar>?, _ predicate: UnsafePointer<CChar>?,
    _ arguments: UnsafeRawPointer?, _ argumentCount: Int, _ flags: Int32, _ out: UnsafeMutablePointer<Int>?
) -> Int32 {
    withContext(ctx) { context, _ in
        guard let out = out else { throw MigrationError.misuse("the count pointer is NULL") }
        let name = try CString.argument(entity, "the entity name")
        let text = try predicate.map { try CString.argument($0, "the predicate") }
        let (args, variables) = try FieldConversion.arguments(
            arguments?.assumingMemoryBound(to: CField.self), argumentCount)
        try checkEntity(context.manager, name, destination: destination)
        let subentities = flags & FetchFlags.excludeSubentities == 0
        out.pointee =
            destination
            ? try context.manager.countDestinationInstances(
                entityName: name, predicate: text, arguments: args, variables: variables,
                includesSubentities: subentities)
            : try context.manager.countSourceInstances(
                entityName: name, predicate: text, arguments: args, variables: variables,
                includesSubentities: subentities)
    }
}

/// An unknown entity is CDM_NOTFOUND naming it and the model.
func checkEntity(_ manager: MigrationManager, _ name: String, destination: Bool) throws {
    let model = destination ? manager.destinationModel : manager.sourceModel
    guard model.entity(named: name) != nil else {
        throw MigrationError.notFound(
            "the \(destination ? "destination" : "source") model has no entity named '\(name)'")
    }
}

@_cdecl("cdm_context_fetch_destination")
public func cdm_context_fetch_destination(
    _ ctx: OpaquePointer?, _ entity: UnsafePointer<CChar>?, _ predicate: UnsafePointer<CChar>?,
    _ arguments: UnsafeRawPointer?, _ argumentCount: Int, _ flags: Int32, _ limit: Int,
    _ out: UnsafeMutablePointer<OpaquePointer?>?
) -> Int32 {
    fetch(ctx, store: StoreKind.destination, entity, predicate, arguments, argumentCount, flags, limit, out)
}

@_cdecl("cdm_context_fetch_source")
public func cdm_context_fetch_source(
    _ ctx: OpaquePointer?, _ entity: UnsafePointer<CChar>?, _ predicate: UnsafePointer<CChar>?,
    _ arguments: UnsafeRawPointer?, _ argumentCount: Int, _ flags: Int32, _ limit: Int,
    _ out: UnsafeMutablePointer<OpaquePointer?>?
) -> Int32 {
    fetch(ctx, store: StoreKind.source, entity, predicate, arguments, argumentCount, flags, limit, out)
}

@_cdecl("cdm_context_count_destination")
public func cdm_context_count_destination(
    _ ctx: OpaquePointer?, _ entity: UnsafePointer<CChar>?, _ predicate: UnsafePointer<CChar>?,
    _ arguments: UnsafeRawPointer?, _ argumentCount: Int, _ flags: Int32, _ out: UnsafeMutablePointer<Int>?
) -> Int32 {
    count(ctx, destination: true, entity, predicate, arguments, argumentCount, flags, out)
}

@_cdecl("cdm_context_count_source")
public func cdm_context_count_source(
    _ ctx: OpaquePointer?, _ entity: UnsafePointer<CChar>?, _ predicate: UnsafePointer<CChar>?,
    _ arguments: UnsafeRawPointer?, _ argumentCount: Int, _ flags: Int32, _ out: UnsafeMutablePointer<Int>?
) -> Int32 {
    count(ctx, destination: false, entity, predicate, arguments, argumentCount, flags, out)
}

@_cdecl("cdm_context_instance_for_uri")
public func cdm_context_instance_for_uri(
    _ ctx: OpaquePointer?, _ uri: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<OpaquePointer?>?
) -> Int32 {
    withContext(ctx) { context, scope in
        guard let out = out else { throw MigrationError.misuse("the object pointer is NULL") }
        out.pointee = nil
        let text = try CString.argument(uri, "the URI")
        guard let found = try context.manager.instance(forURI: text) else {
            throw MigrationError.notFound("there is no instance for '\(text)'")
        }
        out.pointee = scope.handle(for: found)
    }
}

@_cdecl("cdm_context_instance_with_id")
public func cdm_context_instance_with_id(
    _ ctx: OpaquePointer?, _ store: Int32, _ entity: UnsafePointer<CChar>?, _ primaryKey: Int64,
    _ out: UnsafeMutablePointer<OpaquePointer?>?
) -> Int32 {
    withContext(ctx) { context, scope, table in
        guard let out = out else { throw MigrationError.misuse("the object pointer is NULL") }
        out.pointee = nil
        let manager = context.manager
        let destination = try isDestination(store)
        guard let persistent = destination ? manager.destinationStore : manager.sourceStore else {
            throw MigrationError.misuse("the migration has no open store")
        }
        let model = destination ? manager.destinationModel : manager.sourceModel
        guard let described = try scope.entity(of: model, name: entity) else {
            try checkEntity(manager, try CString.argument(entity, "the entity name"), destination: destination)
            return
        }
        guard let found = try persistent.object(entity: described, primaryKey: primaryKey) else {
            throw MigrationError.notFound(
                "there is no \(described.name) with primary key \(primaryKey) in the \(destination ? "destination" : "source")"
            )
        }
        out.pointee = scope.callbackHandle(for: found, in: table)
    }
}
