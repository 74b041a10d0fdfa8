/// The store's model cache (`Z_MODELCACHE`): the compressed archive of its model that Core Data
/// keeps in every store it creates and reads when no bundled model matches the store
/// (`StoreModelCache` in Archive/ writes and reads the archive itself).
extension PersistentStore {
    /// Replaces the store's model cache with `compressedArchive` (one row; an empty array empties
    /// the cache), in the store's open transaction.
    ///
    /// - Throws: `MigrationError` `.invalidArgument` for a closed or read-only store, `.sqlite` when
    ///   the row cannot be written.
    ///
    /// Core Data counterpart: none public; Core Data writes the cache when it creates the store's schema.
    package func writeModelCache(_ compressedArchive: [UInt8]) throws {
        try checkWritable("write its model cache")
        try beginIfNeeded()
        try database.exec("DELETE FROM Z_MODELCACHE")
        guard !compressedArchive.isEmpty else { return }
        try database.run("INSERT INTO Z_MODELCACHE (Z_CONTENT) VALUES (?)", [.binary(compressedArchive)])
    }
}
