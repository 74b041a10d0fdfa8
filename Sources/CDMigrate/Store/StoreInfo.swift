/// What a Core Data SQLite store says about itself, read without a model: its metadata (Core
/// Data's `NSPersistentStoreCoordinator.metadataForPersistentStore(ofType:at:)`) and, from
/// `Z_PRIMARYKEY`, its entities with their hierarchy and row counts.
public struct StoreInfo {
    /// One entity of the store, as `Z_PRIMARYKEY` lists it.
    public struct Entity: Equatable {
        /// The entity's name as the store's `Z_PRIMARYKEY` table records it.
        public var name: String
        /// `Z_ENT`: the entity's number in the store.
        public var entityNumber: Int
        /// The parent entity's name (`Z_SUPER`), nil for a root entity.
        public var superentityName: String?
        /// The rows of this entity itself (not of its sub-entities); 0 when the store was read
        /// without counting rows.
        public var rowCount: Int
        /// `Z_MAX`: the largest primary key handed out.
        public var maxPrimaryKey: Int64
    }

    /// The store file.
    public var path: String
    /// The store's metadata (Core Data: `metadataForPersistentStore(ofType:at:)`).
    public var metadata: StoreMetadata
    /// In entity-number order.
    public var entities: [Entity]

    /// The first entity number of Core Data's own entities (persistent history, CloudKit
    /// mirroring), whose tables are `A` + the upper-cased name.
    public static let frameworkEntityNumbers = 16000

    /// Reads a store's metadata and entities. The store is opened read-only (SQLite may create
    /// `-wal` and `-shm` beside a WAL store: `init(contentsOf:countingRows:)` does not).
    ///
    /// - Parameters:
    ///   - path: the store's main file.
    ///   - uri: what SQLite opens instead of `path` (a `file:` URI with options), when given.
    ///   - countingRows: whether to count each entity's rows, which reads every table whole;
    ///     reading only the metadata and `Z_PRIMARYKEY` takes milliseconds whatever the store's size.
    /// - Throws: `MigrationError` `.io` when the file is missing or unreadable,
    ///   `.incompatibleVersionHash` (134100) when it is not a Core Data SQLite store,
    ///   `.migrationManagerSourceStore` when its metadata is malformed.
    package static func read(at path: String, uri: String? = nil, countingRows: Bool = true) throws -> StoreInfo {
        guard FileIO.exists(path) else { throw MigrationError(.io, "cannot open the store '\(path)': no such file") }
        let database = try SQLiteDatabase(path: path, mode: .readOnly, uri: uri)
        defer { database.close() }
        guard try database.tableExists("Z_METADATA") else {
            throw MigrationError(
                .incompatibleVersionHash, "'\(path)' is not a Core Data SQLite store: it has no Z_METADATA table")
        }
        guard let row = try database.rows("SELECT Z_UUID, Z_PLIST FROM Z_METADATA ORDER BY Z_VERSION LIMIT 1").first,
            row.count == 2
        else {
            throw MigrationError(
                .incompatibleVersionHash,
                "'\(path)' is not a usable Core Data SQLite store: its Z_METADATA table is empty")
        }
        let metadata = try StoreMetadata(storeUUID: row[0].text ?? "", plist: row[1].bytes ?? [])
        var entities: [Entity] = []
        if try database.tableExists("Z_PRIMARYKEY") {
            let rows = try database.rows("SELECT Z_ENT, Z_NAME, Z_SUPER, Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_ENT")
            var names: [Int64: String] = [:]
            for r in rows where r.count == 4 {
                if let number = r[0].integer, let name = r[1].text { names[number] = name }
            }
            for r in rows where r.count == 4 {
                guard let number = r[0].integer, let name = r[1].text else { continue }
                entities.append(
                    Entity(
                        name: name, entityNumber: Int(number), superentityName: r[2].integer.flatMap { names[$0] },
                        rowCount: 0, maxPrimaryKey: r[3].integer ?? 0))
            }
            for i in entities.indices where countingRows {
                entities[i].rowCount = try rowCount(of: entities[i], among: entities, in: database)
            }
        }
        return StoreInfo(path: path, metadata: metadata, entities: entities)
    }

    /// Core Data's own entities in a store (`Z_PRIMARYKEY` rows numbered from 16000) whose tables
    /// hold rows: name, table and row count, in entity-number order.
    package static func frameworkEntities(in database: SQLiteDatabase) throws -> [(
        name: String, table: String, rows: Int
    )] {
        guard try database.tableExists("Z_PRIMARYKEY") else { return [] }
        var result: [(name: String, table: String, rows: Int)] = []
        for row in try database.rows(
            "SELECT Z_ENT, Z_NAME FROM Z_PRIMARYKEY WHERE Z_ENT >= ? ORDER BY Z_ENT",
            [.integer(Int64(frameworkEntityNumbers))])
        {
            guard row.count == 2, let name = row[1].text else { continue }
            let table = "A" + name.uppercased()
            guard try database.tableExists(table) else { continue }
            let count = Int(try database.scalar("SELECT COUNT(*) FROM \(SQLiteDatabase.quote(table))")?.integer ?? 0)
            if count > 0 { result.append((name, table, count)) }
        }
        return result
    }

    /// Rows of the entity itself: in its root entity's table (Core Data keeps a hierarchy in one
    /// table, `Z` + the root's upper-cased name), those whose `Z_ENT` is the entity's number.
    /// Core Data's own entities (numbered from 16000: persistent history's `TRANSACTION`, `CHANGE`,
    /// `TRANSACTIONSTRING`, CloudKit mirroring's `NSCK…`) live in `A` + the upper-cased name.
    private static func rowCount(of entity: Entity, among entities: [Entity], in database: SQLiteDatabase) throws -> Int
    {
        var root = entity
        var seen: Set<Int> = [root.entityNumber]
        while let parentName = root.superentityName, let parent = entities.first(where: { $0.name == parentName }),
            seen.insert(parent.entityNumber).inserted
        {
            root = parent
        }
        var table = "Z" + root.name.uppercased()
        if entity.entityNumber >= StoreInfo.frameworkEntityNumbers, try !database.tableExists(table) {
            table = "A" + root.name.uppercased()
        }
        guard try database.tableExists(table) else { return 0 }
        let count = try database.scalar(
            "SELECT COUNT(*) FROM \(SQLiteDatabase.quote(table)) WHERE Z_ENT = ?",
            [.integer(Int64(entity.entityNumber))])
        return Int(count?.integer ?? 0)
    }
}
