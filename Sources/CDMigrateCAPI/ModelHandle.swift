import CDMigrate

/// cdm_model: a data model, or the errors of one that failed to load.
final class ModelHandle: LongLivedHandle {
    override class var kind: String { "cdm_model" }
    var model: ManagedObjectModel? {
        didSet { makeEntityVersionHashes() }
    }
    /// C strings of entity names, made on first request (models are shared read-only, so made once).
    private(set) lazy var entityNames: [UnsafeMutablePointer<CChar>] = (model?.entities ?? []).map {
        CString.copy($0.name)
    }

    /// Each entity's version hash as bytes the host may read (cdm_model_entity_version_hash), made
    /// when the model is set, so that threads sharing the handle only read them.
    private(set) var entityVersionHashes: [String: UnsafeMutableBufferPointer<UInt8>] = [:]

    private func makeEntityVersionHashes() {
        for buffer in entityVersionHashes.values { buffer.deallocate() }
        entityVersionHashes = [:]
        for entity in model?.entities ?? [] {
            let buffer = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: max(1, entity.versionHash.count))
            _ = buffer.initialize(from: entity.versionHash)
            entityVersionHashes[entity.name] = buffer
        }
    }

    deinit {
        for name in entityNames { name.deallocate() }
        for buffer in entityVersionHashes.values { buffer.deallocate() }
    }

    static func loaded(_ pointer: OpaquePointer?, _ what: String = "model") throws -> ManagedObjectModel {
        let handle = try required(pointer, what)
        guard let model = handle.model else {
            throw MigrationError.misuse("the \(what) handle holds a model that failed to load")
        }
        return model
    }
}

@_cdecl("cdm_model_from_json")
public func cdm_model_from_json(_ json: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    construct(out, ModelHandle()) {
        $0.model = try ManagedObjectModel(json: try CString.argument(json, "the model JSON"))
    }
}

@_cdecl("cdm_model_from_file")
public func cdm_model_from_file(_ path: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    construct(out, ModelHandle()) {
        $0.model = try ManagedObjectModel(contentsOf: try CString.argument(path, "the model path"))
    }
}

@_cdecl("cdm_model_from_store")
public func cdm_model_from_store(_ path: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    construct(out, ModelHandle()) { handle in
        let store = try CString.argument(path, "the store path")
        handle.model = try ManagedObjectModel(ofStoreAt: store)
    }
}

@_cdecl("cdm_model_warnings_json")
public func cdm_model_warnings_json(
    _ model: OpaquePointer?, _ json: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
) -> Int32 {
    guarded(nil) {
        let loaded = try ModelHandle.loaded(model)
        let out = try required(json, "json")
        let notes = loaded.warnings + (loaded.recoveryNotes ?? [])
        out.pointee = CString.copy(JSON.array(notes.map { .string($0) }).serialized())
    }
}

@_cdecl("cdm_model_free")
public func cdm_model_free(_ model: OpaquePointer?) { ModelHandle.release(model, "model") }

@_cdecl("cdm_model_errcode")
public func cdm_model_errcode(_ model: OpaquePointer?) -> Int32 { ModelHandle.unretained(model)?.errcode ?? 101 }
@_cdecl("cdm_model_errmsg")
public func cdm_model_errmsg(_ model: OpaquePointer?) -> UnsafePointer<CChar> {
    ModelHandle.unretained(model)?.errmsg ?? CString.interned("the model handle is NULL or not a live cdm_model")
}
@_cdecl("cdm_model_error")
public func cdm_model_error(_ model: OpaquePointer?) -> OpaquePointer? {
    ModelHandle.unretained(model)?.lastError?.pointer
}

// Lookups never record on the model (it may be shared by threads): only the thread's last error.

@_cdecl("cdm_model_entity_count")
public func cdm_model_entity_count(_ model: OpaquePointer?, _ count: UnsafeMutablePointer<Int>?) -> Int32 {
    guarded(nil) {
        let loaded = try ModelHandle.loaded(model)
        try required(count, "count").pointee = loaded.entities.count
    }
}

@_cdecl("cdm_model_entity_at")
public func cdm_model_entity_at(_ model: OpaquePointer?, _ i: Int, _ name: UnsafeMutablePointer<UnsafePointer<CChar>?>?)
    -> Int32
{
    guarded(nil) {
        let handle = try ModelHandle.required(model, "model")
        _ = try ModelHandle.loaded(model)
        let out = try required(name, "name")
        let names = handle.entityNames
        guard i >= 0, i < names.count else {
            throw MigrationError.notFound("entity index \(i) is out of range: the model has \(names.count) entities")
        }
        out.pointee = UnsafePointer(names[i])
    }
}

private func attribute(_ model: OpaquePointer?, _ entity: UnsafePointer<CChar>?, _ attribute: UnsafePointer<CChar>?)
    throws -> AttributeDescription
{
    let loaded = try ModelHandle.loaded(model)
    let entityName = try CString.argument(entity, "the entity name")
    let attributeName = try CString.argument(attribute, "the attribute name")
    guard let description = loaded.entity(named: entityName) else {
        throw MigrationError.notFound("the model has no entity named '\(entityName)'")
    }
    guard let found = description.attribute(named: attributeName) else {
        throw MigrationError.notFound("entity '\(entityName)' has no attribute '\(attributeName)'")
    }
    return found
}

@_cdecl("cdm_model_attribute_index")
public func cdm_model_attribute_index(
    _ model: OpaquePointer?, _ entity: UnsafePointer<CChar>?, _ name: UnsafePointer<CChar>?,
    _ index: UnsafeMutablePointer<Int32>?
) -> Int32 {
    guarded(nil) {
        _ = try ModelHandle.loaded(model)
        let out = try required(index, "index")
        out.pointee = Int32(try attribute(model, entity, name).index)
    }
}

@_cdecl("cdm_model_attribute_type")
public func cdm_model_attribute_type(
    _ model: OpaquePointer?, _ entity: UnsafePointer<CChar>?, _ name: UnsafePointer<CChar>?,
    _ type: UnsafeMutablePointer<Int32>?
) -> Int32 {
    guarded(nil) {
        _ = try ModelHandle.loaded(model)
        let out = try required(type, "type")
        out.pointee = Int32(try attribute(model, entity, name).attributeType.coreDataCode)
    }
}
