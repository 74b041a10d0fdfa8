/// Seed stores: created as a migration creates its destination, holding the instances a
/// `StoreSeed` describes, and checked as Core Data's save checks the instances it writes.
extension PersistentStore {
    /// Creates a store for `model` exactly as a migration writes its destination — Core Data's
    /// metadata with the model's version hashes and identifiers, `Z_PRIMARYKEY`, the model cache
    /// (`Z_MODELCACHE`), WAL journal mode — holding the instances `seed` describes, saved.
    ///
    /// - Parameters:
    ///   - path: where the store goes; the file must not exist.
    ///   - model: the model version the store is written with.
    ///   - seed: the instances to put in it (`StoreSeed.empty` for none).
    ///   - validates: whether the store is checked as Core Data's save would check it (`validate()`);
    ///     false lets a test seed the damaged data real devices hold (a required value missing).
    /// - Returns: the open store (writable; close it, or insert more and `save()`).
    /// - Throws: `MigrationError` `.io` when the file exists or cannot be written, `.invalidModel`
    ///   for a model whose cache cannot be written, what `StoreSeed.insert(into:)` and
    ///   `validate()` throw (the file is then removed).
    ///
    /// Core Data counterpart: `NSPersistentStoreCoordinator.addPersistentStore(ofType:…)` on a new
    /// file, inserting instances into a context, and `save()`.
    public static func create(at path: String, model: ManagedObjectModel, seed: StoreSeed, validates: Bool = true)
        throws -> PersistentStore
    {
        var options = CreateOptions()
        options.modelCache = try StoreModelCache.compressedArchive(of: model)
        let store = try create(at: path, model: model, options: options)
        do {
            try seed.insert(into: store)
            try store.save()
            if validates { try store.validate() }
        } catch {
            store.close()
            for file in [path, path + "-wal", path + "-shm"] { FileIO.remove(file) }
            throw error
        }
        return store
    }

    /// Checks every instance of the store against its model, as Core Data validates instances
    /// when a context saves and as a migration checks its destination: required attributes and
    /// relationships present, to-many counts within their bounds, numbers within their type's
    /// size and their minimum and maximum. Unsaved changes are written first (not committed).
    ///
    /// - Throws: `MigrationError` with Core Data's validation code — one failure as itself
    ///   (`.validationMissingMandatoryProperty`, `.validationRelationshipLacksMinimumCount`, …,
    ///   naming the instance and the property), several as one `.validationMultipleErrors` whose
    ///   `underlying` errors are the individual ones; `.sqlite` when the store cannot be read.
    ///
    /// Core Data counterpart: the validation `NSManagedObjectContext.save()` runs
    /// (`NSManagedObject.validateForInsert()` on each instance).
    public func validate() throws {
        try checkOpen()
        try DestinationValidation(store: self).validate()
    }
}
