import CDMigrate

/// cdm_list: the instances a fetch found, valid during the callback. Handles for them are made
/// on first access, all at once, so cdm_list_objects and cdm_list_object_at agree.
final class ListEntry: HandleEntry {
    override class var kind: String { "cdm_list" }
    let objects: [ManagedObject]
    private(set) var handles: UnsafeMutablePointer<OpaquePointer?>?

    init(_ objects: [ManagedObject]) { self.objects = objects }

    func objectHandles() throws -> UnsafeMutablePointer<OpaquePointer?>? {
        if let handles = handles { return handles }
        guard let scope = scope else { throw MigrationError.misuse("the list's callback has returned") }
        handles = scope.handleArray(objects)
        return handles
    }
}

@_cdecl("cdm_list_count")
public func cdm_list_count(_ list: OpaquePointer?, _ count: UnsafeMutablePointer<Int>?) -> Int32 {
    withEntry(list, ListEntry.self, "list") { entry in
        guard let count = count else { throw MigrationError.misuse("the count pointer is NULL") }
        count.pointee = entry.objects.count
    }
}

@_cdecl("cdm_list_object_at")
public func cdm_list_object_at(_ list: OpaquePointer?, _ i: Int, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32
{
    withEntry(list, ListEntry.self, "list") { entry in
        guard let out = out else { throw MigrationError.misuse("the object pointer is NULL") }
        guard i >= 0, i < entry.objects.count else {
            throw MigrationError.notFound("index \(i) is out of range: the list has \(entry.objects.count) instances")
        }
        out.pointee = try entry.objectHandles()?[i]
    }
}

@_cdecl("cdm_list_objects")
public func cdm_list_objects(
    _ list: OpaquePointer?, _ out: UnsafeMutablePointer<UnsafePointer<OpaquePointer?>?>?,
    _ count: UnsafeMutablePointer<Int>?
) -> Int32 {
    withEntry(list, ListEntry.self, "list") { entry in
        guard let out = out else { throw MigrationError.misuse("the objects pointer is NULL") }
        let count = try required(count, "count")
        out.pointee = UnsafePointer(try entry.objectHandles())
        count.pointee = entry.objects.count
    }
}

@_cdecl("cdm_list_release")
public func cdm_list_release(_ list: OpaquePointer?) {
    let table = ThreadState.current.table
    guard let entry = table.lookup(list) as? ListEntry else { return }
    if let handles = entry.handles {
        for i in 0..<entry.objects.count {
            if let object = table.lookup(handles[i]), !ObjectRetention.isRetained(object) { table.release(object) }
        }
    }
    table.release(entry)
}
