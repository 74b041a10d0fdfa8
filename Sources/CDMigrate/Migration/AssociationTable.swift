/// The associations of a migration — which destination instance each entity mapping made from
/// which source instance — kept in a temporary table of the destination's database connection,
/// so that a store of millions of rows does not become a dictionary of millions of entries.
///
/// Entity numbers are the models' own (`EntityDescription.entityNumber`): a concrete entity and
/// a primary key name one row of one store.
final class AssociationTable {
    struct Association {
        let sourceEntity: Int
        let sourcePK: Int64
        let destinationEntity: Int
        let destinationPK: Int64

        /// The source instance, as a fault: its row is read only if the policy reads its attributes.
        func source(in model: ManagedObjectModel, store: PersistentStore) throws -> ManagedObject {
            store.fault(entity: try AssociationTable.entity(sourceEntity, in: model), primaryKey: sourcePK)
        }

        func destination(in model: ManagedObjectModel, store: PersistentStore) throws -> ManagedObject {
            store.fault(entity: try AssociationTable.entity(destinationEntity, in: model), primaryKey: destinationPK)
        }
    }

    private let database: SQLiteDatabase
    /// Rows read per query while walking a mapping's associations.
    private let chunkSize = 2_000

    init(database: SQLiteDatabase) throws {
        self.database = database
        try database.exec("""
            CREATE TEMP TABLE IF NOT EXISTS cdm_association (
                mapping INTEGER NOT NULL, source_ent INTEGER NOT NULL, source_pk INTEGER NOT NULL,
                destination_ent INTEGER NOT NULL, destination_pk INTEGER NOT NULL);
            CREATE INDEX IF NOT EXISTS temp.cdm_association_source ON cdm_association (source_ent, source_pk, mapping);
            CREATE INDEX IF NOT EXISTS temp.cdm_association_destination ON cdm_association (destination_ent, destination_pk, mapping);
            CREATE INDEX IF NOT EXISTS temp.cdm_association_mapping ON cdm_association (mapping);
            """)
    }

    func insert(mapping: Int, source: ManagedObject, destination: ManagedObject) throws {
        try database.prepare("INSERT INTO cdm_association VALUES (?, ?, ?, ?, ?)").run([
            .integer(Int64(mapping)), .integer(Int64(source.entity.entityNumber)), .integer(source.objectID.primaryKey),
            .integer(Int64(destination.entity.entityNumber)), .integer(destination.objectID.primaryKey),
        ])
    }

    func count(mapping: Int) throws -> Int {
        Int(try database.scalar("SELECT COUNT(*) FROM cdm_association WHERE mapping = ?", [.integer(Int64(mapping))])?.integer ?? 0)
    }

    /// How many distinct destination instances a mapping made.
    func destinationCount(mapping: Int) throws -> Int {
        Int(try database.scalar("SELECT COUNT(*) FROM (SELECT DISTINCT destination_ent, destination_pk FROM cdm_association WHERE mapping = ?)",
                                [.integer(Int64(mapping))])?.integer ?? 0)
    }

    /// Walks the distinct destination instances a mapping made, once each, in the order they were
    /// first associated, a chunk at a time (the body may write while the walk goes on). Each comes
    /// with its first association and whether it has more than one source.
    func forEachDestination(mapping: Int, _ body: (Association, _ hasSeveralSources: Bool) throws -> Void) throws {
        var lastRowID: Int64 = 0
        while true {
            // An association is the first of its destination when none for the same destination and
            // mapping came before it (one index probe each, through the destination index).
            let rows = try database.rows("""
                SELECT a.rowid, a.source_ent, a.source_pk, a.destination_ent, a.destination_pk,
                       (SELECT COUNT(*) FROM (SELECT 1 FROM cdm_association b WHERE b.destination_ent = a.destination_ent
                            AND b.destination_pk = a.destination_pk AND b.mapping = a.mapping LIMIT 2))
                FROM cdm_association a
                WHERE a.mapping = ? AND a.rowid > ? AND NOT EXISTS (SELECT 1 FROM cdm_association b
                    WHERE b.destination_ent = a.destination_ent AND b.destination_pk = a.destination_pk
                      AND b.mapping = a.mapping AND b.rowid < a.rowid)
                ORDER BY a.rowid LIMIT \(chunkSize)
                """, [.integer(Int64(mapping)), .integer(lastRowID)])
            if rows.isEmpty { return }
            for row in rows {
                guard row.count == 6, let rowID = row[0].integer, let se = row[1].integer, let sp = row[2].integer,
                      let de = row[3].integer, let dp = row[4].integer, let sources = row[5].integer else { continue }
                lastRowID = rowID
                try body(Association(sourceEntity: Int(se), sourcePK: sp, destinationEntity: Int(de), destinationPK: dp), sources > 1)
            }
        }
    }

    /// (entity number, primary key) of the destinations made from `source` by any of `mappings`, in the order made.
    func destinations(mappings: [Int], source: ManagedObject) throws -> [(Int, Int64)] {
        let statement: SQLiteStatement
        var arguments: [Value] = [.integer(Int64(source.entity.entityNumber)), .integer(source.objectID.primaryKey)]
        if mappings.count == 1 {
            statement = try database.prepare("SELECT destination_ent, destination_pk FROM cdm_association WHERE source_ent = ? AND source_pk = ? AND mapping = ? ORDER BY rowid")
            arguments.append(.integer(Int64(mappings[0])))
        } else {
            let list = mappings.map(String.init).joined(separator: ",")
            statement = try database.prepare("SELECT destination_ent, destination_pk FROM cdm_association WHERE source_ent = ? AND source_pk = ? AND mapping IN (\(list)) ORDER BY rowid")
        }
        return try pairs(statement, arguments)
    }

    /// (entity number, primary key) of the sources `mapping` made `destination` from.
    func sources(mapping: Int, destination: ManagedObject) throws -> [(Int, Int64)] {
        let statement = try database.prepare("SELECT source_ent, source_pk FROM cdm_association WHERE destination_ent = ? AND destination_pk = ? AND mapping = ? ORDER BY rowid")
        return try pairs(statement, [.integer(Int64(destination.entity.entityNumber)), .integer(destination.objectID.primaryKey), .integer(Int64(mapping))])
    }

    /// Per source entity number, how many distinct source instances some mapping took.
    func distinctSourceCounts() throws -> [Int: Int] {
        var counts: [Int: Int] = [:]
        for row in try database.rows("SELECT source_ent, COUNT(DISTINCT source_pk) FROM cdm_association GROUP BY source_ent") {
            if row.count == 2, let entity = row[0].integer, let count = row[1].integer { counts[Int(entity)] = Int(count) }
        }
        return counts
    }

    private func pairs(_ statement: SQLiteStatement, _ arguments: [Value]) throws -> [(Int, Int64)] {
        try statement.bind(arguments)
        defer { statement.reset() }
        var result: [(Int, Int64)] = []
        while try statement.step() { result.append((Int(statement.int64(at: 0)), statement.int64(at: 1))) }
        return result
    }

    static func entity(_ number: Int, in model: ManagedObjectModel) throws -> EntityDescription {
        guard let entity = model.entitiesInStoreOrder.element(at: number - 1) else {
            throw MigrationError(.migration, "an association names entity number \(number), which the model does not have")
        }
        return entity
    }
}
