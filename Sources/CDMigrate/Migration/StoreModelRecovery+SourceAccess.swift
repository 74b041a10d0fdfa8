extension ManagedObjectModel {
    /// The store's own model: its cache when it has one (`StoreModelCache`), else rebuilt from its schema.
    ///
    /// The store is read as a migration reads its source (`SourceAccess`): nothing is created or
    /// changed beside it — no `-wal` or `-shm` beside a WAL store, and a store in a read-only
    /// folder reads — and committed transactions still in its `-wal` are read (from a private
    /// snapshot in the temporary folder, `TMPDIR`, else `/tmp`, removed afterwards).
    ///
    /// - Parameter path: the SQLite store (a symbolic link is followed).
    /// - Returns: the model; `isRecovered` tells whether it was rebuilt.
    /// - Throws: `MigrationError` `.io` when there is no file at `path`, `.migrationManagerSourceStore`
    ///   when it is not a regular file or is busy in a way that cannot be read consistently,
    ///   `.sqlite` when the store cannot be read, `.invalidModel` when its cache is damaged or the
    ///   schema is not a Core Data store's.
    ///
    /// Core Data counterpart: none; Core Data needs the model (NSManagedObjectModel.mergedModel(from:forStoreMetadata:)).
    public convenience init(ofStoreAt path: String) throws {
        self.init(adopting: try StoreModelRecovery.storeModel(at: path))
    }
}

extension StoreModelRecovery {
    /// What `ManagedObjectModel(ofStoreAt:)` reads.
    package static func storeModel(at path: String) throws -> ManagedObjectModel {
        guard FileIO.exists(path) else { throw MigrationError(.io, "cannot open the store '\(path)': no such file") }
        let access = try SourceAccess.prepare(source: path, scratchBeside: SourceAccess.temporaryScratch)
        defer { access.removeSnapshot() }
        let database = try SQLiteDatabase(path: path, mode: .readOnly, uri: access.uri)
        defer { database.close() }
        try database.begin()  // one snapshot for every read
        if let cached = try StoreModelCache.model(from: database) { return cached }
        return try model(from: database)
    }
}
