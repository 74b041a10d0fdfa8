import CDMigrate

// Reading an existing store through its model, for tests that check what a migration wrote
// (cdm_store_open, cdm_store_model, cdm_store_fetch, cdm_store_count), and filling a new store
// from a JSON description (cdm_store_insert_json).

@_cdecl("cdm_store_open")
public func cdm_store_open(
    _ path: UnsafePointer<CChar>?, _ model: OpaquePointer?, _ out: UnsafeMutablePointer<OpaquePointer?>?
) -> Int32 {
    construct(out, StoreHandle()) { handle in
        let file = try CString.argument(path, "the store path")
        if model == nil {
            handle.store = try PersistentStore.open(at: file)
        } else {
            handle.store = try PersistentStore.open(
                at: file, model: try ModelHandle.loaded(model), readOnly: true, checkVersion: true)
        }
    }
}

@_cdecl("cdm_store_model")
public func cdm_store_model(_ store: OpaquePointer?, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    withHandle(store, StoreHandle.self, "store") { handle in
        let (_, persistent) = try StoreHandle.open(store)
        let target = try required(out, "model")
        if handle.modelHandle?.model !== persistent.model {
            let borrowed = ModelHandle()
            borrowed.model = persistent.model
            handle.modelHandle = borrowed
        }
        target.pointee = handle.modelHandle.map { OpaquePointer(Unmanaged.passUnretained($0).toOpaque()) }
    }
}

/// The request's parts checked as the context fetches check them: an unknown entity is CDM_NOTFOUND.
private func storeRequest(
    _ persistent: PersistentStore, _ entity: UnsafePointer<CChar>?, _ predicate: UnsafePointer<CChar>?,
    _ arguments: UnsafeRawPointer?, _ argumentCount: Int
) throws -> (String, String?, [Value], [String: Value]) {
    let name = try CString.argument(entity, "the entity name")
    let text = try predicate.map { try CString.argument($0, "the predicate") }
    let (args, variables) = try FieldConversion.arguments(
        arguments?.assumingMemoryBound(to: CField.self), argumentCount)
    guard persistent.model.entity(named: name) != nil else {
        throw MigrationError.notFound(
            "the store's model has no entity named '\(name)'\(SpellingSuggestion.hint(name, among: persistent.model.entities.map { $0.name }))"
        )
    }
    return (name, text, args, variables)
}

@_cdecl("cdm_store_fetch")
public func cdm_store_fetch(
    _ store: OpaquePointer?, _ entity: UnsafePointer<CChar>?, _ predicate: UnsafePointer<CChar>?,
    _ arguments: UnsafeRawPointer?, _ argumentCount: Int, _ sort: UnsafeRawPointer?, _ sortCount: Int,
    _ flags: Int32, _ limit: Int, _ out: UnsafeMutablePointer<OpaquePointer?>?
) -> Int32 {
    withHandle(store, StoreHandle.self, "store") { handle in
        let (_, persistent) = try StoreHandle.open(store)
        let target = try required(out, "list")
        target.pointee = nil
        let (name, text, args, variables) = try storeRequest(persistent, entity, predicate, arguments, argumentCount)
        let descriptors = try sortDescriptors(sort, sortCount)
        let found = try persistent.fetch(
            name, predicate: text, arguments: args, variables: variables, sortDescriptors: descriptors,
            limit: limit > 0 ? limit : nil, includesSubentities: flags & FetchFlags.excludeSubentities == 0)
        target.pointee = handle.scope.handle(ListEntry(found))
    }
}

@_cdecl("cdm_store_count")
public func cdm_store_count(
    _ store: OpaquePointer?, _ entity: UnsafePointer<CChar>?, _ predicate: UnsafePointer<CChar>?,
    _ arguments: UnsafeRawPointer?, _ argumentCount: Int, _ flags: Int32, _ out: UnsafeMutablePointer<Int>?
) -> Int32 {
    withHandle(store, StoreHandle.self, "store") { _ in
        let (_, persistent) = try StoreHandle.open(store)
        let target = try required(out, "count")
        let (name, text, args, variables) = try storeRequest(persistent, entity, predicate, arguments, argumentCount)
        target.pointee = try persistent.count(
            name, predicate: text, arguments: args, variables: variables,
            includesSubentities: flags & FetchFlags.excludeSubentities == 0)
    }
}

@_cdecl("cdm_store_insert_json")
public func cdm_store_insert_json(_ store: OpaquePointer?, _ json: UnsafePointer<CChar>?) -> Int32 {
    withHandle(store, StoreHandle.self, "store") { _ in
        let (_, persistent) = try StoreHandle.open(store)
        let seed = try StoreSeed(json: try CString.argument(json, "the JSON"))
        try seed.insert(into: persistent)
    }
}

@_cdecl("cdm_store_validate")
public func cdm_store_validate(_ store: OpaquePointer?) -> Int32 {
    withHandle(store, StoreHandle.self, "store") { _ in
        let (_, persistent) = try StoreHandle.open(store)
        try persistent.validate()
    }
}
