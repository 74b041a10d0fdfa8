/// The associations of a migration — which destination instance each entity mapping made from
/// which source instance — kept in a temporary table of the destination's database connection,
/// so that a store of millions of rows does not become a dictionary of millions of entries.
///
/// Entity numbers are the models' own (`EntityDescription.entityNumber`): a concrete entity and
/// a primary key name one row of one store.
///
/// Two things keep a bulk migration from paying for associations nobody reads:
/// - A declarative mapping that kept its source keys (`IdentityRange`: destination `Z_PK` =
///   source `Z_PK`) records nothing: its associations are implied by the destination table, and
///   are written into the table only when something reads them row by row (`materialize`), at
///   rowids reserved when the mapping ran, so "the order made" stays the order made.
/// - A batch of Core Data's default numbered in key order (`KeyRange`: destination keys allocated
///   one after the other for consecutive source keys) records its range, not a row per
///   association; consecutive batches extend one range. The rows are written, at rowids reserved
///   when the batch ran, before anything reads the table row by row (`writePending`).
/// - Associations recorded one at a time (`insert`, a policy's single-row hook) whose source and
///   destination keys both go up by one from the last association's (each new instance associated
///   with its source, in key order) are kept as a run, and a run of at least `shortestRun` becomes
///   a `KeyRange` whose rows are generated from the keys (it names no destination table), not a
///   row each.
/// - The table's indexes are built at the first read, after the bulk of the inserts.
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

    /// The associations of a declarative mapping that kept its source keys: one per row of
    /// `destinationTable` (in the destination's main schema) with `Z_PK` in `low...high`, each
    /// from the source instance of `sourceEntity` with the same key. Nothing else writes keys in
    /// that range of that table (it was empty, and later keys are allocated above `high`).
    struct IdentityRange {
        let mapping: Int
        let sourceEntity: Int
        let destinationEntity: Int
        /// Quoted table name.
        let destinationTable: String
        let low: Int64
        let high: Int64
        let count: Int
        /// The rowid of the association of key `low`; key k's is `firstRowID + k - low`.
        let firstRowID: Int64
    }

    /// The associations of consecutive source keys `low...high` (of `sourceEntity`) with consecutive
    /// destination keys from `destinationLow`, of `destinationEntity` in `destinationTable`: source
    /// key k made the destination instance `destinationLow + (k - low)`. Every key of both ranges
    /// was made by the mapping (the destination keys were allocated to it). Their rows' rowids are
    /// reserved from `firstRowID`; a placeholder of mapping -1 holds the last one until written.
    struct KeyRange {
        let mapping: Int
        let sourceEntity: Int
        let destinationEntity: Int
        /// Quoted table name; nil for a range of associations recorded one at a time, whose pairs
        /// are generated from the keys (they hold whether or not the destination rows are written yet).
        let destinationTable: String?
        let low: Int64
        var high: Int64
        let destinationLow: Int64
        let firstRowID: Int64
        var count: Int { Int(high - low) + 1 }
        var destinationHigh: Int64 { destinationLow + (high - low) }
        var lastRowID: Int64 { firstRowID + (high - low) }
        /// `source_pk, destination_pk` of its associations, from the destination table's rows.
        var pairsSQL: String {
            guard let destinationTable else {
                return
                    "SELECT k AS source_pk, k + (\(destinationLow - low)) AS destination_pk FROM (WITH RECURSIVE "
                    + "cdm_key(k) AS (VALUES(\(low)) UNION ALL SELECT k + 1 FROM cdm_key WHERE k < \(high)) "
                    + "SELECT k FROM cdm_key)"
            }
            return
                "SELECT Z_PK - \(destinationLow - low) AS source_pk, Z_PK AS destination_pk FROM main.\(destinationTable) "
                + "WHERE Z_PK BETWEEN \(destinationLow) AND \(destinationHigh)"
        }
    }

    /// Per mapping, its key ranges not written into the table yet, in the order made.
    private(set) var keyRanges: [Int: [KeyRange]] = [:]
    /// At most this many key ranges of one mapping are read as SQL (a UNION ALL each) by the
    /// counts and the loss report; beyond, they are written into the table first.
    static let keyRangesInSQL = 32

    private let database: SQLiteDatabase
    /// Rows read per query while walking a mapping's associations.
    private let chunkSize = 2_000
    private(set) var identities: [Int: IdentityRange] = [:]
    private var hasIndexes = false
    /// Associations recorded one at a time (`insert`) and not written yet: written a chunk per
    /// multi-row INSERT, and before anything reads or writes the table otherwise (`writePending`).
    private var pending: [Int64] = []
    /// Associations per multi-row INSERT of `pending`.
    static let pendingChunk = 200
    /// The statements writing `pending`, the full chunk's prepared once.
    private lazy var pendingWriter = ChunkedInsert(
        "INSERT INTO cdm_association", columns: 5, rowsPerChunk: Self.pendingChunk, database: database)

    /// Associations recorded one at a time with consecutive source and destination keys, after
    /// those in `pending`: a `KeyRange` (of no destination table) in the making.
    private var run:
        (mapping: Int, sourceEntity: Int, destinationEntity: Int, low: Int64, high: Int64, destinationLow: Int64)?
    /// Whether `insert` keeps runs of consecutive keys as key ranges (off: a row each, as before;
    /// for tests that compare the two).
    var recordsRuns = true
    /// The fewest associations a run must have to be kept as a key range rather than rows.
    static let shortestRun: Int64 = 16

    init(database: SQLiteDatabase) throws {
        self.database = database
        try database.exec(
            """
            CREATE TEMP TABLE IF NOT EXISTS cdm_association (
                mapping INTEGER NOT NULL, source_ent INTEGER NOT NULL, source_pk INTEGER NOT NULL,
                destination_ent INTEGER NOT NULL, destination_pk INTEGER NOT NULL);
            """)
    }

    /// Builds the indexes (once, at the first read: cheaper after a bulk insert than during it).
    private func ensureIndexes() throws {
        guard !hasIndexes else { return }
        try database.exec(
            """
            CREATE INDEX IF NOT EXISTS temp.cdm_association_source ON cdm_association (source_ent, source_pk, mapping);
            CREATE INDEX IF NOT EXISTS temp.cdm_association_destination ON cdm_association (mapping, destination_ent, destination_pk);
            CREATE INDEX IF NOT EXISTS temp.cdm_association_mapping ON cdm_association (mapping);
            """)
        hasIndexes = true
    }

    /// Records that `mapping` made the rows `low...high` of `destinationTable` from the source rows
    /// with the same keys, without writing a row per association: it reserves the rowids the rows
    /// would have had (a placeholder of mapping -1 holds the last one until `materialize`).
    func recordIdentity(
        mapping: Int, sourceEntity: Int, destinationEntity: Int, destinationTable: String,
        low: Int64, high: Int64, count: Int
    ) throws {
        // The buffered rows take their rowids first; key ranges already hold theirs (placeholders).
        try writeBufferedRows()
        let first = (try database.scalar("SELECT COALESCE(MAX(rowid), 0) + 1 FROM cdm_association")?.integer) ?? 1
        // Keys spread over more of the 64-bit range than rowids can reserve (INT64_MIN to INT64_MAX,
        // or a span that would leave no rowids above it): the associations are written out now.
        let (span, o1) = high.subtractingReportingOverflow(low)
        let (last, o2) = first.addingReportingOverflow(span)
        guard !o1, !o2, span >= 0, last <= Int64.max / 2 else {
            try database.run(
                """
                INSERT INTO cdm_association (mapping, source_ent, source_pk, destination_ent, destination_pk)
                SELECT ?, ?, Z_PK, ?, Z_PK FROM main.\(destinationTable) WHERE Z_PK BETWEEN ? AND ? ORDER BY Z_PK
                """,
                [
                    .integer(Int64(mapping)), .integer(Int64(sourceEntity)), .integer(Int64(destinationEntity)),
                    .integer(low), .integer(high),
                ])
            identities[mapping] = nil
            return
        }
        try database.run(
            "INSERT INTO cdm_association (rowid, mapping, source_ent, source_pk, destination_ent, destination_pk) VALUES (?, -1, 0, 0, 0, 0)",
            [.integer(last)])
        identities[mapping] = IdentityRange(
            mapping: mapping, sourceEntity: sourceEntity, destinationEntity: destinationEntity,
            destinationTable: destinationTable, low: low, high: high, count: count, firstRowID: first)
    }

    /// Writes the implied associations of the identity mappings among `mappings` into the table,
    /// at their reserved rowids (the placeholder gives way to the row of key `high`), and builds
    /// the indexes: after this the table alone answers for `mappings`.
    func materialize(_ mappings: [Int]) throws {
        try writePending()
        for id in mappings {
            guard let range = identities.removeValue(forKey: id) else { continue }
            try database.run(
                """
                INSERT OR REPLACE INTO cdm_association (rowid, mapping, source_ent, source_pk, destination_ent, destination_pk)
                SELECT ? + (Z_PK - ?), ?, ?, Z_PK, ?, Z_PK FROM main.\(range.destinationTable) WHERE Z_PK BETWEEN ? AND ? ORDER BY Z_PK
                """,
                [
                    .integer(range.firstRowID), .integer(range.low), .integer(Int64(range.mapping)),
                    .integer(Int64(range.sourceEntity)),
                    .integer(Int64(range.destinationEntity)), .integer(range.low), .integer(range.high),
                ])
        }
        try ensureIndexes()
    }

    /// Records one association (Core Data's `associateSourceInstance:withDestinationInstance:
    /// forEntityMapping:`): buffered, written with the next chunk or before the next read.
    func insert(mapping: Int, source: ManagedObject, destination: ManagedObject) throws {
        if !identities.isEmpty, identities[mapping] != nil { try materialize([mapping]) }
        let sourceKey = source.objectID.primaryKey
        let destinationKey = destination.objectID.primaryKey
        let sourceEntity = source.entity.entityNumber
        let destinationEntity = destination.entity.entityNumber
        if var current = run, current.mapping == mapping, current.sourceEntity == sourceEntity,
            current.destinationEntity == destinationEntity, current.high < Int64.max / 4,
            current.destinationLow < Int64.max / 4, sourceKey == current.high + 1,
            destinationKey == current.destinationLow + (sourceKey - current.low)
        {
            current.high = sourceKey
            run = current
            return
        }
        try endRun()
        if recordsRuns, sourceKey >= 1, destinationKey >= 1, sourceKey < Int64.max / 4, destinationKey < Int64.max / 4 {
            run = (mapping, sourceEntity, destinationEntity, sourceKey, sourceKey, destinationKey)
            return
        }
        try append(mapping, sourceEntity, sourceKey, destinationEntity, destinationKey)
    }

    /// Buffers one association row, writing the buffer when a chunk is full.
    private func append(_ mapping: Int, _ sourceEntity: Int, _ sourceKey: Int64, _ destinationEntity: Int, _ key: Int64)
        throws
    {
        pending.append(Int64(mapping))
        pending.append(Int64(sourceEntity))
        pending.append(sourceKey)
        pending.append(Int64(destinationEntity))
        pending.append(key)
        if pending.count >= Self.pendingChunk * 5 { try writeBufferedRows() }
    }

    /// Ends the run of consecutive keys: kept as a key range when long enough (and its rowids can
    /// be reserved), else buffered as rows.
    private func endRun() throws {
        guard let current = run else { return }
        run = nil
        if current.high - current.low + 1 >= Self.shortestRun,
            try recordKeyRanges(
                mapping: current.mapping, sourceEntity: current.sourceEntity,
                destinationEntity: current.destinationEntity, destinationTable: nil,
                runs: [(current.low, current.high, current.destinationLow)])
        {
            return
        }
        for key in current.low...current.high {
            try append(
                current.mapping, current.sourceEntity, key, current.destinationEntity,
                current.destinationLow + (key - current.low))
        }
    }

    /// Writes the buffered associations, in the order they were recorded, and the rows of the key
    /// ranges at their reserved rowids. Every read of the table runs this first; so must any SQL
    /// that writes the table directly (the rowids keep the order; `writeBufferedRows` is enough
    /// for that).
    func writePending() throws {
        try writeBufferedRows()
        guard !keyRanges.isEmpty else { return }
        for range in keyRanges.values.joined() {
            guard let destinationTable = range.destinationTable else {
                // One SQL text for every such range (prepared once, not a statement per range).
                try database.run(
                    """
                    WITH RECURSIVE cdm_key(k) AS (VALUES(?) UNION ALL SELECT k + 1 FROM cdm_key WHERE k < ?)
                    INSERT OR REPLACE INTO cdm_association (rowid, mapping, source_ent, source_pk, destination_ent, destination_pk)
                    SELECT ? + (k - ?), ?, ?, k, ?, k + ? FROM cdm_key
                    """,
                    [
                        .integer(range.low), .integer(range.high), .integer(range.firstRowID), .integer(range.low),
                        .integer(Int64(range.mapping)), .integer(Int64(range.sourceEntity)),
                        .integer(Int64(range.destinationEntity)), .integer(range.destinationLow - range.low),
                    ])
                continue
            }
            try database.run(
                """
                INSERT OR REPLACE INTO cdm_association (rowid, mapping, source_ent, source_pk, destination_ent, destination_pk)
                SELECT ? + (Z_PK - ?), ?, ?, Z_PK - ?, ?, Z_PK FROM main.\(destinationTable)
                WHERE Z_PK BETWEEN ? AND ? ORDER BY Z_PK
                """,
                [
                    .integer(range.firstRowID), .integer(range.destinationLow), .integer(Int64(range.mapping)),
                    .integer(Int64(range.sourceEntity)), .integer(range.destinationLow - range.low),
                    .integer(Int64(range.destinationEntity)), .integer(range.destinationLow),
                    .integer(range.destinationHigh),
                ])
        }
        keyRanges = [:]
    }

    /// Writes the associations buffered by `insert`, leaving the key ranges as they are: what SQL
    /// that adds rows to the table needs first (rowids in the order made).
    func writeBufferedRows() throws {
        try endRun()
        guard !pending.isEmpty else { return }
        let rows = pending
        pending.removeAll(keepingCapacity: true)
        try pendingWriter.write(rows)
    }

    /// Records that `mapping` made, for each run, the destination instances with consecutive keys
    /// from `destinationLow` from the source instances with keys `low...high` (see `KeyRange`),
    /// without writing a row per association: the rowids the rows would have had are reserved. A
    /// run continuing the mapping's last range (the next source and destination keys, nothing
    /// recorded in between) extends it.
    ///
    /// - returns: False, recording nothing, when the rowids cannot be reserved (keys spread over
    ///   more of the 64-bit range than rowids can): the caller writes the rows.
    func recordKeyRanges(
        mapping: Int, sourceEntity: Int, destinationEntity: Int, destinationTable: String?,
        runs: [(low: Int64, high: Int64, destinationLow: Int64)]
    ) throws -> Bool {
        try writeBufferedRows()
        var lastRowID = (try database.scalar("SELECT COALESCE(MAX(rowid), 0) FROM cdm_association")?.integer) ?? 0
        var ranges = keyRanges[mapping] ?? []
        // Only the mapping's last range can be extended, and its placeholder then moves to its new end.
        let existing = ranges.count
        let previousEnd = ranges.last?.lastRowID
        for run in runs {
            let (span, o1) = run.high.subtractingReportingOverflow(run.low)
            let (destinationHigh, o2) = run.destinationLow.addingReportingOverflow(span)
            let (rowEnd, o3) = lastRowID.addingReportingOverflow(span)
            guard !o1, !o2, !o3, span >= 0, run.destinationLow >= 1, destinationHigh < Int64.max / 2,
                rowEnd < Int64.max / 2
            else { return false }
            if var last = ranges.last, last.sourceEntity == sourceEntity, last.destinationEntity == destinationEntity,
                last.destinationTable == destinationTable, last.lastRowID == lastRowID, last.high < run.low,
                last.high + 1 == run.low,
                last.destinationHigh + 1 == run.destinationLow
            {
                last.high = run.high
                ranges[ranges.count - 1] = last
            } else {
                ranges.append(
                    KeyRange(
                        mapping: mapping, sourceEntity: sourceEntity, destinationEntity: destinationEntity,
                        destinationTable: destinationTable, low: run.low, high: run.high,
                        destinationLow: run.destinationLow, firstRowID: lastRowID + 1))
            }
            lastRowID += span + 1
        }
        if existing > 0, let previousEnd, ranges[existing - 1].lastRowID != previousEnd {
            try database.run(
                "UPDATE cdm_association SET rowid = ? WHERE rowid = ?",
                [.integer(ranges[existing - 1].lastRowID), .integer(previousEnd)])
        }
        for range in ranges[existing...] {
            try database.run(
                "INSERT INTO cdm_association (rowid, mapping, source_ent, source_pk, destination_ent, destination_pk) VALUES (?, -1, 0, 0, 0, 0)",
                [.integer(range.lastRowID)])
        }
        keyRanges[mapping] = ranges
        return true
    }

    /// The mapping's key ranges when few enough to read as SQL; else they are written into the table.
    private func keyRangesReadable(_ mapping: Int) throws -> [KeyRange] {
        guard let ranges = keyRanges[mapping] else { return [] }
        if ranges.count <= Self.keyRangesInSQL { return ranges }
        try writePending()
        return []
    }

    func count(mapping: Int) throws -> Int {
        if let range = identities[mapping] { return range.count }
        try writeBufferedRows()
        // One scan: the indexes are built by the first look-up that needs them, not for a count.
        let rows = Int(
            try database.scalar("SELECT COUNT(*) FROM cdm_association WHERE mapping = ?", [.integer(Int64(mapping))])?
                .integer ?? 0)
        return rows + (keyRanges[mapping] ?? []).reduce(0) { $0 + $1.count }
    }

    /// How many distinct destination instances a mapping made.
    func destinationCount(mapping: Int) throws -> Int {
        try writePending()
        if let range = identities[mapping] { return range.count }
        try ensureIndexes()
        return Int(
            try database.scalar(
                "SELECT COUNT(*) FROM (SELECT DISTINCT destination_ent, destination_pk FROM cdm_association WHERE mapping = ?)",
                [.integer(Int64(mapping))])?.integer ?? 0)
    }

    /// Walks the distinct destination instances a mapping made, once each, in the order they were
    /// first associated, a chunk at a time (the body may write while the walk goes on). Each comes
    /// with its first association and whether it has more than one source.
    func forEachDestination(mapping: Int, _ body: (Association, _ hasSeveralSources: Bool) throws -> Void) throws {
        try materialize([mapping])
        var lastRowID: Int64 = 0
        while true {
            // An association is the first of its destination when none for the same destination and
            // mapping came before it (one index probe each, through the destination index).
            let rows = try database.rows(
                """
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
                    let de = row[3].integer, let dp = row[4].integer, let sources = row[5].integer
                else { continue }
                lastRowID = rowID
                try body(
                    Association(sourceEntity: Int(se), sourcePK: sp, destinationEntity: Int(de), destinationPK: dp),
                    sources > 1)
            }
        }
    }

    /// Walks every association of a mapping in the order made, a chunk at a time.
    func forEachAssociation(mapping: Int, _ body: (Association) throws -> Void) throws {
        try materialize([mapping])
        var lastRowID: Int64 = 0
        while true {
            let rows = try database.rows(
                """
                SELECT rowid, source_ent, source_pk, destination_ent, destination_pk FROM cdm_association
                WHERE mapping = ? AND rowid > ? ORDER BY rowid LIMIT \(chunkSize)
                """, [.integer(Int64(mapping)), .integer(lastRowID)])
            if rows.isEmpty { return }
            for row in rows {
                guard row.count == 5, let rowID = row[0].integer, let se = row[1].integer, let sp = row[2].integer,
                    let de = row[3].integer, let dp = row[4].integer
                else { continue }
                lastRowID = rowID
                try body(
                    Association(sourceEntity: Int(se), sourcePK: sp, destinationEntity: Int(de), destinationPK: dp))
            }
        }
    }

    /// (entity number, primary key) of the destinations made from `source` by any of `mappings`, in the order made.
    func destinations(mappings: [Int], source: ManagedObject) throws -> [(Int, Int64)] {
        try materialize(mappings)
        let statement: SQLiteStatement
        var arguments: [Value] = [.integer(Int64(source.entity.entityNumber)), .integer(source.objectID.primaryKey)]
        if mappings.count == 1 {
            statement = try database.prepare(
                "SELECT destination_ent, destination_pk FROM cdm_association WHERE source_ent = ? AND source_pk = ? AND mapping = ? ORDER BY rowid"
            )
            arguments.append(.integer(Int64(mappings[0])))
        } else {
            let list = mappings.map(String.init).joined(separator: ",")
            statement = try database.prepare(
                "SELECT destination_ent, destination_pk FROM cdm_association WHERE source_ent = ? AND source_pk = ? AND mapping IN (\(list)) ORDER BY rowid"
            )
        }
        return try pairs(statement, arguments)
    }

    /// (entity number, primary key) of the sources `mapping` made `destination` from.
    func sources(mapping: Int, destination: ManagedObject) throws -> [(Int, Int64)] {
        try materialize([mapping])
        let statement = try database.prepare(
            "SELECT source_ent, source_pk FROM cdm_association WHERE destination_ent = ? AND destination_pk = ? AND mapping = ? ORDER BY rowid"
        )
        return try pairs(
            statement,
            [
                .integer(Int64(destination.entity.entityNumber)), .integer(destination.objectID.primaryKey),
                .integer(Int64(mapping)),
            ])
    }

    /// Per source entity number, how many distinct source instances some mapping took.
    /// An identity mapping adds its count as it is, unless another mapping took instances of the
    /// same source entity (which could be the same ones): then its keys (the rows of its range in
    /// the destination table) are counted in SQL with the others', without writing them out.
    /// Key ranges count the same way: those of one mapping have distinct source keys.
    func distinctSourceCounts() throws -> [Int: Int] {
        try writeBufferedRows()
        if keyRanges.values.contains(where: { $0.count > Self.keyRangesInSQL }) { try writePending() }
        // Through the source index, which has the rows in (entity, key) order: no sort.
        try database.exec(
            "CREATE INDEX IF NOT EXISTS temp.cdm_association_source ON cdm_association (source_ent, source_pk, mapping)"
        )
        var counts: [Int: Int] = [:]
        for row in try database.rows(
            "SELECT source_ent, COUNT(DISTINCT source_pk) FROM cdm_association WHERE mapping >= 0 GROUP BY source_ent")
        {
            if row.count == 2, let entity = row[0].integer, let count = row[1].integer {
                counts[Int(entity)] = Int(count)
            }
        }
        // Per source entity, each range's key SQL, the mapping it is of and its count.
        var bySource: [Int: [(sql: String, mapping: Int, count: Int)]] = [:]
        for range in identities.values {
            bySource[range.sourceEntity, default: []].append(
                (
                    "SELECT Z_PK FROM main.\(range.destinationTable) WHERE Z_PK BETWEEN \(range.low) AND \(range.high)",
                    range.mapping, range.count
                ))
        }
        for range in keyRanges.values.joined() {
            bySource[range.sourceEntity, default: []].append(
                ("SELECT source_pk FROM (\(range.pairsSQL))", range.mapping, range.count))
        }
        for (entity, ranges) in bySource {
            if counts[entity] == nil, let mapping = ranges.first?.mapping, ranges.allSatisfy({ $0.mapping == mapping })
            {
                counts[entity] = ranges.reduce(0) { $0 + $1.count }
                continue
            }
            let keys =
                ["SELECT source_pk FROM cdm_association WHERE source_ent = \(entity) AND mapping >= 0"]
                + ranges.map { $0.sql }
            counts[entity] = Int(
                try database.scalar("SELECT COUNT(*) FROM (\(keys.joined(separator: " UNION ")))")?.integer ?? 0)
        }
        return counts
    }

    /// SQL selecting the keys (`Z_PK`) of the destination instances `mapping` made, for a loss count.
    func destinationKeysSQL(mapping: Int) throws -> String {
        try writeBufferedRows()
        if let range = identities[mapping] {
            return "SELECT Z_PK FROM main.\(range.destinationTable) WHERE Z_PK BETWEEN \(range.low) AND \(range.high)"
        }
        let ranges = try keyRangesReadable(mapping)
        try ensureIndexes()
        return
            (["SELECT destination_pk FROM temp.cdm_association WHERE mapping = \(mapping)"]
            + ranges.map { "SELECT destination_pk FROM (\($0.pairsSQL))" }).joined(separator: " UNION ALL ")
    }

    /// SQL selecting `source_pk, destination_pk` of every association of `mapping`, for a loss count.
    func associationsSQL(mapping: Int) throws -> String {
        try writeBufferedRows()
        if let range = identities[mapping] {
            return
                "SELECT Z_PK AS source_pk, Z_PK AS destination_pk FROM main.\(range.destinationTable) WHERE Z_PK BETWEEN \(range.low) AND \(range.high)"
        }
        let ranges = try keyRangesReadable(mapping)
        try ensureIndexes()
        return
            (["SELECT source_pk, destination_pk FROM temp.cdm_association WHERE mapping = \(mapping)"]
            + ranges.map { $0.pairsSQL }).joined(separator: " UNION ALL ")
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
            throw MigrationError(
                .migration, "an association names entity number \(number), which the model does not have")
        }
        return entity
    }
}
