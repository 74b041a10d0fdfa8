/// The model a Core Data SQLite store keeps of itself: table `Z_MODELCACHE`, one row whose
/// `Z_CONTENT` is the keyed archive of the store's NSManagedObjectModel, compressed as raw
/// DEFLATE (no zlib header, no length prefix: the blob is the stream).
///
/// Read with `model(fromStoreAt:)`; written (`CompiledModelWriter`, then `Deflate` at Apple's
/// level 5) with `compressedArchive(of:)` into every store a migration creates.
///
/// Core Data writes the cache with every store it creates or migrates (macOS 10.12, iOS 10 and
/// later) and reads it back when no model in the app's bundles matches the store. Older stores
/// have the table but an empty cache; `StoreModelRecovery` rebuilds a model from their schema.
package enum StoreModelCache {
    /// The default cap on the inflated archive: 64 MiB, far above any real model (Apple's
    /// caches inflate to kilobytes).
    package static let defaultLimit = 64 << 20

    /// Reads the cached model of a store.
    ///
    /// - Parameters:
    ///   - path: the SQLite store (opened read-only).
    ///   - limit: the most bytes the inflated archive may have (a guard against decompression bombs).
    /// - Returns: the model, or nil when the store has no cache (no `Z_MODELCACHE` table, no row,
    ///   or an empty blob).
    /// - Throws: `MigrationError` `.sqlite` when the store cannot be read, `.invalidModel` when
    ///   the cache cannot be inflated or decoded, or exceeds `limit`.
    ///
    /// Core Data counterpart: none public; Core Data reads the cache itself when migrating a store
    /// whose source model is not in any bundle.
    package static func model(fromStoreAt path: String, limit: Int = defaultLimit) throws -> ManagedObjectModel? {
        let database = try SQLiteDatabase(path: path, mode: .readOnly)
        defer { database.close() }
        return try model(from: database, limit: limit)
    }

    /// The cached model of an open store, nil when it has none.
    package static func model(from database: SQLiteDatabase, limit: Int = defaultLimit) throws -> ManagedObjectModel? {
        guard let bytes = try compressedArchive(in: database) else { return nil }
        let what = "the model cache (Z_MODELCACHE.Z_CONTENT) of store '\(database.path)'"
        let archive = try Inflate.inflate(bytes, limit: limit, code: .invalidModel, what: what)
        return try CompiledModelReader.model(fromArchive: archive, name: nil, what: what)
    }

    /// The raw (still compressed) cache, nil when there is none.
    package static func compressedArchive(in database: SQLiteDatabase) throws -> [UInt8]? {
        guard try database.tableExists("Z_MODELCACHE") else { return nil }
        let columns = try database.columns(ofTable: "Z_MODELCACHE")
        guard
            let column = columns.first(where: { $0.uppercased() == "Z_CONTENT" })
                ?? columns.first(where: { $0.uppercased() == "ZCONTENT" })
        else {
            throw MigrationError(
                .invalidModel,
                "the Z_MODELCACHE table of store '\(database.path)' has no Z_CONTENT column (it has \(columns.joined(separator: ", ")))"
            )
        }
        for row in try database.rows("SELECT \(SQLiteDatabase.quote(column)) FROM Z_MODELCACHE") {
            guard let value = row.first else { continue }
            switch value {
            case .null: continue
            case .blob(let bytes) where bytes.isEmpty: continue
            case .blob(let bytes): return bytes
            default:
                throw MigrationError(.invalidModel, "the model cache of store '\(database.path)' is not a blob")
            }
        }
        return nil
    }

    // MARK: Writing

    /// The cache Core Data would write for `model`: its keyed archive, deflated; nil when the
    /// archive would not read back as a model of the same version (a derived attribute with a
    /// filtering predicate or an expression `ArchivedExpressionWriter` does not write, or version
    /// hashes written in the model file that differ from Core Data's): such a store gets no cache
    /// rather than a wrong one.
    ///
    /// - Parameter model: the store's model.
    /// - Returns: the `Z_CONTENT` blob (raw DEFLATE of a `bplist00` keyed archive), or nil.
    /// - Throws: `MigrationError` `.invalidModel` for a model that does not link, `.io` when zlib fails.
    ///
    /// Core Data counterpart: none public; Core Data deflates `NSKeyedArchiver.archivedData(withRootObject:)`
    /// of the store's model with `COMPRESSION_ZLIB`.
    package static func compressedArchive(of model: ManagedObjectModel) throws -> [UInt8]? {
        let archive = try CompiledModelWriter.archive(model)
        // Checked by decoding: the cache is the store's version, or there is none.
        guard
            let back = try? CompiledModelReader.model(
                fromArchive: archive, name: model.name, what: "the model cache being written"),
            back.entityVersionHashes == model.entityVersionHashes
        else { return nil }
        return try Deflate.deflate(
            archive, what: "the model cache of \(model.name.map { "model '\($0)'" } ?? "the model")")
    }

    /// Writes `model` as the cache of an open, writable store (replacing what it held; emptying it
    /// when `compressedArchive(of:)` gives none), in the store's transaction: its next `save()` commits it.
    ///
    /// - Throws: what `compressedArchive(of:)` and `PersistentStore.writeModelCache(_:)` throw.
    package static func write(_ model: ManagedObjectModel, to store: PersistentStore) throws {
        try store.writeModelCache(try compressedArchive(of: model) ?? [])
    }
}
