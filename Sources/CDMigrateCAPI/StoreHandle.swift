import CDMigrate

/// cdm_store: a store a host fills (source stores for tests and generators). Its instances are
/// short-lived handles in the store's own scope, freed when the store closes.
final class StoreHandle: LongLivedHandle {
    override class var kind: String { "cdm_store" }
    var store: PersistentStore?
    /// The borrowed cdm_model cdm_store_model lends (the store's model), made on first request.
    var modelHandle: ModelHandle?
    private(set) lazy var scope: Scope = ThreadState.current.openScope(sink: self)

    func close() {
        store?.close()
        store = nil
        scope.table.close(scope)
    }

    static func open(_ pointer: OpaquePointer?) throws -> (StoreHandle, PersistentStore) {
        let handle = try required(pointer, "store")
        guard let store = handle.store else { throw MigrationError.misuse("the store handle holds no open store") }
        return (handle, store)
    }
}

@_cdecl("cdm_store_create")
public func cdm_store_create(
    _ model: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<OpaquePointer?>?
) -> Int32 {
    construct(out, StoreHandle()) { handle in
        let loaded = try ModelHandle.loaded(model)
        var options = PersistentStore.CreateOptions()
        options.modelCache = try StoreModelCache.compressedArchive(of: loaded)
        handle.store = try PersistentStore.create(
            at: try CString.argument(path, "the store path"), model: loaded, options: options)
    }
}

@_cdecl("cdm_store_insert")
public func cdm_store_insert(
    _ store: OpaquePointer?, _ entity: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<OpaquePointer?>?
) -> Int32 {
    withHandle(store, StoreHandle.self, "store") { handle in
        guard let persistent = handle.store else { throw MigrationError.misuse("the store handle holds no open store") }
        guard let out = out else { throw MigrationError.misuse("the out pointer is NULL") }
        let name = try CString.argument(entity, "the entity name")
        guard persistent.model.entity(named: name) != nil else {
            throw MigrationError.notFound("the store's model has no entity named '\(name)'")
        }
        out.pointee = handle.scope.handle(for: try persistent.insertObject(entityName: name))
    }
}

@_cdecl("cdm_store_save")
public func cdm_store_save(_ store: OpaquePointer?) -> Int32 {
    withHandle(store, StoreHandle.self, "store") { handle in
        guard let persistent = handle.store else { throw MigrationError.misuse("the store handle holds no open store") }
        try persistent.save()
    }
}

@_cdecl("cdm_store_close")
public func cdm_store_close(_ store: OpaquePointer?) {
    guard store != nil else { return }
    do { try StoreHandle.required(store, "store").close() } catch {
        recordError(error, nil)
        return
    }
    StoreHandle.release(store, "store")
}

@_cdecl("cdm_store_errcode")
public func cdm_store_errcode(_ store: OpaquePointer?) -> Int32 { StoreHandle.unretained(store)?.errcode ?? 101 }
@_cdecl("cdm_store_errmsg")
public func cdm_store_errmsg(_ store: OpaquePointer?) -> UnsafePointer<CChar> {
    StoreHandle.unretained(store)?.errmsg ?? CString.interned("the store handle is NULL or not a live cdm_store")
}
@_cdecl("cdm_store_error")
public func cdm_store_error(_ store: OpaquePointer?) -> OpaquePointer? {
    StoreHandle.unretained(store)?.lastError?.pointer
}
