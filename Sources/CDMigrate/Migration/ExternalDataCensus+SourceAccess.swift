#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

extension ExternalDataCensus {
    /// Counts a store's external binary data as a migration reads its source: nothing is created
    /// or changed beside it (see `StoreInfo(contentsOf:)`).
    /// - Parameter path: the store's main file.
    /// - Throws: `MigrationError` as `read(at:uri:)`, and `.migrationManagerSourceStore` when the
    ///   store is busy in another process in a way that cannot be read consistently.
    package static func readSource(at path: String) throws -> ExternalDataCensus {
        let scratch =
            (getenv("TMPDIR").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp")
            + "/cdmigrate-census"
        let access = try SourceAccess.prepare(source: path, scratchBeside: scratch)
        defer { access.removeSnapshot() }
        return try read(at: path, uri: access.uri)
    }
}
