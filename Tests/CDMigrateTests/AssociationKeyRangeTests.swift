import CSQLite
import XCTest

@testable import CDMigrate

/// The batch default numbered in key order records the associations of consecutive keys as key
/// ranges (`AssociationTable.KeyRange`) instead of a row each. The same migration run both ways
/// must give the same destination row for row, the same report (counts, untaken instances,
/// losses) and the same answers to Core Data's look-ups, across batches, gaps in the keys, extra
/// associations made between the ranges, several entity mappings and a run that fails midway.
final class AssociationKeyRangeTests: XCTestCase, LibraryToShelfMigration {

    /// Core Data's default per batch, numbered as instances made one by one; optionally an extra
    /// instance associated with the batch's first source row (a row between the ranges), and a
    /// failure after the default of one batch. At the end of stage 1 it asks Core Data's look-ups
    /// about every source and destination instance of its mapping.
    final class NumberedBatches: EntityMigrationPolicy {
        var extraEntity: String?
        var failAtBatch: Int?
        var batches = 0
        var keyRangesSeen = 0
        var lookups: [String] = []
        override var createsDestinationInstancesInBatches: Bool { true }
        override func createDestinationInstances(
            forSourceBatch batch: SourceBatch, in mapping: EntityMapping, manager: MigrationManager
        ) throws {
            batches += 1
            let made = try batch.applyDefault(numbered: true)
            XCTAssertEqual(made.count, batch.count)
            if let fail = failAtBatch, batches == fail {
                throw MigrationError(.entityMigrationPolicy, "batch \(fail) refused")
            }
            if let extra = extraEntity, batches % 2 == 0, let first = batch.sourceKeys.first {
                let keys = try manager.createDestinationInstances(
                    entityName: extra, values: [["title": .string("extra \(first)")]])
                try batch.associate(destinationEntityName: extra, sourceKeys: [first], destinationKeys: keys)
            }
        }

        override func endInstanceCreation(forMapping mapping: EntityMapping, manager: MigrationManager) throws {
            keyRangesSeen = manager.run.associations?.keyRanges[manager.mappingID(mapping)]?.count ?? 0
            lookups += try LibraryToShelf.lookups(of: mapping, manager: manager)
        }
    }

    /// Core Data's default per batch, numbered as instances made one by one, and nothing else.
    final class DefaultInBatches: EntityMigrationPolicy {
        override var createsDestinationInstancesInBatches: Bool { true }
        override func createDestinationInstances(
            forSourceBatch batch: SourceBatch, in mapping: EntityMapping, manager: MigrationManager
        ) throws {
            _ = try batch.applyDefault(numbered: true)
        }
    }

    var scratch: ScratchDirectory!
    var v1: ManagedObjectModel!
    var v2: ManagedObjectModel!

    override func setUpWithError() throws {
        scratch = ScratchDirectory()
        v1 = try ManagedObjectModel(json: LibraryToShelf.library)
        v2 = try ManagedObjectModel(json: LibraryToShelf.shelf)
    }

    func migrate(
        _ source: String, keyRanges: Bool, batchSize: Int = 32, failAtBatch: Int? = nil, name: String? = nil
    ) throws -> LibraryToShelf.Run {
        let writers = NumberedBatches()
        let volumes = NumberedBatches()
        volumes.extraEntity = "Volume"
        volumes.failAtBatch = failAtBatch
        let manager = try MigrationManager(sourceModel: v1, destinationModel: v2, mappingModel: try mapping())
        manager.batchSize = batchSize
        manager.recordsAssociationKeyRanges = keyRanges
        manager.registerPolicy(named: "Writers") { writers }
        manager.registerPolicy(named: "Volumes") { volumes }
        let out = scratch.file(name ?? "out-\(keyRanges)-\(batchSize).sqlite")
        let report = try manager.migrateStore(from: source, to: out)
        return LibraryToShelf.Run(
            tables: tables(out), report: report.json.serialized(), lookups: writers.lookups + volumes.lookups,
            keyRanges: [writers.keyRangesSeen, volumes.keyRangesSeen])
    }

    /// A declarative mapping copied by SQL after a mapping that recorded key ranges writes only the
    /// buffered associations before its INSERTs (the rowids stay in the order made): the earlier
    /// mapping's ranges stay ranges, not a row each, and the store is the one written row by row.
    func testAnSQLCopyAfterKeyRangesLeavesThemUnwritten() throws {
        let source = try makeLibrary()
        let copy = try MappingModel(
            json: """
                {"entityMappings": [
                  {"name": "AuthorToWriter", "sourceEntity": "Author", "destinationEntity": "Writer", "type": "custom",
                   "predicate": "TRUEPREDICATE", "policy": "Writers", "attributeMappings": {"name": "$source.name"}},
                  {"name": "BookToVolume", "sourceEntity": "Book", "destinationEntity": "Volume", "type": "copy",
                   "predicate": "TRUEPREDICATE", "attributeMappings": {"title": "$source.title"}}
                ]}
                """)
        var outputs: [[String]] = []
        for keyRanges in [false, true] {
            let manager = try MigrationManager(sourceModel: v1, destinationModel: v2, mappingModel: copy)
            manager.batchSize = 32
            manager.recordsAssociationKeyRanges = keyRanges
            manager.registerPolicy(named: "Writers") { DefaultInBatches() }
            var rangesAfterCopy: Int?
            manager.progressHandler = { [unowned manager] progress in
                // The last call of stage 1: the SQL copy has run.
                if progress.stage == .createDestinationInstances, progress.entityMappingName == "BookToVolume" {
                    rangesAfterCopy = manager.run.associations?.keyRanges[0]?.count ?? 0
                }
                return true
            }
            let out = scratch.file("copy-\(keyRanges).sqlite")
            let report = try manager.migrateStore(from: source, to: out)
            XCTAssertEqual(report.mappings.element(at: 1)?.instancesBySQL, true, "BookToVolume copied by SQL")
            XCTAssertEqual(rangesAfterCopy, keyRanges ? 1 : 0, "AuthorToWriter's ranges after the SQL copy")
            outputs.append(tables(out))
        }
        XCTAssertEqual(outputs[0], outputs[1])
    }

    func testKeyRangesGiveTheRowsLookUpsAndReportOfARowPerAssociation() throws {
        let source = try makeLibrary()
        for batchSize in [32, 1_000] {
            let rows = try migrate(source, keyRanges: false, batchSize: batchSize)
            let ranges = try migrate(source, keyRanges: true, batchSize: batchSize)
            XCTAssertEqual(rows.keyRanges, [0, 0])
            // Writers: one range whatever the batches. Volumes in batches of 32: the extra instances and
            // the gaps split the ranges, the batches of scattered keys are rows; in one batch, too
            // scattered for ranges: rows.
            XCTAssertEqual(ranges.keyRanges[0], 1)
            if batchSize == 32 {
                XCTAssertGreaterThan(ranges.keyRanges[1], 2)
            } else {
                XCTAssertEqual(ranges.keyRanges[1], 0)
            }
            XCTAssertEqual(ranges.tables, rows.tables)
            XCTAssertEqual(ranges.report, rows.report)
            XCTAssertEqual(ranges.lookups, rows.lookups)
            // What is compared is there: every volume has its writer, the extras their source, a loss is reported.
            XCTAssertTrue(rows.report.contains("\"associations\":40"), rows.report)
            XCTAssertTrue(rows.report.contains("\"losses\":[{"), rows.report)
            XCTAssertTrue(rows.lookups.contains("1 -> [1]"), "\(rows.lookups.prefix(3))")
            if batchSize == 32 {
                XCTAssertTrue(
                    rows.lookups.contains { $0.contains(", ") && $0.contains("->") }, "a source with two destinations")
            }
            let volumes = rows.tables.drop { $0 != "table ZVOLUME" }.dropFirst().prefix { !$0.hasPrefix("table ") }
            XCTAssertEqual(volumes.filter { $0.hasSuffix("|NULL") && !$0.contains("extra") }, [])
        }
    }

    func testARunThatFailsMidwayLeavesNothingAndARerunGivesTheSameRows() throws {
        let source = try makeLibrary()
        let expected = try migrate(source, keyRanges: false)
        XCTAssertThrowsError(try migrate(source, keyRanges: true, failAtBatch: 3, name: "failed.sqlite")) { error in
            XCTAssertTrue("\(error)".contains("batch 3 refused"), "\(error)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: scratch.file("failed.sqlite")))
        let rerun = try migrate(source, keyRanges: true, name: "failed.sqlite")
        XCTAssertEqual(rerun.tables, expected.tables)
        XCTAssertEqual(rerun.lookups, expected.lookups)
    }

    /// The table alone: ranges extended while nothing comes between them, split otherwise; counts
    /// without writing them; their rows at the rowids reserved, between the rows made around them.
    func testKeyRangesReserveTheirRowidsAndMergeOnlyWhenConsecutive() throws {
        let path = scratch.file("d.sqlite")
        try makeStore(path, v2) { store in
            for i in 1...20 { try insert(store, "Volume", ["title": .string("V\(i)")]) }
        }
        let store = try PersistentStore.open(at: path, model: v2, readOnly: false)
        defer { store.close() }
        let table = try AssociationTable(database: store.database)
        let volume = try XCTUnwrap(v2.entity(named: "Volume"))
        let book = try XCTUnwrap(v1.entity(named: "Book"))
        let quoted = SQLiteDatabase.quote(store.layout.table(for: volume))
        func record(_ mapping: Int, _ runs: [(low: Int64, high: Int64, destinationLow: Int64)]) throws {
            XCTAssertTrue(
                try table.recordKeyRanges(
                    mapping: mapping, sourceEntity: book.entityNumber, destinationEntity: volume.entityNumber,
                    destinationTable: quoted, runs: runs))
        }
        try record(0, [(101, 104, 1), (105, 106, 5)])  // consecutive on both sides: one range
        try record(0, [(107, 108, 7)])  // the next batch, consecutive: still one
        XCTAssertEqual(table.keyRanges[0]?.count, 1)
        let source = store.fault(entity: volume, primaryKey: 9)
        try table.insert(mapping: 0, source: source, destination: store.fault(entity: volume, primaryKey: 9))
        try record(0, [(109, 110, 10)])  // a row came between: a new range
        try record(0, [(120, 121, 12)])  // a gap in the source keys: a new range
        try record(1, [(1, 3, 14)])
        XCTAssertEqual(table.keyRanges[0]?.count, 3)
        XCTAssertEqual(try table.count(mapping: 0), 13)
        XCTAssertEqual(try table.count(mapping: 1), 3)
        XCTAssertEqual(table.keyRanges.count, 2, "counting writes nothing")
        XCTAssertEqual(try table.distinctSourceCounts(), [volume.entityNumber: 1, book.entityNumber: 15])
        var order: [String] = []
        try table.forEachAssociation(mapping: 0) { order.append("\($0.sourcePK)>\($0.destinationPK)") }
        XCTAssertEqual(
            order,
            [
                "101>1", "102>2", "103>3", "104>4", "105>5", "106>6", "107>7", "108>8", "9>9", "109>10", "110>11",
                "120>12", "121>13",
            ])
        XCTAssertTrue(table.keyRanges.isEmpty, "written for the walk")
        XCTAssertEqual(
            try table.destinations(mappings: [0, 1], source: store.fault(entity: book, primaryKey: 2)).map { $0.1 },
            [15])
        XCTAssertEqual(try table.count(mapping: 0), 13)
        XCTAssertEqual(try table.destinationCount(mapping: 0), 13)
    }

    func testCountingTheAssociationsSortsNothing() throws {
        let path = scratch.file("d.sqlite")
        try makeStore(path, v2) { _ in }
        let store = try PersistentStore.open(at: path, model: v2, readOnly: false)
        defer { store.close() }
        let table = try AssociationTable(database: store.database)
        _ = try table.distinctSourceCounts()
        _ = try table.destinationCount(mapping: 0)
        for query in [
            "SELECT source_ent, COUNT(DISTINCT source_pk) FROM cdm_association WHERE mapping >= 0 GROUP BY source_ent",
            "SELECT COUNT(*) FROM (SELECT DISTINCT destination_ent, destination_pk FROM cdm_association WHERE mapping = 0)",
        ] {
            let plan = try store.database.rows("EXPLAIN QUERY PLAN " + query).compactMap { row -> String? in
                if case .text(let detail) = row.last { return detail }
                return nil
            }
            XCTAssertFalse(plan.contains { $0.contains("TEMP B-TREE") }, "\(query): \(plan)")
        }
    }
}
