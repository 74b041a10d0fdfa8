import CSQLite
import XCTest

@testable import CDMigrate

/// Associations made one at a time by a policy's single-row hook, each new instance with its
/// source in key order, are kept as runs of consecutive keys (`AssociationTable.KeyRange` of no
/// destination table) instead of a row each. The same migration run both ways must give the same
/// destination row for row, the same report and the same answers to Core Data's look-ups, across
/// gaps in the source keys, extra instances associated between the runs, look-ups in the middle
/// of stage 1 and a run that fails midway.
final class AssociationRunTests: XCTestCase, LibraryToShelfMigration {
    /// Core Data's default per source instance; every `extraEvery`-th call also an extra instance
    /// associated with the same source (it breaks the run of destination keys), every
    /// `lookUpEvery`-th call a look-up of what the source made (it reads the associations in the
    /// middle of the stage); a failure at call `failAt`. At the end of stage 1, Core Data's look-ups
    /// about every source and destination instance of the mapping.
    final class RowByRow: EntityMigrationPolicy {
        var extraEntity: String?
        var extraEvery = 0
        var lookUpEvery = 0
        var failAt: Int?
        var calls = 0
        var keyRangesSeen = 0
        var lookups: [String] = []

        override func createDestinationInstances(
            forSource sInstance: ManagedObject, in mapping: EntityMapping, manager: MigrationManager
        ) throws {
            calls += 1
            if let fail = failAt, calls == fail {
                throw MigrationError(.entityMigrationPolicy, "call \(fail) refused")
            }
            try super.createDestinationInstances(forSource: sInstance, in: mapping, manager: manager)
            if let extra = extraEntity, extraEvery > 0, calls % extraEvery == 0 {
                let made = try manager.createDestinationInstance(entityName: extra)
                try made.setValue(.string("extra \(sInstance.objectID.primaryKey)"), forKey: "title")
                try manager.associate(sourceInstance: sInstance, withDestinationInstance: made, for: mapping)
            }
            if lookUpEvery > 0, calls % lookUpEvery == 0 {
                let made = try manager.destinationInstances(
                    forEntityMappingName: mapping.name, sourceInstances: [sInstance])
                lookups.append("during \(sInstance.objectID.primaryKey) -> \(made.map { $0.objectID.primaryKey })")
            }
        }

        override func endInstanceCreation(forMapping mapping: EntityMapping, manager: MigrationManager) throws {
            try manager.run.associations?.writeBufferedRows()  // the run still open becomes a range
            keyRangesSeen = manager.run.associations?.keyRanges[manager.mappingID(mapping)]?.count ?? 0
            lookups += try LibraryToShelf.lookups(of: mapping, manager: manager)
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
        _ source: String, runs: Bool, extraEvery: Int = 0, lookUpEvery: Int = 0, failAt: Int? = nil,
        name: String? = nil
    ) throws -> LibraryToShelf.Run {
        let writers = RowByRow()
        let volumes = RowByRow()
        volumes.extraEntity = "Volume"
        volumes.extraEvery = extraEvery
        volumes.lookUpEvery = lookUpEvery
        volumes.failAt = failAt
        let manager = try MigrationManager(sourceModel: v1, destinationModel: v2, mappingModel: try mapping())
        manager.batchSize = 50
        manager.recordsAssociationKeyRanges = runs
        manager.registerPolicy(named: "Writers") { writers }
        manager.registerPolicy(named: "Volumes") { volumes }
        let out = scratch.file(name ?? "out-\(runs)-\(extraEvery)-\(lookUpEvery).sqlite")
        let report = try manager.migrateStore(from: source, to: out)
        return LibraryToShelf.Run(
            tables: tables(out), report: report.json.serialized(), lookups: writers.lookups + volumes.lookups,
            keyRanges: [writers.keyRangesSeen, volumes.keyRangesSeen])
    }

    func testRunsOfConsecutiveKeysGiveTheRowsLookUpsAndReportOfARowPerAssociation() throws {
        let source = try makeLibrary()
        for (extraEvery, lookUpEvery) in [(0, 0), (37, 0), (0, 23), (19, 29)] {
            let rows = try migrate(source, runs: false, extraEvery: extraEvery, lookUpEvery: lookUpEvery)
            let runs = try migrate(source, runs: true, extraEvery: extraEvery, lookUpEvery: lookUpEvery)
            XCTAssertEqual(rows.keyRanges, [0, 0])
            // Writers: one run. Volumes: the gaps and the extras split the runs, the dense stretch of
            // deletions leaves runs too short to keep; a look-up writes the ranges so far as rows.
            XCTAssertEqual(runs.keyRanges[0], 1, "\(extraEvery) \(lookUpEvery)")
            XCTAssertGreaterThan(runs.keyRanges[1], lookUpEvery > 0 ? 0 : 2, "\(extraEvery) \(lookUpEvery)")
            XCTAssertEqual(runs.tables, rows.tables, "\(extraEvery) \(lookUpEvery)")
            XCTAssertEqual(runs.report, rows.report, "\(extraEvery) \(lookUpEvery)")
            XCTAssertEqual(runs.lookups, rows.lookups, "\(extraEvery) \(lookUpEvery)")
            // What is compared is there: every volume its writer, the extras their source.
            XCTAssertTrue(rows.lookups.contains("1 -> [1]"), "\(rows.lookups.prefix(3))")
            let volumes = rows.tables.drop { $0 != "table ZVOLUME" }.dropFirst().prefix { !$0.hasPrefix("table ") }
            XCTAssertEqual(volumes.filter { $0.hasSuffix("|NULL") }, [])
            if extraEvery > 0 {
                XCTAssertTrue(
                    rows.lookups.contains { $0.contains(", ") && $0.contains("->") }, "a source with two destinations")
            }
            if lookUpEvery > 0 {
                XCTAssertTrue(rows.lookups.contains { $0.hasPrefix("during ") && !$0.hasSuffix("[]") })
            }
        }
    }

    func testARunThatFailsMidwayLeavesNothingAndARerunGivesTheSameRows() throws {
        let source = try makeLibrary()
        let expected = try migrate(source, runs: false, extraEvery: 19)
        XCTAssertThrowsError(try migrate(source, runs: true, extraEvery: 19, failAt: 120, name: "failed.sqlite")) {
            error in
            XCTAssertTrue("\(error)".contains("call 120 refused"), "\(error)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: scratch.file("failed.sqlite")))
        let rerun = try migrate(source, runs: true, extraEvery: 19, name: "failed.sqlite")
        XCTAssertEqual(rerun.tables, expected.tables)
        XCTAssertEqual(rerun.lookups, expected.lookups)
        XCTAssertEqual(rerun.report, expected.report)
    }

    /// The table alone: a run of consecutive keys kept as one range across commits, cut by a row
    /// that does not continue it, too short ones written as rows; every row at its place in the
    /// order made.
    func testRunsBecomeRangesOnlyWhenLongEnoughAndKeepTheOrderMade() throws {
        let path = scratch.file("d.sqlite")
        try makeStore(path, v2) { store in
            for i in 1...80 { try insert(store, "Volume", ["title": .string("V\(i)")]) }
        }
        let store = try PersistentStore.open(at: path, model: v2, readOnly: false)
        defer { store.close() }
        let table = try AssociationTable(database: store.database)
        let volume = try XCTUnwrap(v2.entity(named: "Volume"))
        let book = try XCTUnwrap(v1.entity(named: "Book"))
        func associate(_ source: Int64, _ destination: Int64) throws {
            try table.insert(
                mapping: 0, source: store.fault(entity: book, primaryKey: source),
                destination: store.fault(entity: volume, primaryKey: destination))
        }
        var expected: [String] = []
        for k in Int64(1)...40 {
            try associate(100 + k, k)  // a run of 40
            expected.append("\(100 + k)>\(k)")
            // A read in the middle: the run so far becomes a range, which what follows extends.
            if k == 18 { XCTAssertEqual(try table.count(mapping: 0), 18) }
        }
        try associate(5, 41)  // not the next source key: a new run, of one
        expected.append("5>41")
        for k in Int64(42)...50 {
            try associate(300 + k, k)  // a run of 9: too short, rows
            expected.append("\(300 + k)>\(k)")
        }
        for k in Int64(51)...80 {
            try associate(400 + k, k + 1000)  // a run of 30, destination keys offset from the source's
            expected.append("\(400 + k)>\(k + 1000)")
        }
        XCTAssertEqual(try table.count(mapping: 0), 80)
        XCTAssertEqual(table.keyRanges[0]?.count, 2, "the first run (extended after the count), the last one")
        XCTAssertEqual(try table.distinctSourceCounts(), [book.entityNumber: 80])
        XCTAssertEqual(try table.destinationCount(mapping: 0), 80)
        var order: [String] = []
        try table.forEachAssociation(mapping: 0) { order.append("\($0.sourcePK)>\($0.destinationPK)") }
        XCTAssertEqual(order, expected)
        XCTAssertTrue(table.keyRanges.isEmpty, "written for the walk")
        XCTAssertEqual(
            try table.destinations(mappings: [0], source: store.fault(entity: book, primaryKey: 455)).map { $0.1 },
            [1055])
    }

    /// Runs written out by look-ups again and again: the same rows as a row each, and one statement
    /// for all the ranges written (no statement kept per range: memory does not grow with the runs).
    func testRunsWrittenOutByLookUpsKeepNoStatementPerRange() throws {
        let path = scratch.file("d.sqlite")
        try makeStore(path, v2) { _ in }
        let store = try PersistentStore.open(at: path, model: v2, readOnly: false)
        defer { store.close() }
        let table = try AssociationTable(database: store.database)
        let volume = try XCTUnwrap(v2.entity(named: "Volume"))
        let book = try XCTUnwrap(v1.entity(named: "Book"))
        func statements() -> Int {
            var count = 0
            var statement = sqlite3_next_stmt(store.database.handle, nil)
            while statement != nil {
                count += 1
                statement = sqlite3_next_stmt(store.database.handle, statement)
            }
            return count
        }
        var counts: [Int] = []
        var expected: [String] = []
        for round in Int64(0)..<12 {
            for k in Int64(1)...20 {
                let key = round * 100 + k
                try table.insert(
                    mapping: 0, source: store.fault(entity: book, primaryKey: key),
                    destination: store.fault(entity: volume, primaryKey: key + 7))
                expected.append("\(key)>\(key + 7)")
            }
            XCTAssertEqual(
                try table.destinations(mappings: [0], source: store.fault(entity: book, primaryKey: round * 100 + 3))
                    .map { $0.1 }, [round * 100 + 10])
            XCTAssertTrue(table.keyRanges.isEmpty, "written for the look-up")
            counts.append(statements())
        }
        XCTAssertEqual(Set(counts.dropFirst(2)).count, 1, "\(counts)")
        var order: [String] = []
        try table.forEachAssociation(mapping: 0) { order.append("\($0.sourcePK)>\($0.destinationPK)") }
        XCTAssertEqual(order, expected)
    }
}
