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
    fetch(
        ctx, store: store, entity, predicate, arguments, argumentCount, sort: sort, sortCount: sortCount, flags, limit,
        out)
}
