import CDMigrate

/// An entity's version hash through the C API (Core Data: `NSEntityDescription.versionHash`, the
/// values of `NSManagedObjectModel.entityVersionHashesByName`).
@_cdecl("cdm_model_entity_version_hash")
public func cdm_model_entity_version_hash(
    _ model: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ hash: UnsafeMutablePointer<UnsafePointer<UInt8>?>?,
    _ length: UnsafeMutablePointer<Int>?
) -> Int32 {
    guarded(nil) {
        let loaded = try ModelHandle.loaded(model)
        let handle = try ModelHandle.required(model, "model")
        let entityName = try CString.argument(name, "the entity name")
        let hashOut = try required(hash, "hash")
        let lengthOut = try required(length, "length")
        guard let entity = loaded.entity(named: entityName), let bytes = handle.entityVersionHashes[entityName] else {
            throw MigrationError.notFound("the model has no entity named '\(entityName)'")
        }
        hashOut.pointee = UnsafePointer(bytes.baseAddress)
        lengthOut.pointee = entity.versionHash.count
    }
}
