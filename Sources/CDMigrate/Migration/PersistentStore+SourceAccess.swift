extension PersistentStore {
    /// Opens the store at `path` read-only as a migration reads its source (`SourceAccess`):
    /// nothing is created or changed beside it, committed transactions in its `-wal` are read
    /// (from a private snapshot in the temporary folder), a symbolic link is followed and anything
    /// but a regular file refused; runs `body` with it inside one read transaction, then closes it.
    ///
    /// - Throws: `.migrationManagerSourceStore` for a store that is not a regular file or is busy
    ///   in a way that cannot be read consistently; `open(at:model:)`'s errors; what `body` throws.
    package static func withSourceStore<T>(
        at path: String, model: ManagedObjectModel, checkVersion: Bool,
        _ body: (PersistentStore) throws -> T
    ) throws -> T {
        guard FileIO.exists(path) else { throw MigrationError(.io, "cannot open the store '\(path)': no such file") }
        let access = try SourceAccess.prepare(source: path, scratchBeside: SourceAccess.temporaryScratch)
        defer { access.removeSnapshot() }
        let store = try openSource(at: path, uri: access.uri, model: model, checkVersion: checkVersion)
        defer { store.close() }
        return try body(store)
    }
}
