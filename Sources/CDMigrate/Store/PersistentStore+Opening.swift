#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Creating and opening stores: schema, version-hash checks, companion files, closing.
extension PersistentStore {
    // MARK: Creating and opening

    /// Creates a new store for `model` (tables, indexes, bookkeeping rows); the file must not exist.
    public static func create(at path: String, model: ManagedObjectModel, options: CreateOptions = .init()) throws
        -> PersistentStore
    {
        if FileIO.exists(path) && !(options.adoptsEmptyFile && FileIO.size(path) == 0) {
            throw MigrationError(.io, "cannot create a store at '\(path)': the file already exists")
        }
        let uuid = options.storeUUID ?? randomUUID()
        let database = try SQLiteDatabase(path: path, mode: .create)
        let layout = StoreLayout(model: model)
        let metadata = options.metadata ?? StoreMetadata(storeUUID: uuid, model: model)
        do {
            // Before any table: Core Data's stores are incremental (2), as `_NSAutoVacuumLevel` says.
            try database.exec("PRAGMA auto_vacuum = \(metadata.autoVacuumLevel)")
            if options.privateFile {
                try database.exec("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF")
            } else {
                // Core Data's own stores are in WAL mode.
                try database.exec("PRAGMA journal_mode = WAL")
            }
            try database.begin()
            for statement in layout.createStatements { try database.exec(statement) }
            let store = PersistentStore(
                model: model, path: path, readOnly: false, database: database, layout: layout,
                metadata: metadata, warnings: [], isNew: true)
            try store.writeBookkeeping()
            if let cache = options.modelCache { try store.writeModelCache(cache) }
            try database.commit()
            return store
        } catch {
            try? database.rollback()
            database.close()
            FileIO.remove(path)
            FileIO.remove(path + "-wal")
            FileIO.remove(path + "-shm")
            throw error
        }
    }

    /// Opens an existing store with the model it was written with. A read-only store is opened
    /// through its WAL (SQLite reads `-wal` beside it) and is never written.
    /// `checkVersion` compares the store's version hashes with the model's.
    public static func open(
        at path: String, model: ManagedObjectModel, readOnly: Bool = true, checkVersion: Bool = true
    ) throws -> PersistentStore {
        return try open(at: path, model: model, readOnly: readOnly, checkVersion: checkVersion, uri: nil)
    }

    /// Opens a store read-only through a `file:` URI (see `SourceAccess`) inside one read
    /// transaction, begun before the first read so that everything read is one snapshot; it
    /// stays open until the store closes. Nothing beside the file is tidied (SQLite created nothing).
    static func openSource(at path: String, uri: String, model: ManagedObjectModel, checkVersion: Bool) throws
        -> PersistentStore
    {
        return try open(at: path, model: model, readOnly: true, checkVersion: checkVersion, uri: uri)
    }

    static func open(at path: String, model: ManagedObjectModel, readOnly: Bool, checkVersion: Bool, uri: String?)
        throws -> PersistentStore
    {
        guard FileIO.exists(path) else {
            throw MigrationError(.io, "cannot open the store '\(path)': no such file")
        }
        // SQLite would block reading a FIFO: told by stat, without opening the store.
        var info = stat()
        if stat(path, &info) == 0, info.st_mode & S_IFMT != S_IFREG {
            throw MigrationError(
                .io,
                "cannot open the store '\(path)': it is \(FileIO.fileTypeName(info.st_mode & S_IFMT)), not a regular file"
            )
        }
        let missingCompanions =
            readOnly && uri == nil ? ["-wal", "-shm"].map { path + $0 }.filter { !FileIO.exists($0) } : []
        let database = try SQLiteDatabase(path: path, mode: readOnly ? .readOnly : .readWrite, uri: uri)
        do {
            do {
                if uri != nil { try database.begin() }
                _ = try database.scalar("SELECT COUNT(*) FROM sqlite_master")
            } catch let error as MigrationError {
                throw explainOpenFailure(error, path: path, readOnly: readOnly)
            }
            guard try database.tableExists("Z_METADATA") else {
                throw MigrationError(
                    .incompatibleVersionHash, "'\(path)' is not a Core Data SQLite store: it has no Z_METADATA table")
            }
            let rows = try database.rows("SELECT Z_UUID, Z_PLIST FROM Z_METADATA ORDER BY Z_VERSION LIMIT 1")
            guard let row = rows.first, row.count == 2 else {
                throw MigrationError(
                    .incompatibleVersionHash,
                    "'\(path)' is not a usable Core Data SQLite store: its Z_METADATA table is empty")
            }
            let uuid = row[0].text ?? ""
            let plist = row[1].bytes ?? []
            var warnings: [String] = []
            var metadata: StoreMetadata
            do {
                metadata = try StoreMetadata(storeUUID: uuid, plist: plist)
            } catch let error as MigrationError {
                if checkVersion {
                    throw MigrationError(
                        .incompatibleVersionHash,
                        "cannot read the metadata (Z_METADATA.Z_PLIST) of the store '\(path)' to check its version: \(error.message)"
                    )
                }
                warnings.append(
                    "the metadata of the store '\(path)' is unreadable (\(error.message)); opened unchecked with model \(describe(model))"
                )
                metadata = StoreMetadata(storeUUID: uuid, model: model)
                metadata.versionHashes = [:]
                metadata.versionIdentifiers = []
                metadata.otherEntries = []
                metadata.isEmpty = true
            }
            if checkVersion {
                if metadata.isEmpty {
                    warnings.append(
                        "the store '\(path)' has no version metadata (empty Z_PLIST): its version cannot be checked; opened with model \(describe(model))"
                    )
                } else {
                    try checkVersionHashes(metadata, model: model, path: path)
                }
            }
            let layout = try StoreLayout.read(from: database, model: model)
            warnings += layout.warnings
            let store = PersistentStore(
                model: model, path: path, readOnly: readOnly, database: database, layout: layout,
                metadata: metadata, warnings: warnings, isNew: false)
            store.companionsToTidy = missingCompanions
            try store.loadMaxPrimaryKeys()
            return store
        } catch {
            database.close()
            tidyCompanions(missingCompanions)
            throw error
        }
    }

    /// Removes the `-wal` and `-shm` a read-only open made, when both were new and the log is empty.
    static func tidyCompanions(_ created: [String]) {
        guard created.count == 2, FileIO.exists(created[0]), FileIO.size(created[0]) == 0 else { return }
        for file in created { FileIO.remove(file) }
    }

    static func describe(_ model: ManagedObjectModel) -> String {
        var text = model.name.map { "'\($0)'" } ?? "(unnamed)"
        if let v = model.versionIdentifier, !v.isEmpty { text += " version '\(v)'" }
        return text
    }

    /// NSPersistentStoreIncompatibleVersionHashError, naming both versions and, per entity that
    /// differs, the store's hash and the model's.
    static func checkVersionHashes(_ metadata: StoreMetadata, model: ManagedObjectModel, path: String) throws {
        let differences = model.versionDifferences(fromStoreMetadata: metadata)
        guard !differences.isEmpty else { return }
        if metadata.versionHashes.isEmpty {
            // Said once, rather than every entity "not in the store".
            throw MigrationError(
                .incompatibleVersionHash,
                "the store '\(path)' records no entity version hashes (NSStoreModelVersionHashes), so it is at no model's version, not model \(describe(model))'s"
            )
        }
        let storeVersion = metadata.versionIdentifiers.filter { !$0.isEmpty }
        let storeText =
            storeVersion.isEmpty
            ? "a model version with no identifier"
            : "model version \(storeVersion.map { "'\($0)'" }.joined(separator: ", "))"
        throw MigrationError(
            .incompatibleVersionHash,
            "the store '\(path)' was written with \(storeText), which is not model \(describe(model)): \(differences.map { $0.description }.joined(separator: "; "))"
        )
    }

    /// A read-only WAL store needs its `-shm` file: say so when SQLite could not make one.
    static func explainOpenFailure(_ error: MigrationError, path: String, readOnly: Bool) -> MigrationError {
        if readOnly, !isWALFile(path), (FileIO.size(path + "-journal") ?? 0) > 0 {
            var explained = error
            explained.message +=
                ". '\(path)-journal' is a hot rollback journal (a writer stopped in the middle of a transaction), which a read-only connection cannot roll back; open the store once read-write with SQLite to roll it back"
            return explained
        }
        guard readOnly, isWALFile(path) else { return error }
        var message = error.message
        message +=
            ". The store is in WAL mode: reading it needs its '-shm' file beside it, which SQLite must be able to create or open"
        message += FileIO.exists(path + "-shm") ? "" : " ('\(path)-shm' is missing and its folder may not be writable)"
        message += "; copy the store together with its -wal and -shm files to a writable folder and open the copy"
        var explained = error
        explained.message = message
        return explained
    }

    /// Header bytes 18–19 are 2, 2 in WAL mode.
    static func isWALFile(_ path: String) -> Bool {
        guard let file = fopen(path, "rb") else { return false }
        defer { fclose(file) }
        var header = [UInt8](repeating: 0, count: 20)
        guard fread(&header, 1, 20, file) == 20 else { return false }
        return header[18] == 2 && header[19] == 2
    }

    static func randomUUID() -> String {
        var generator = SystemRandomNumberGenerator()
        var bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        bytes[6] = bytes[6] & 0x0F | 0x40  // version 4
        bytes[8] = bytes[8] & 0x3F | 0x80  // RFC 4122 variant
        return Value.uuidString(bytes)
    }

    func loadMaxPrimaryKeys() throws {
        var recorded: [Int: Int64] = [:]
        for row in try database.rows("SELECT Z_ENT, Z_MAX FROM Z_PRIMARYKEY") {
            if row.count == 2, let n = row[0].integer { recorded[Int(n)] = row[1].integer ?? 0 }
        }
        for root in model.entities where root.parent == nil {
            let table = layout.table(for: root)
            var highest = recorded[layout.entityNumber(of: root)] ?? 0
            for sub in root.selfAndDescendants { highest = max(highest, recorded[layout.entityNumber(of: sub)] ?? 0) }
            let inTable = try database.scalar("SELECT MAX(Z_PK) FROM \(table)")?.integer ?? 0
            keyCounter(for: table).last = max(highest, inTable)
        }
    }

    /// Closes the store; changes not saved are rolled back. Harmless when already closed.
    public func close() {
        guard !isClosed else { return }
        isClosed = true
        for row in pending { row.object.isBufferedInsert = false }
        pending.removeAll()
        pendingIndex.removeAll()
        insertPlans.removeAll()
        joinInserts.removeAll()
        pendingJoinRows.removeAll()
        recentInstances.removeAll()
        if !isReadOnly { try? database.rollback() }
        database.close()
        PersistentStore.tidyCompanions(companionsToTidy)
    }

    /// Closes a store written as a private file so that it has the shape of a store Core Data
    /// wrote (WAL journal mode), ready to be renamed into place.
    func closeForHandOver() throws {
        try save()
        try database.exec("PRAGMA journal_mode=WAL")
        close()
    }
}
