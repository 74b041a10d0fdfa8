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
    /// The model the store was opened or created with.
    public let model: ManagedObjectModel
    /// The store file.
    public let path: String
    /// Whether the store was opened read-only (Core Data: `NSReadOnlyPersistentStoreOption`).
    public let isReadOnly: Bool
    /// The store's metadata: UUID, version hashes, other entries (Core Data: `metadata`).
    public internal(set) var metadata: StoreMetadata
    /// What opening noticed but could live with (e.g. a store without version metadata).
    public internal(set) var warnings: [String]

    /// How `create(at:model:options:)` makes a store.
    public struct CreateOptions {
        /// The new store's UUID; a new random one when nil.
        public var storeUUID: String? = nil
        /// A temporary file nobody else sees: no journal, no fsync (a crash just loses the file).
        public var privateFile = false
        /// The path may be an empty file the caller created for this store (e.g. with `mkstemp`,
        /// to own a unique name); any other existing file is still refused.
        public var adoptsEmptyFile = false
        /// The new store's metadata (`storeUUID` is then ignored); the model's, with `storeUUID`,
        /// when nil. Its `_NSAutoVacuumLevel` sets SQLite's `auto_vacuum`.
        public var metadata: StoreMetadata? = nil
        /// The compressed model archive the new store keeps in `Z_MODELCACHE` (Core Data's model
        /// cache, `StoreModelCache.compressedArchive(of:)`); the cache stays empty when nil.
        public var modelCache: [UInt8]? = nil
        /// The defaults: a new random UUID, an ordinary durable file, refused when the path exists.
        public init() {}
    }

    let database: SQLiteDatabase
    let layout: StoreLayout
    /// Inserted instances per `insertObject` call before the buffer is written.
    var insertBatchSize = 1000

    let isNew: Bool
    var isClosed = false
    /// Companion files (`-wal`, `-shm`) that SQLite made beside a store opened read-only; removed
    /// on close when the log is empty, so reading a store leaves its folder as it found it.
    var companionsToTidy: [String] = []
    var metadataNeedsSave: Bool
    /// The last `Z_PK` handed out, per table.
    var maxPrimaryKeys: [String: PrimaryKeyCounter] = [:]
    /// What inserting instances of an entity needs, per entity asked for (`insertSlot(for:)`).
    var insertSlots: [ObjectIdentifier: EntityInsertSlot] = [:]
    /// The two insert slots used last, the latest first: a policy's row mostly makes or looks up
    /// instances of one or two entities (a note and its category), in turn.
    var recentInsertSlots: (EntityInsertSlot?, EntityInsertSlot?)
    var pending: [PendingRow] = []
    /// The entities whose instances were inserted or had an attribute changed one instance at a
    /// time (`insertObject`, `setValue`), rather than by SQL statements over whole tables: only
    /// their values can differ from what a mapping's plain copy gives (a migration's loss report).
    package internal(set) var entitiesWrittenByInstance = Set<ObjectIdentifier>()
    var pendingIndex: [RowKey: Int] = [:]
    var readers: [String: RowReader] = [:]
    var insertPlans: [ObjectIdentifier: InsertPlan] = [:]
    /// Instances recently read by ID or written from the buffer, so that reading one again by ID
    /// needs no query (bounded: see `RecentInstances`).
    var recentInstances = RecentInstances(capacity: 512)
    /// The prepared INSERT of a join row, per many-to-many relationship of the model.
    var joinInserts: [ObjectIdentifier: SQLiteStatement] = [:]
    /// Join rows added and not written yet (written with the buffer: `writeBuffer`).
    var pendingJoinRows = PendingJoinRows()
    /// Buffered instances whose values were put off (`PersistentStore.deferValues`) since the buffer was last written.
    var deferredRowCount = 0
    /// The values of attributes with external binary data storage: their files, the markers.
    package let externalData: ExternalBinaryData
    /// What this store's instances hold to reach it (`ObjectContextReference`).
    let objectReference = ObjectContextReference()

    struct RowKey: Hashable {
        let table: String
        let primaryKey: Int64

        /// The key alone: hashing the table's name costs more than it spreads (rows of a few
        /// tables with the same key share a bucket, and equality tells them apart).
        func hash(into hasher: inout Hasher) { hasher.combine(primaryKey) }

        /// The hash a dictionary or set of row keys buckets by: the key mixed with the
        /// dictionary's seed by splitmix64's finalizer, a few multiplications, rather than SipHash
        /// (which `hash(into:)` feeds): the buffered rows and the instances kept are looked up by
        /// row key several times for each instance a row-by-row migration makes.
        func _rawHashValue(seed: Int) -> Int {
            var z = UInt64(bitPattern: primaryKey) &+ UInt64(bitPattern: Int64(seed)) &+ 0x9E37_79B9_7F4A_7C15
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return Int(truncatingIfNeeded: z ^ (z >> 31))
        }
    }

    /// An inserted instance not written yet, with the relationship columns set on it meanwhile.
    struct PendingRow {
        let object: ManagedObject
        var links: [String: Value]
    }

    /// How to read an entity's rows (and its subentities'): the columns selected after
    /// `Z_PK, Z_ENT`, and for each concrete entity where each of its attributes is among them.
    struct RowReader {
        let table: String
        let selectList: String
        let positions: [Int: [Int?]]
    }

    /// The INSERT for one concrete entity, kept prepared for the whole life of the store.
    struct InsertPlan {
        let statement: SQLiteStatement
        let attributeIndexes: [Int]
        let linkColumns: [String]
        /// The same INSERT of `rowsPerChunk` rows at once, for runs of buffered rows of the entity
        /// (one statement's start-up per chunk instead of per row).
        let chunkStatement: SQLiteStatement
        let rowsPerChunk: Int
    }

    init(
        model: ManagedObjectModel, path: String, readOnly: Bool, database: SQLiteDatabase, layout: StoreLayout,
        metadata: StoreMetadata, warnings: [String], isNew: Bool
    ) {
        self.model = model
        self.path = path
        self.isReadOnly = readOnly
        self.database = database
        self.layout = layout
        self.metadata = metadata
        self.warnings = warnings
        self.isNew = isNew
        self.metadataNeedsSave = isNew
        self.externalData = ExternalBinaryData(storePath: path)
        objectReference.point(to: self)
    }

    /// A column's value as the store holds it → the attribute's value (external binary data decoded).
    func attributeValue(_ raw: Value, of attribute: AttributeDescription, table: String, primaryKey: Int64) throws
        -> Value
    {
        guard ExternalBinaryData.applies(to: attribute), case .binary(let bytes) = raw else { return raw }
        let property = "\(attribute.entity?.name ?? table).\(attribute.name)"
        return try externalData.decode(bytes, property: property) { "'\(property)' of row \(primaryKey) in '\(path)'" }
    }

    /// An attribute's value → the column's value (external binary data encoded, files written).
    func columnValue(_ value: Value, of attribute: AttributeDescription) throws -> Value {
        guard ExternalBinaryData.applies(to: attribute), case .binary(let bytes) = value else { return value }
        return .binary(try externalData.encode(bytes))
    }

    deinit {
        objectReference.point(to: nil)
        close()
    }

    /// The store's UUID, which object IDs carry.
    public var storeIdentifier: String { metadata.storeUUID }

    // MARK: Guards

    func checkOpen() throws {
        if isClosed { throw MigrationError(.invalidArgument, "the store '\(path)' is closed") }
    }

    func checkWritable(_ what: @autoclosure () -> String) throws {
        try checkOpen()
        if isReadOnly {
            throw MigrationError(.invalidArgument, "the store '\(path)' is open read-only: cannot \(what())")
        }
    }

    func checkOwn(_ object: ManagedObject) throws {
        guard object.storeReference === objectReference else {
            throw MigrationError(
                .invalidArgument,
                "instance \(object.objectID.uriRepresentation) of '\(object.entity.name)' does not belong to the store '\(path)'"
            )
        }
    }

    func entity(named name: String) throws -> EntityDescription {
        guard let entity = model.entity(named: name) else {
            throw MigrationError(
                .invalidArgument, "the model \(PersistentStore.describe(model)) has no entity named '\(name)'")
        }
        return entity
    }

    func beginIfNeeded() throws {
        if !database.isInTransaction { try database.begin() }
    }

    func key(_ object: ManagedObject) -> RowKey {
        RowKey(table: layout.table(for: object.entity), primaryKey: object.objectID.primaryKey)
    }
}
