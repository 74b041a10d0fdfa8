#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A Core Data SQLite store (NSPersistentStore + the little of NSManagedObjectContext a
/// migration needs): insert, fetch and change instances, read and write their relationships.
///
/// Built for stores of millions of rows: nothing keeps every instance. Inserted instances wait
/// in a small buffer (their values still change right after insertion) and are written in
/// batches by reused prepared INSERTs inside one transaction, begun at the first write and
/// committed by `save()`; the buffer is written before any read so reads see it. A change to an
/// instance already written is an UPDATE of that column. Relationships live only in the store:
/// reading one queries it, writing one writes the column or join table that holds both
/// directions, so the inverse is always consistent.
public final class PersistentStore: ObjectContext {
    public let model: ManagedObjectModel
    public let path: String
    public let isReadOnly: Bool
    public private(set) var metadata: StoreMetadata
    /// What opening noticed but could live with (e.g. a store without version metadata).
    public private(set) var warnings: [String]

    public struct CreateOptions {
        /// The new store's UUID; a new random one when nil.
        public var storeUUID: String? = nil
        /// A temporary file nobody else sees: no journal, no fsync (a crash just loses the file).
        public var privateFile = false
        /// The path may be an empty file the caller created for this store (e.g. with `mkstemp`,
        /// to own a unique name); any other existing file is still refused.
        public var adoptsEmptyFile = false
        public init() {}
    }

    let database: SQLiteDatabase
    let layout: StoreLayout
    /// Inserted instances per `insertObject` call before the buffer is written.
    var insertBatchSize = 1000

    private let isNew: Bool
    private var isClosed = false
    /// Companion files (`-wal`, `-shm`) that SQLite made beside a store opened read-only; removed
    /// on close when the log is empty, so reading a store leaves its folder as it found it.
    var companionsToTidy: [String] = []
    private var metadataNeedsSave: Bool
    /// The last `Z_PK` handed out, per table.
    private var maxPrimaryKeys: [String: Int64] = [:]
    private var pending: [PendingRow] = []
    private var pendingIndex: [RowKey: Int] = [:]
    private var readers: [String: RowReader] = [:]
    private var insertPlans: [String: InsertPlan] = [:]

    private struct RowKey: Hashable {
        let table: String
        let primaryKey: Int64
    }

    /// An inserted instance not written yet, with the relationship columns set on it meanwhile.
    private struct PendingRow {
        let object: ManagedObject
        var links: [String: Value]
    }

    /// How to read an entity's rows (and its subentities'): the columns selected after
    /// `Z_PK, Z_ENT`, and for each concrete entity where each of its attributes is among them.
    private struct RowReader {
        let table: String
        let selectList: String
        let positions: [Int: [Int?]]
    }

    /// The INSERT for one concrete entity, kept prepared for the whole life of the store.
    private struct InsertPlan {
        let statement: SQLiteStatement
        let attributeIndexes: [Int]
        let linkColumns: [String]
    }

    private init(model: ManagedObjectModel, path: String, readOnly: Bool, database: SQLiteDatabase, layout: StoreLayout,
                 metadata: StoreMetadata, warnings: [String], isNew: Bool) {
        self.model = model
        self.path = path
        self.isReadOnly = readOnly
        self.database = database
        self.layout = layout
        self.metadata = metadata
        self.warnings = warnings
        self.isNew = isNew
        self.metadataNeedsSave = isNew
    }

    deinit { close() }

    /// The store's UUID, which object IDs carry.
    public var storeIdentifier: String { metadata.storeUUID }

    // MARK: Creating and opening

    /// Creates a new store for `model` (tables, indexes, bookkeeping rows); the file must not exist.
    public static func create(at path: String, model: ManagedObjectModel, options: CreateOptions = .init()) throws -> PersistentStore {
        if FileIO.exists(path) && !(options.adoptsEmptyFile && FileIO.size(path) == 0) {
            throw MigrationError(.io, "cannot create a store at '\(path)': the file already exists")
        }
        let uuid = options.storeUUID ?? randomUUID()
        let database = try SQLiteDatabase(path: path, mode: .create)
        let layout = StoreLayout(model: model)
        let metadata = StoreMetadata(storeUUID: uuid, model: model)
        do {
            if options.privateFile {
                try database.exec("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF")
            } else {
                // Core Data's own stores are in WAL mode.
                try database.exec("PRAGMA journal_mode = WAL")
            }
            try database.begin()
            for statement in layout.createStatements { try database.exec(statement) }
            let store = PersistentStore(model: model, path: path, readOnly: false, database: database, layout: layout,
                                        metadata: metadata, warnings: [], isNew: true)
            try store.writeBookkeeping()
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
    public static func open(at path: String, model: ManagedObjectModel, readOnly: Bool = true, checkVersion: Bool = true) throws -> PersistentStore {
        return try open(at: path, model: model, readOnly: readOnly, checkVersion: checkVersion, uri: nil)
    }

    /// Opens a store read-only through a `file:` URI (see `SourceAccess`) inside one read
    /// transaction, begun before the first read so that everything read is one snapshot; it
    /// stays open until the store closes. Nothing beside the file is tidied (SQLite created nothing).
    static func openSource(at path: String, uri: String, model: ManagedObjectModel, checkVersion: Bool) throws -> PersistentStore {
        return try open(at: path, model: model, readOnly: true, checkVersion: checkVersion, uri: uri)
    }

    private static func open(at path: String, model: ManagedObjectModel, readOnly: Bool, checkVersion: Bool, uri: String?) throws -> PersistentStore {
        guard FileIO.exists(path) else {
            throw MigrationError(.io, "cannot open the store '\(path)': no such file")
        }
        let missingCompanions = readOnly && uri == nil ? ["-wal", "-shm"].map { path + $0 }.filter { !FileIO.exists($0) } : []
        let database = try SQLiteDatabase(path: path, mode: readOnly ? .readOnly : .readWrite, uri: uri)
        do {
            do {
                if uri != nil { try database.begin() }
                _ = try database.scalar("SELECT COUNT(*) FROM sqlite_master")
            } catch let error as MigrationError {
                throw explainOpenFailure(error, path: path, readOnly: readOnly)
            }
            guard try database.tableExists("Z_METADATA") else {
                throw MigrationError(.incompatibleVersionHash, "'\(path)' is not a Core Data SQLite store: it has no Z_METADATA table")
            }
            let rows = try database.rows("SELECT Z_UUID, Z_PLIST FROM Z_METADATA ORDER BY Z_VERSION LIMIT 1")
            guard let row = rows.first, row.count == 2 else {
                throw MigrationError(.incompatibleVersionHash, "'\(path)' is not a usable Core Data SQLite store: its Z_METADATA table is empty")
            }
            let uuid = row[0].text ?? ""
            let plist = row[1].bytes ?? []
            var warnings: [String] = []
            var metadata: StoreMetadata
            do {
                metadata = try StoreMetadata(storeUUID: uuid, plist: plist)
            } catch let error as MigrationError {
                if checkVersion {
                    throw MigrationError(.incompatibleVersionHash, "cannot read the metadata (Z_METADATA.Z_PLIST) of the store '\(path)' to check its version: \(error.message)")
                }
                warnings.append("the metadata of the store '\(path)' is unreadable (\(error.message)); opened unchecked with model \(describe(model))")
                metadata = StoreMetadata(storeUUID: uuid, model: model)
                metadata.versionHashes = [:]
                metadata.versionIdentifiers = []
                metadata.otherEntries = []
                metadata.isEmpty = true
            }
            if checkVersion {
                if metadata.isEmpty {
                    warnings.append("the store '\(path)' has no version metadata (empty Z_PLIST): its version cannot be checked; opened with model \(describe(model))")
                } else {
                    try checkVersionHashes(metadata, model: model, path: path)
                }
            }
            let layout = try StoreLayout.read(from: database, model: model)
            warnings += layout.warnings
            let store = PersistentStore(model: model, path: path, readOnly: readOnly, database: database, layout: layout,
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

    private static func describe(_ model: ManagedObjectModel) -> String {
        var text = model.name.map { "'\($0)'" } ?? "(unnamed)"
        if let v = model.versionIdentifier, !v.isEmpty { text += " version '\(v)'" }
        return text
    }

    /// NSPersistentStoreIncompatibleVersionHashError, naming both versions and, per entity that
    /// differs, the store's hash and the model's.
    private static func checkVersionHashes(_ metadata: StoreMetadata, model: ManagedObjectModel, path: String) throws {
        let differences = model.versionDifferences(fromStoreMetadata: metadata)
        guard !differences.isEmpty else { return }
        let storeVersion = metadata.versionIdentifiers.filter { !$0.isEmpty }
        let storeText = storeVersion.isEmpty ? "a model version with no identifier" : "model version \(storeVersion.map { "'\($0)'" }.joined(separator: ", "))"
        throw MigrationError(.incompatibleVersionHash,
                             "the store '\(path)' was written with \(storeText), which is not model \(describe(model)): \(differences.map { $0.description }.joined(separator: "; "))")
    }

    /// A read-only WAL store needs its `-shm` file: say so when SQLite could not make one.
    private static func explainOpenFailure(_ error: MigrationError, path: String, readOnly: Bool) -> MigrationError {
        if readOnly, !isWALFile(path), (FileIO.size(path + "-journal") ?? 0) > 0 {
            var explained = error
            explained.message += ". '\(path)-journal' is a hot rollback journal (a writer stopped in the middle of a transaction), which a read-only connection cannot roll back; open the store once read-write with SQLite to roll it back"
            return explained
        }
        guard readOnly, isWALFile(path) else { return error }
        var message = error.message
        message += ". The store is in WAL mode: reading it needs its '-shm' file beside it, which SQLite must be able to create or open"
        message += FileIO.exists(path + "-shm") ? "" : " ('\(path)-shm' is missing and its folder may not be writable)"
        message += "; copy the store together with its -wal and -shm files to a writable folder and open the copy"
        var explained = error
        explained.message = message
        return explained
    }

    /// Header bytes 18–19 are 2, 2 in WAL mode.
    private static func isWALFile(_ path: String) -> Bool {
        guard let file = fopen(path, "rb") else { return false }
        defer { fclose(file) }
        var header = [UInt8](repeating: 0, count: 20)
        guard fread(&header, 1, 20, file) == 20 else { return false }
        return header[18] == 2 && header[19] == 2
    }

    private static func randomUUID() -> String {
        var generator = SystemRandomNumberGenerator()
        var bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        bytes[6] = bytes[6] & 0x0F | 0x40   // version 4
        bytes[8] = bytes[8] & 0x3F | 0x80   // RFC 4122 variant
        return Value.uuidString(bytes)
    }

    private func loadMaxPrimaryKeys() throws {
        var recorded: [Int: Int64] = [:]
        for row in try database.rows("SELECT Z_ENT, Z_MAX FROM Z_PRIMARYKEY") {
            if row.count == 2, let n = row[0].integer { recorded[Int(n)] = row[1].integer ?? 0 }
        }
        for root in model.entities where root.parent == nil {
            let table = layout.table(for: root)
            var highest = recorded[layout.entityNumber(of: root)] ?? 0
            for sub in root.selfAndDescendants { highest = max(highest, recorded[layout.entityNumber(of: sub)] ?? 0) }
            let inTable = try database.scalar("SELECT MAX(Z_PK) FROM \(table)")?.integer ?? 0
            maxPrimaryKeys[table] = max(highest, inTable)
        }
    }

    /// Closes the store; changes not saved are rolled back. Harmless when already closed.
    public func close() {
        guard !isClosed else { return }
        isClosed = true
        pending.removeAll()
        pendingIndex.removeAll()
        insertPlans.removeAll()
        if !isReadOnly { try? database.rollback() }
        database.close()
        PersistentStore.tidyCompanions(companionsToTidy)
    }

    // MARK: Guards

    private func checkOpen() throws {
        if isClosed { throw MigrationError(.invalidArgument, "the store '\(path)' is closed") }
    }

    private func checkWritable(_ what: @autoclosure () -> String) throws {
        try checkOpen()
        if isReadOnly { throw MigrationError(.invalidArgument, "the store '\(path)' is open read-only: cannot \(what())") }
    }

    private func checkOwn(_ object: ManagedObject) throws {
        guard object.context === self else {
            throw MigrationError(.invalidArgument, "instance \(object.objectID.uriRepresentation) of '\(object.entity.name)' does not belong to the store '\(path)'")
        }
    }

    private func entity(named name: String) throws -> EntityDescription {
        guard let entity = model.entity(named: name) else {
            throw MigrationError(.invalidArgument, "the model \(PersistentStore.describe(model)) has no entity named '\(name)'")
        }
        return entity
    }

    private func beginIfNeeded() throws {
        if !database.isInTransaction { try database.begin() }
    }

    private func key(_ object: ManagedObject) -> RowKey {
        RowKey(table: layout.table(for: object.entity), primaryKey: object.objectID.primaryKey)
    }

    // MARK: Inserting and saving

    /// A new instance of a concrete entity, with its attributes' default values and a new `Z_PK`.
    public func insertObject(entityName: String) throws -> ManagedObject {
        try checkWritable("insert a '\(entityName)'")
        let entity = try self.entity(named: entityName)
        if entity.isAbstract {
            throw MigrationError(.invalidArgument, "entity '\(entityName)' is abstract: insert one of its subentities (\(entity.subentities.map { $0.name }.joined(separator: ", ")))")
        }
        if pending.count >= insertBatchSize { try writeBuffer() }
        let primaryKey = allocatePrimaryKeys(for: entity, count: 1)
        let object = ManagedObject(entity: entity, objectID: ObjectID(storeIdentifier: storeIdentifier, entityName: entity.name, primaryKey: primaryKey), context: self)
        pendingIndex[key(object)] = pending.count
        pending.append(PendingRow(object: object, links: [:]))
        return object
    }

    /// Reserves `count` consecutive primary keys in the entity's table; returns the first.
    func allocatePrimaryKeys(for entity: EntityDescription, count: Int) -> Int64 {
        let table = layout.table(for: entity)
        let first = (maxPrimaryKeys[table] ?? 0) + 1
        maxPrimaryKeys[table] = first + Int64(max(count, 1)) - 1
        return first
    }

    /// Writes the inserted instances still buffered into the open transaction.
    public func flush() throws {
        try checkWritable("write changes")
        try writeBuffer()
    }

    /// Writes the buffer (a no-op when empty, as it always is in a read-only store); every read runs this first.
    private func writeBuffer() throws {
        guard !pending.isEmpty else { return }
        try beginIfNeeded()
        var written = 0
        defer {
            // Rows already written leave the buffer even when a later one fails.
            if written == pending.count {
                pending.removeAll(keepingCapacity: true)
                pendingIndex.removeAll(keepingCapacity: true)
            } else if written > 0 {
                for row in pending[0..<written] { pendingIndex[key(row.object)] = nil }
                pending.removeFirst(written)
                for (i, row) in pending.enumerated() { pendingIndex[key(row.object)] = i }
            }
        }
        for row in pending {
            let object = row.object
            let plan = try insertPlan(for: object.entity)
            let statement = plan.statement
            try statement.bind(.integer(object.objectID.primaryKey), at: 1)
            try statement.bind(.integer(Int64(layout.entityNumber(of: object.entity))), at: 2)
            try statement.bind(.integer(1), at: 3)
            var position: Int32 = 4
            for index in plan.attributeIndexes {
                try statement.bind(object.attributeValues[index], at: position)
                position += 1
            }
            for column in plan.linkColumns {
                try statement.bind(row.links[column] ?? .null, at: position)
                position += 1
            }
            try statement.step()
            statement.reset()
            written += 1
        }
    }

    private func insertPlan(for entity: EntityDescription) throws -> InsertPlan {
        if let plan = insertPlans[entity.name] { return plan }
        var columns = ["Z_PK", "Z_ENT", "Z_OPT"]
        var indexes: [Int] = []
        for attribute in entity.attributes {
            guard let column = layout.column(for: attribute) else { continue }
            columns.append(column)
            indexes.append(attribute.index)
        }
        let links = layout.linkColumns(for: entity)
        columns += links
        let sql = "INSERT INTO \(layout.table(for: entity)) (\(columns.joined(separator: ", "))) VALUES (\(columns.map { _ in "?" }.joined(separator: ", ")))"
        let plan = InsertPlan(statement: try database.prepareUncached(sql), attributeIndexes: indexes, linkColumns: links)
        insertPlans[entity.name] = plan
        return plan
    }

    /// Writes everything: the buffer, `Z_PRIMARYKEY` (`Z_MAX`), `Z_METADATA` for a new store; commits.
    public func save() throws {
        try checkWritable("save")
        try writeBuffer()
        try beginIfNeeded()
        try writeBookkeeping()
        try database.commit()
    }

    /// Replaces the metadata written by the next `save()`.
    public func setMetadata(_ metadata: StoreMetadata) throws {
        try checkWritable("change its metadata")
        self.metadata = metadata
        metadataNeedsSave = true
    }

    private func writeBookkeeping() throws {
        if isNew {
            for entity in model.entitiesInStoreOrder {
                let maxKey: Int64 = entity.parent == nil ? maxPrimaryKeys[layout.table(for: entity)] ?? 0 : 0
                try database.run("INSERT OR REPLACE INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (?, ?, ?, ?)", [
                    .integer(Int64(layout.entityNumber(of: entity))), .string(entity.name),
                    .integer(Int64(entity.parent.map { layout.entityNumber(of: $0) } ?? 0)), .integer(maxKey)])
            }
        } else {
            for root in model.entities where root.parent == nil {
                let maxKey = maxPrimaryKeys[layout.table(for: root)] ?? 0
                try database.run("UPDATE Z_PRIMARYKEY SET Z_MAX = ? WHERE Z_ENT = ? AND (Z_MAX IS NULL OR Z_MAX < ?)",
                                 [.integer(maxKey), .integer(Int64(layout.entityNumber(of: root))), .integer(maxKey)])
            }
        }
        if metadataNeedsSave {
            try database.run("INSERT OR REPLACE INTO Z_METADATA (Z_VERSION, Z_UUID, Z_PLIST) VALUES (1, ?, ?)",
                             [.string(metadata.storeUUID), .binary(metadata.plistBytes())])
            metadataNeedsSave = false
        }
    }

    // MARK: Fetching

    /// The instance with that ID, or nil when the store has no such row.
    public func object(with id: ObjectID) throws -> ManagedObject? {
        try checkOpen()
        if !id.storeIdentifier.isEmpty && id.storeIdentifier != storeIdentifier {
            throw MigrationError(.invalidArgument, "object ID \(id.uriRepresentation) belongs to another store than '\(path)' (\(storeIdentifier))")
        }
        let entity = try self.entity(named: id.entityName)
        var found: ManagedObject? = nil
        try query(entity, includesSubentities: true, condition: "t.Z_PK = ?", arguments: [.integer(id.primaryKey)], limit: 1) {
            found = $0
            return false
        }
        return found
    }

    /// A fault for a row known to exist (its concrete entity and `Z_PK`): no query now; the
    /// attribute values are read on first use. The engine hands these around where most instances
    /// are only linked, not read (relationship creation, association look-ups).
    func fault(entity: EntityDescription, primaryKey: Int64) -> ManagedObject {
        let object = ManagedObject(entity: entity, objectID: ObjectID(storeIdentifier: storeIdentifier, entityName: entity.name, primaryKey: primaryKey),
                                   context: self, values: [])
        object.isFault = true
        return object
    }

    public func fulfillFault(_ object: ManagedObject) throws {
        try checkOpen()
        try checkOwn(object)
        var found: ManagedObject?
        try query(object.entity, includesSubentities: false, condition: "t.Z_PK = ?", arguments: [.integer(object.objectID.primaryKey)], limit: 1) {
            found = $0
            return false
        }
        guard let row = found else {
            throw MigrationError(.invalidArgument, "instance \(object.objectID.uriRepresentation) is no longer in the store '\(path)'")
        }
        object.attributeValues = row.attributeValues
    }

    public func fetch(_ request: FetchRequest) throws -> [ManagedObject] {
        var result: [ManagedObject] = []
        try enumerate(request) { result.append($0); return true }
        return result
    }

    /// Streams the request's instances to `body` one row at a time; `body` returns false to stop.
    public func enumerate(_ request: FetchRequest, _ body: (ManagedObject) throws -> Bool) throws {
        try checkOpen()
        let entity = try self.entity(named: request.entityName)
        let offset = max(request.fetchOffset, 0)
        if let limit = request.fetchLimit, limit <= 0 { return }
        guard let filter = request.filter else {
            try query(entity, includesSubentities: request.includesSubentities, condition: request.sqlWhere, arguments: request.arguments,
                      orderBy: request.sqlOrderBy, limit: request.fetchLimit, offset: offset, body)
            return
        }
        var skipped = 0
        var delivered = 0
        try query(entity, includesSubentities: request.includesSubentities, condition: request.sqlWhere, arguments: request.arguments,
                  orderBy: request.sqlOrderBy) { object in
            guard try filter(object) else { return true }
            if skipped < offset { skipped += 1; return true }
            delivered += 1
            guard try body(object) else { return false }
            if let limit = request.fetchLimit, delivered >= limit { return false }
            return true
        }
    }

    /// How many instances `fetch` would return.
    public func count(_ request: FetchRequest) throws -> Int {
        try checkOpen()
        if request.filter != nil {
            var n = 0
            try enumerate(request) { _ in n += 1; return true }
            return n
        }
        let entity = try self.entity(named: request.entityName)
        if let limit = request.fetchLimit, limit <= 0 { return 0 }
        try writeBuffer()
        var conditions: [String] = []
        if let restriction = layout.entityRestriction(for: entity, includingSubentities: request.includesSubentities, qualifier: "t.") { conditions.append(restriction) }
        if let condition = request.sqlWhere { conditions.append("(\(condition))") }
        var sql = "SELECT 1 FROM \(layout.table(for: entity)) t"
        if !conditions.isEmpty { sql += " WHERE " + conditions.joined(separator: " AND ") }
        if request.fetchLimit != nil || request.fetchOffset > 0 {
            sql += " LIMIT \(request.fetchLimit ?? -1) OFFSET \(max(request.fetchOffset, 0))"
        }
        return Int(try database.scalar("SELECT COUNT(*) FROM (\(sql))", request.arguments)?.integer ?? 0)
    }

    private func reader(for entity: EntityDescription) -> RowReader {
        if let reader = readers[entity.name] { return reader }
        var columns: [String] = []
        var positions: [Int: [Int?]] = [:]
        for concrete in entity.selfAndDescendants {
            positions[layout.entityNumber(of: concrete)] = concrete.attributes.map { attribute -> Int? in
                guard let column = layout.column(for: attribute) else { return nil }
                if let i = columns.firstIndex(of: column) { return i }
                columns.append(column)
                return columns.count - 1
            }
        }
        let selectList = (["Z_PK", "Z_ENT"] + columns).map { "t." + $0 }.joined(separator: ", ")
        let reader = RowReader(table: layout.table(for: entity), selectList: selectList, positions: positions)
        readers[entity.name] = reader
        return reader
    }

    /// Runs a SELECT over the entity's rows (`t` is its table; `join` may add others) and hands
    /// each row to `body` as an instance of its concrete entity, until `body` returns false.
    private func query(_ entity: EntityDescription, includesSubentities: Bool, join: String? = nil, condition: String?, arguments: [Value],
                       orderBy: String? = nil, limit: Int? = nil, offset: Int = 0, faults: Bool = false,
                       _ body: (ManagedObject) throws -> Bool) throws {
        try writeBuffer()
        let reader = reader(for: entity)
        var sql = "SELECT \(faults ? "t.Z_PK, t.Z_ENT" : reader.selectList) FROM \(reader.table) t"
        if let join = join { sql += " " + join }
        var conditions: [String] = []
        if let restriction = layout.entityRestriction(for: entity, includingSubentities: includesSubentities, qualifier: "t.") { conditions.append(restriction) }
        if let condition = condition { conditions.append("(\(condition))") }
        if !conditions.isEmpty { sql += " WHERE " + conditions.joined(separator: " AND ") }
        sql += " ORDER BY " + (orderBy ?? "t.Z_PK")
        if limit != nil || offset > 0 { sql += " LIMIT \(limit ?? -1) OFFSET \(offset)" }
        let statement = try database.prepare(sql)
        defer { statement.reset() }
        try statement.bind(arguments)
        while try statement.step() {
            let number = Int(statement.int64(at: 1))
            guard let concrete = layout.entity(forNumber: number), let positions = reader.positions[number] else {
                throw MigrationError(.sqlite, "row \(statement.int64(at: 0)) of table '\(reader.table)' in the store '\(path)' has Z_ENT \(number), which is not '\(entity.name)' or one of its subentities")
            }
            if faults {
                guard try body(fault(entity: concrete, primaryKey: statement.int64(at: 0))) else { break }
                continue
            }
            var values: [Value] = []
            values.reserveCapacity(concrete.attributes.count)
            for (i, attribute) in concrete.attributes.enumerated() {
                if let p = positions[i] {
                    values.append(statement.value(at: p + 2, as: attribute.attributeType))
                } else {
                    values.append(attribute.defaultValue)
                }
            }
            let id = ObjectID(storeIdentifier: storeIdentifier, entityName: concrete.name, primaryKey: statement.int64(at: 0))
            let object = ManagedObject(entity: concrete, objectID: id, context: self, values: values)
            guard try body(object) else { break }
        }
    }

    // MARK: ObjectContext: attributes

    public func attributeDidChange(of object: ManagedObject, _ attribute: AttributeDescription) throws {
        try checkWritable("change '\(object.entity.name).\(attribute.name)'")
        try checkOwn(object)
        guard pendingIndex[key(object)] == nil, let column = layout.column(for: attribute) else { return }
        try beginIfNeeded()
        try database.run("UPDATE \(layout.table(for: object.entity)) SET \(column) = ? WHERE Z_PK = ?",
                         [object.attributeValues[attribute.index], .integer(object.objectID.primaryKey)])
    }

    // MARK: ObjectContext: reading relationships

    public func relationshipValue(of object: ManagedObject, _ relationship: RelationshipDescription) throws -> Value {
        try checkOpen()
        try checkOwn(object)
        guard let destination = relationship.destinationEntity else { return relationship.isToMany ? .collection([]) : .null }
        let pk = Value.integer(object.objectID.primaryKey)
        var members: [Value] = []
        let collect: (ManagedObject) throws -> Bool = { members.append(.object($0)); return true }
        switch layout.storage(of: relationship) {
        case .foreignKey(let column, _, _):
            // The target's own row tells its concrete entity.
            let condition = "t.Z_PK = (SELECT \(column) FROM \(layout.table(for: object.entity)) WHERE Z_PK = ?)"
            try query(destination, includesSubentities: true, condition: condition, arguments: [pk], limit: 1, faults: true, collect)
            return members.first ?? .null
        case .inverseForeignKey(_, let column, _, let order), .hiddenColumn(_, let column, let order):
            try query(destination, includesSubentities: true, condition: "t.\(column) = ?", arguments: [pk],
                      orderBy: order.map { "t.\($0), t.Z_PK" }, faults: true, collect)
        case .joinTable(let table, let own, let other, let order, _):
            try query(destination, includesSubentities: true, join: "JOIN \(table) j ON j.\(other) = t.Z_PK", condition: "j.\(own) = ?",
                      arguments: [pk], orderBy: order.map { "j.\($0), t.Z_PK" }, faults: true, collect)
        case .transient:
            break
        }
        return relationship.isToMany ? .collection(members) : (members.first ?? .null)
    }

    // MARK: ObjectContext: writing relationships

    /// Sets columns of an instance's row: in the buffer when it is not written yet, else an UPDATE.
    private func setColumns(of object: ManagedObject, _ values: [(String, Value)]) throws {
        if let i = pendingIndex[key(object)] {
            for (column, value) in values { pending[i].links[column] = value }
            return
        }
        try beginIfNeeded()
        let assignments = values.map { "\($0.0) = ?" }.joined(separator: ", ")
        try database.run("UPDATE \(layout.table(for: object.entity)) SET \(assignments) WHERE Z_PK = ?",
                         values.map { $0.1 } + [.integer(object.objectID.primaryKey)])
    }

    private func entityValue(_ object: ManagedObject?) -> Value {
        object.map { .integer(Int64(layout.entityNumber(of: $0.entity))) } ?? .null
    }

    private func primaryKeyValue(_ object: ManagedObject?) -> Value {
        object.map { .integer($0.objectID.primaryKey) } ?? .null
    }

    private func checkRelationshipWrite(_ object: ManagedObject, _ relationship: RelationshipDescription, _ targets: [ManagedObject]) throws {
        try checkWritable("change '\(object.entity.name).\(relationship.name)'")
        try checkOwn(object)
        for target in targets { try checkOwn(target) }
        if case .transient = layout.storage(of: relationship) {
            throw MigrationError(.invalidArgument, "relationship '\(object.entity.name).\(relationship.name)' is transient: the store does not keep it")
        }
    }

    public func setRelationship(of object: ManagedObject, _ relationship: RelationshipDescription, to targets: [ManagedObject]) throws {
        try checkRelationshipWrite(object, relationship, targets)
        let pk = primaryKeyValue(object)
        switch layout.storage(of: relationship) {
        case .foreignKey(let column, let entityColumn, let orderColumn):
            let target = targets.first
            if let inverse = relationship.inverseRelationship, !inverse.isToMany,
               case .foreignKey(let inverseColumn, let inverseEntityColumn, _) = layout.storage(of: inverse) {
                // One-to-one: both tables hold a column; the old partners of both sides let go.
                try writeBuffer()
                try beginIfNeeded()
                let targetTable = layout.table(for: inverse.entity ?? object.entity)
                try database.run("UPDATE \(targetTable) SET \(assignNull(inverseColumn, inverseEntityColumn)) WHERE \(inverseColumn) = ?", [pk])
                if let target = target {
                    let ownTable = layout.table(for: object.entity)
                    try database.run("UPDATE \(ownTable) SET \(assignNull(column, entityColumn)) WHERE \(column) = ?", [primaryKeyValue(target)])
                    try setColumns(of: target, columnsFor(inverseColumn, inverseEntityColumn, pointingAt: object))
                }
                try setColumns(of: object, columnsFor(column, entityColumn, pointingAt: target))
                return
            }
            var values = columnsFor(column, entityColumn, pointingAt: target)
            if let orderColumn = orderColumn {
                // A member of an ordered to-many: it goes last in its new owner's list.
                try writeBuffer()
                let table = layout.table(for: object.entity)
                if let target = target {
                    let current = try database.scalar("SELECT \(column) FROM \(table) WHERE Z_PK = ?", [pk])?.integer
                    if current == target.objectID.primaryKey { return }
                    values.append((orderColumn, .integer(try nextOrder(table: table, orderColumn: orderColumn, where: column, equals: primaryKeyValue(target)))))
                } else {
                    values.append((orderColumn, .null))
                }
            }
            try setColumns(of: object, values)
        case .inverseForeignKey(let table, let column, let entityColumn, let orderColumn):
            try writeBuffer()
            try beginIfNeeded()
            try database.run("UPDATE \(table) SET \(assignNull(column, entityColumn, orderColumn)) WHERE \(column) = ?", [pk])
            try attach(targets, to: object, column: column, entityColumn: entityColumn, orderColumn: orderColumn, table: table)
        case .hiddenColumn(let table, let column, let orderColumn):
            try writeBuffer()
            try beginIfNeeded()
            try database.run("UPDATE \(table) SET \(assignNull(column, nil, orderColumn)) WHERE \(column) = ?", [pk])
            try attach(targets, to: object, column: column, entityColumn: nil, orderColumn: orderColumn, table: table)
        case .joinTable(let table, let own, let other, _, _):
            try beginIfNeeded()
            try database.run("DELETE FROM \(table) WHERE \(own) = ?", [pk])
            if relationship.inverseRelationship === relationship {
                try database.run("DELETE FROM \(table) WHERE \(other) = ?", [pk])
            }
            try addToRelationship(of: object, relationship, targets)
        case .transient:
            break
        }
    }

    public func addToRelationship(of object: ManagedObject, _ relationship: RelationshipDescription, _ targets: [ManagedObject]) throws {
        try checkRelationshipWrite(object, relationship, targets)
        switch layout.storage(of: relationship) {
        case .inverseForeignKey(let table, let column, let entityColumn, let orderColumn):
            try attach(targets, to: object, column: column, entityColumn: entityColumn, orderColumn: orderColumn, table: table)
        case .hiddenColumn(let table, let column, let orderColumn):
            try attach(targets, to: object, column: column, entityColumn: nil, orderColumn: orderColumn, table: table)
        case .joinTable(let table, let own, let other, let order, let inverseOrder):
            try beginIfNeeded()
            for target in targets {
                try insertJoinRow(table: table, own: own, other: other, order: order, inverseOrder: inverseOrder, object, target)
                if relationship.inverseRelationship === relationship && target !== object {
                    try insertJoinRow(table: table, own: own, other: other, order: order, inverseOrder: inverseOrder, target, object)
                }
            }
        case .foreignKey, .transient:
            throw MigrationError(.invalidArgument, "'\(object.entity.name).\(relationship.name)' is not a to-many relationship")
        }
    }

    public func removeFromRelationship(of object: ManagedObject, _ relationship: RelationshipDescription, _ targets: [ManagedObject]) throws {
        try checkRelationshipWrite(object, relationship, targets)
        let pk = primaryKeyValue(object)
        switch layout.storage(of: relationship) {
        case .inverseForeignKey(let table, let column, let entityColumn, let orderColumn):
            try detach(targets, from: pk, table: table, column: column, entityColumn: entityColumn, orderColumn: orderColumn)
        case .hiddenColumn(let table, let column, let orderColumn):
            try detach(targets, from: pk, table: table, column: column, entityColumn: nil, orderColumn: orderColumn)
        case .joinTable(let table, let own, let other, _, _):
            try beginIfNeeded()
            for target in targets {
                try database.run("DELETE FROM \(table) WHERE \(own) = ? AND \(other) = ?", [pk, primaryKeyValue(target)])
                if relationship.inverseRelationship === relationship {
                    try database.run("DELETE FROM \(table) WHERE \(own) = ? AND \(other) = ?", [primaryKeyValue(target), pk])
                }
            }
        case .foreignKey, .transient:
            throw MigrationError(.invalidArgument, "'\(object.entity.name).\(relationship.name)' is not a to-many relationship")
        }
    }

    private func columnsFor(_ column: String, _ entityColumn: String?, pointingAt target: ManagedObject?) -> [(String, Value)] {
        var values: [(String, Value)] = [(column, primaryKeyValue(target))]
        if let e = entityColumn { values.append((e, entityValue(target))) }
        return values
    }

    private func assignNull(_ columns: String?...) -> String {
        columns.compactMap { $0.map { "\($0) = NULL" } }.joined(separator: ", ")
    }

    private func nextOrder(table: String, orderColumn: String, where column: String, equals value: Value) throws -> Int64 {
        return (try database.scalar("SELECT COALESCE(MAX(\(orderColumn)), 0) + 1 FROM \(table) WHERE \(column) = ?", [value])?.integer) ?? 1
    }

    /// Makes `targets` members of `owner`'s to-many kept in `column` of their table (appended when ordered).
    private func attach(_ targets: [ManagedObject], to owner: ManagedObject, column: String, entityColumn: String?, orderColumn: String?, table: String) throws {
        let ownerKey = primaryKeyValue(owner)
        guard let orderColumn = orderColumn else {
            for target in targets {
                var values: [(String, Value)] = [(column, ownerKey)]
                if let e = entityColumn { values.append((e, entityValue(owner))) }
                try setColumns(of: target, values)
            }
            return
        }
        try writeBuffer()
        try beginIfNeeded()
        var next = try nextOrder(table: table, orderColumn: orderColumn, where: column, equals: ownerKey)
        for target in targets {
            // Already a member: an ordered set keeps its place.
            let current = try database.scalar("SELECT \(column) FROM \(table) WHERE Z_PK = ?", [primaryKeyValue(target)])?.integer
            if current == owner.objectID.primaryKey { continue }
            var values: [(String, Value)] = [(column, ownerKey), (orderColumn, .integer(next))]
            if let e = entityColumn { values.append((e, entityValue(owner))) }
            try setColumns(of: target, values)
            next += 1
        }
    }

    private func detach(_ targets: [ManagedObject], from ownerKey: Value, table: String, column: String, entityColumn: String?, orderColumn: String?) throws {
        for target in targets {
            if let i = pendingIndex[key(target)] {
                if pending[i].links[column] == ownerKey {
                    for c in [column, entityColumn, orderColumn].compactMap({ $0 }) { pending[i].links[c] = .null }
                }
                continue
            }
            try beginIfNeeded()
            try database.run("UPDATE \(table) SET \(assignNull(column, entityColumn, orderColumn)) WHERE Z_PK = ? AND \(column) = ?",
                             [primaryKeyValue(target), ownerKey])
        }
    }

    private func insertJoinRow(table: String, own: String, other: String, order: String?, inverseOrder: String?, _ object: ManagedObject, _ target: ManagedObject) throws {
        var columns = [own, other]
        var values = ["?1", "?2"]
        if let order = order {
            columns.append(order)
            values.append("(SELECT COALESCE(MAX(\(order)), 0) + 1 FROM \(table) WHERE \(own) = ?1)")
        }
        if let inverseOrder = inverseOrder {
            columns.append(inverseOrder)
            values.append("(SELECT COALESCE(MAX(\(inverseOrder)), 0) + 1 FROM \(table) WHERE \(other) = ?2)")
        }
        // The primary key over both columns makes a second add of the same pair a no-op.
        try database.run("INSERT OR IGNORE INTO \(table) (\(columns.joined(separator: ", "))) VALUES (\(values.joined(separator: ", ")))",
                         [primaryKeyValue(object), primaryKeyValue(target)])
    }
}

extension PersistentStore {
    /// Closes a store written as a private file so that it has the shape of a store Core Data
    /// wrote (WAL journal mode), ready to be renamed into place.
    func closeForHandOver() throws {
        try save()
        try database.exec("PRAGMA journal_mode=WAL")
        close()
    }
}
