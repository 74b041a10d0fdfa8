#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

extension StoreInfo {
    /// Reads a store's metadata and entities as a migration reads its source: nothing is created
    /// or changed beside it (a plain read-only open of a WAL store would create its `-shm` and
    /// `-wal`); committed transactions still in its `-wal` are read from a private snapshot in the
    /// temporary folder (`TMPDIR`, else `/tmp`), removed afterwards.
    ///
    /// Core Data counterpart: `NSPersistentStoreCoordinator.metadataForPersistentStore(ofType:at:options:)`.
    /// - Parameters:
    ///   - path: the store's main file.
    ///   - countingRows: whether to count each entity's rows (`read(at:uri:countingRows:)`).
    /// - Throws: `MigrationError` as `read(at:uri:)`, and `.migrationManagerSourceStore` when the
    ///   store is busy in another process in a way that cannot be read consistently.
    public static func readSource(at path: String, countingRows: Bool = true) throws -> StoreInfo {
        guard FileIO.exists(path) else { throw MigrationError(.io, "cannot open the store '\(path)': no such file") }
        let access = try SourceAccess.prepare(source: path, scratchBeside: SourceAccess.temporaryScratch)
        defer { access.removeSnapshot() }
        return try read(at: path, uri: access.uri, countingRows: countingRows)
    }
}
