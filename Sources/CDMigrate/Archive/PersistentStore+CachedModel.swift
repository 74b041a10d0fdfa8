/// Stores with the model they keep of themselves (`Z_MODELCACHE`, `StoreModelCache`), opened
/// through it without the app's model.
extension PersistentStore {
    /// Opens an existing store read-only through the model cached in it (`Z_MODELCACHE`, which
    /// Core Data writes into every store it creates or migrates since macOS 10.12 and iOS 10, and
    /// cdmigrate into every store it writes), so that a test can read a store a migration made
    /// without loading the model files: `fetch` its instances, follow their relationships.
    ///
    /// The store's version hashes are checked against the cached model; a WAL store's committed
    /// transactions are read; nothing is written, and `-wal`/`-shm` files SQLite makes beside a
    /// store that had none are removed when it closes.
    ///
    /// - Parameter path: the SQLite store.
    /// - Returns: the open store; its `model` is the cached one.
    /// - Throws: `MigrationError` `.io` when there is no such file, `.sqlite` when it is not an
    ///   SQLite database, `.migrationMissingSourceModel` when the store keeps no model (an empty
    ///   cache, as in stores written before macOS 10.12: open it with `open(at:model:)`, or with
    ///   `ManagedObjectModel(ofStoreAt:)`'s model rebuilt from its schema), `.invalidModel` for
    ///   a damaged cache, `.incompatibleVersionHash` when the store is not a Core Data store or its
    ///   version hashes are not the cached model's.
    ///
    /// Core Data counterpart: `NSPersistentContainer(name:managedObjectModel:)` with
    /// `NSReadOnlyPersistentStoreOption`, the model being the store's own
    /// (`NSManagedObjectModel.mergedModel(from:forStoreMetadata:)` finds it among the app's).
    public static func open(at path: String) throws -> PersistentStore {
        guard FileIO.exists(path) else {
            throw MigrationError(.io, "cannot open the store '\(path)': no such file")
        }
        let missingCompanions = ["-wal", "-shm"].map { path + $0 }.filter { !FileIO.exists($0) }
        let cached: ManagedObjectModel?
        do {
            let database = try SQLiteDatabase(path: path, mode: .readOnly)
            defer { database.close() }
            guard try database.tableExists("Z_METADATA") else {
                throw MigrationError(
                    .incompatibleVersionHash, "'\(path)' is not a Core Data SQLite store: it has no Z_METADATA table")
            }
            cached = try StoreModelCache.model(from: database)
        } catch {
            tidyCompanions(missingCompanions)
            throw error
        }
        tidyCompanions(missingCompanions)
        guard let model = cached else {
            throw MigrationError(
                .migrationMissingSourceModel,
                "the store '\(path)' keeps no model of itself (its model cache, Z_MODELCACHE, is empty, as in stores written before macOS 10.12 and iOS 10): open it with its model, or with the model rebuilt from its schema (cdm_model_from_store, Model.from_store)"
            )
        }
        return try open(at: path, model: model, readOnly: true, checkVersion: true)
    }
}
