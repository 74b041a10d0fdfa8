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
    ///   - countingRows: whether to count each entity's rows, which reads every table whole;
    ///     reading only the metadata and `Z_PRIMARYKEY` takes milliseconds whatever the store's size.
    /// - Throws: `MigrationError` `.io` when the file is missing or unreadable,
    ///   `.incompatibleVersionHash` (134100) when it is not a Core Data SQLite store,
    ///   `.migrationManagerSourceStore` when its metadata is malformed or the store is busy in
    ///   another process in a way that cannot be read consistently.
    public init(contentsOf path: String, countingRows: Bool = true) throws {
        guard FileIO.exists(path) else { throw MigrationError(.io, "cannot open the store '\(path)': no such file") }
        let access = try SourceAccess.prepare(source: path, scratchBeside: SourceAccess.temporaryScratch)
        defer { access.removeSnapshot() }
        self = try StoreInfo.read(at: path, uri: access.uri, countingRows: countingRows)
    }
}
