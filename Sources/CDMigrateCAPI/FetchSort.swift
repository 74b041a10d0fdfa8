import CDMigrate

// cdm_context_fetch: a fetch of either store with sort descriptors (NSFetchRequest.sortDescriptors).

/// `cdm_sort_descriptor` of cdmigrate.h.
struct CSortDescriptor {
    var key: UnsafePointer<CChar>?
    var ascending: Int32
}

/// The host's sort descriptors, each key checked (NULL or invalid UTF-8 named by position).
func sortDescriptors(_ pointer: UnsafeRawPointer?, _ count: Int) throws -> [FetchSortDescriptor] {
    guard count > 0 else { return [] }
    guard let pointer = pointer else {
        throw MigrationError.misuse("the sort descriptor array is NULL but sort_count is \(count)")
    }
    let items = pointer.assumingMemoryBound(to: CSortDescriptor.self)
    return try (0..<count).map { i in
        FetchSortDescriptor(
            key: try CString.argument(items[i].key, "the key of sort descriptor \(i + 1)"),
            ascending: items[i].ascending != 0)
    }
}

@_cdecl("cdm_context_fetch")
public func cdm_context_fetch(
    _ ctx: OpaquePointer?, _ store: Int32, _ entity: UnsafePointer<CChar>?, _ predicate: UnsafePointer<CChar>?,
    _ arguments: UnsafeRawPointer?, _ argumentCount: Int, _ sort: UnsafeRawPointer?, _ sortCount: Int,
    _ flags: Int32, _ limit: Int, _ out: UnsafeMutablePointer<OpaquePointer?>?
) -> Int32 {
    withContext(ctx) { context, scope in
        guard let out = out else { throw MigrationError.misuse("the list pointer is NULL") }
        out.pointee = nil
        guard store == StoreKind.source || store == StoreKind.destination else {
            throw MigrationError(
                .invalidArgument, "store \(store) is neither CDM_STORE_SOURCE (1) nor CDM_STORE_DESTINATION (2)")
        }
        let destination = store == StoreKind.destination
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
