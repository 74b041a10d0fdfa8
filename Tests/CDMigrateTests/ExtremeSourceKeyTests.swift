import CSQLite
import XCTest

@testable import CDMigrate

/// Source rows whose primary keys sit at the ends of the 64-bit range (Z_PK = INT64_MAX,
/// INT64_MAX − 1, INT64_MIN, keys spanning more than INT64_MAX): every path of the migration
/// (declarative SQL keeping or renumbering keys, per instance, policies single-row and batch)
/// migrates them with their relationships, or refuses with a clear error; none traps.
final class ExtremeSourceKeyTests: XCTestCase, SQLiteFileAccess {
    var scratch: ScratchDirectory!
    var v1: ManagedObjectModel!
    var v2: ManagedObjectModel!

    override func setUpWithError() throws {
        scratch = ScratchDirectory()
        v1 = try ManagedObjectModel(json: IdentityAssociationTests.library)
        v2 = try ManagedObjectModel(json: IdentityAssociationTests.shelf)
    }

    /// Two authors with two books each, then renumbered: the authors get `authorKeys`, the books `bookKeys`.
    func makeLibrary(authorKeys: [Int64], bookKeys: [Int64], name: String) throws -> String {
        let path = scratch.file(name)
        try makeStore(path, v1) { store in
            for a in 0..<2 {
                let author = try insert(store, "Author", ["name": .string("A\(a)")])
                for b in 0..<2 {
                    let book = try insert(store, "Book", ["title": .string("B\(a)-\(b)")])
                    try book.setValue(.object(author), forKey: "author")
                }
            }
        }
        var script = "UPDATE ZAUTHOR SET Z_PK = -Z_PK; UPDATE ZBOOK SET Z_PK = -Z_PK, ZAUTHOR = -ZAUTHOR;"
        for (i, key) in authorKeys.enumerated() {
            script +=
                "UPDATE ZBOOK SET ZAUTHOR = \(key) WHERE ZAUTHOR = -\(i + 1); UPDATE ZAUTHOR SET Z_PK = \(key) WHERE Z_PK = -\(i + 1);"
        }
        for (i, key) in bookKeys.enumerated() { script += "UPDATE ZBOOK SET Z_PK = \(key) WHERE Z_PK = -\(i + 1);" }
        script += "UPDATE Z_PRIMARYKEY SET Z_MAX = \(authorKeys.max() ?? 0) WHERE Z_NAME = 'Author';"
        script += "UPDATE Z_PRIMARYKEY SET Z_MAX = \(bookKeys.max() ?? 0) WHERE Z_NAME = 'Book';"
        try sql(path, script)
        return path
    }

    enum Path: CaseIterable { case sqlKeepingKeys, sqlRenumbering, perInstance, policySingleRow, policyBatch }

    final class SingleRow: EntityMigrationPolicy {}
    final class Batch: EntityMigrationPolicy {
        override var createsDestinationInstancesInBatches: Bool { true }
    }

    func migrate(_ source: String, _ path: Path, name: String) throws -> String {
        let perInstance = path == .perInstance || path == .policySingleRow || path == .policyBatch
        let policy =
            path == .policySingleRow
            ? ", \"type\": \"custom\", \"policy\": \"SingleRow\""
            : path == .policyBatch ? ", \"type\": \"custom\", \"policy\": \"Batch\"" : ""
        let writer =
            "FUNCTION($manager, \\\"destinationInstancesForEntityMappingNamed:sourceInstances:\\\", \\\"AuthorToWriter\\\", $source.author)"
        let mapping = try MappingModel(
            json:
                """
                {"entityMappings": [
                  {"name": "AuthorToWriter", "sourceEntity": "Author", "destinationEntity": "Writer", "predicate": "TRUEPREDICATE",
                   "attributeMappings": {"name": "\(perInstance ? "FUNCTION($source.name, 'stringByAppendingString:', '')" : "$source.name")"}\(policy)},
                  {"name": "BookToVolume", "sourceEntity": "Book", "destinationEntity": "Volume", "predicate": "TRUEPREDICATE",
                   "attributeMappings": {"title": "$source.title"}, "relationshipMappings": {"writer": "\(writer)"}\(policy)}
                ]}
                """)
        let manager = try MigrationManager(sourceModel: v1, destinationModel: v2, mappingModel: mapping)
        manager.registerPolicy(named: "SingleRow") { SingleRow() }
        manager.registerPolicy(named: "Batch") { Batch() }
        manager.keepsSourceKeys = path != .sqlRenumbering
        manager.pushDownSQL = !perInstance
        if path == .policyBatch { manager.batchSize = 1 }  // one batch per row: the key cursor crosses every extreme
        let out = scratch.file(name)
        _ = try manager.migrateStore(from: source, to: out)
        return out
    }

    func links(_ path: String) -> [String] {
        rows(
            path, "SELECT v.ZTITLE, w.ZNAME FROM ZVOLUME v LEFT JOIN ZWRITER w ON w.Z_PK = v.ZWRITER ORDER BY v.ZTITLE")
    }

    static let keySets: [(String, [Int64], [Int64])] = [
        ("INT64_MAX", [Int64.max, 5], [Int64.max, 7, 8, 9]),
        (
            "INT64_MAX-1 and INT64_MAX", [Int64.max - 1, Int64.max],
            [Int64.max - 3, Int64.max - 2, Int64.max - 1, Int64.max]
        ),
        ("INT64_MIN", [Int64.min, 1], [Int64.min, Int64.min + 1, 3, 4]),
        ("spanning more than INT64_MAX", [Int64.min, Int64.max], [Int64.min + 5, Int64.min + 1, 3, Int64.max]),
    ]

    func check(_ path: Path) throws {
        for (label, authors, books) in Self.keySets {
            let source = try makeLibrary(
                authorKeys: authors, bookKeys: books, name: "\(path)-\(authors[0])-\(books[0]).sqlite")
            do {
                let out = try migrate(source, path, name: "\(path)-\(authors[0])-\(books[0])-out.sqlite")
                XCTAssertEqual(links(out), ["B0-0|A0", "B0-1|A0", "B1-0|A1", "B1-1|A1"], "\(path), \(label)")
            } catch let error as MigrationError {
                XCTFail("\(path), \(label): \(error)")
            }
        }
    }

    func testDeclarativeSQLKeepingKeys() throws { try check(.sqlKeepingKeys) }
    func testDeclarativeSQLRenumbering() throws { try check(.sqlRenumbering) }
    func testPerInstance() throws { try check(.perInstance) }
    func testPolicySingleRow() throws { try check(.policySingleRow) }
    func testPolicyBatch() throws { try check(.policyBatch) }

    /// Keys near INT64_MAX are not kept (they are renumbered, as per instance): another mapping
    /// into the same table still finds keys for its instances, on every path.
    func testKeysNearINT64_MAXAreRenumberedSoOtherMappingsFindKeys() throws {
        let source = try makeLibrary(authorKeys: [Int64.max, 5], bookKeys: [1, 2, 3, 4], name: "full.sqlite")
        let mapping = try MappingModel(
            json:
                """
                {"entityMappings": [
                  {"name": "AuthorToWriter", "sourceEntity": "Author", "destinationEntity": "Writer", "predicate": "TRUEPREDICATE", "attributeMappings": {"name": "$source.name"}},
                  {"name": "BookToWriter", "sourceEntity": "Book", "destinationEntity": "Writer", "predicate": "TRUEPREDICATE", "attributeMappings": {"name": "$source.title"}}
                ]}
                """)
        var results: [[String]] = []
        for pushDown in [true, false] {
            let manager = try MigrationManager(sourceModel: v1, destinationModel: v2, mappingModel: mapping)
            manager.pushDownSQL = pushDown
            let out = scratch.file("full-out-\(pushDown).sqlite")
            _ = try manager.migrateStore(from: source, to: out)
            results.append(rows(out, "SELECT Z_PK, ZNAME FROM ZWRITER ORDER BY Z_PK"))
        }
        XCTAssertEqual(results[0], ["1|A1", "2|A0", "3|B0-0", "4|B0-1", "5|B1-0", "6|B1-1"])
        XCTAssertEqual(results[0], results[1])
    }

    /// Associations implied by kept keys whose range rowids cannot reserve (INT64_MIN to
    /// INT64_MAX) are written out at once, and read back in key order.
    func testIdentityAssociationsSpanningTheWholeKeyRangeAreWrittenOut() throws {
        let database = try SQLiteDatabase(path: scratch.file("associations.sqlite"), mode: .create)
        try database.exec(
            "CREATE TABLE ZWRITER (Z_PK INTEGER PRIMARY KEY); INSERT INTO ZWRITER VALUES (\(Int64.min)), (0), (\(Int64.max))"
        )
        let table = try AssociationTable(database: database)
        try table.recordIdentity(
            mapping: 0, sourceEntity: 1, destinationEntity: 1, destinationTable: "ZWRITER", low: Int64.min,
            high: Int64.max, count: 3)
        XCTAssertNil(table.identities[0], "written out, not reserved")
        var keys: [Int64] = []
        try table.forEachAssociation(mapping: 0) { keys.append($0.destinationPK) }
        XCTAssertEqual(keys, [Int64.min, 0, Int64.max])
        XCTAssertEqual(try table.count(mapping: 0), 3)
        // A range that fits is reserved, and materialized at its rowids without overflow in SQL.
        try database.exec(
            "CREATE TABLE ZVOLUME (Z_PK INTEGER PRIMARY KEY); INSERT INTO ZVOLUME VALUES (\(Int64.max / 2 - 3)), (\(Int64.max / 2 - 1))"
        )
        try table.recordIdentity(
            mapping: 1, sourceEntity: 2, destinationEntity: 2, destinationTable: "ZVOLUME", low: Int64.max / 2 - 3,
            high: Int64.max / 2 - 1, count: 2)
        XCTAssertNotNil(table.identities[1])
        keys = []
        try table.forEachAssociation(mapping: 1) { keys.append($0.sourcePK) }
        XCTAssertEqual(keys, [Int64.max / 2 - 3, Int64.max / 2 - 1])
    }

    /// A store whose Z_MAX is INT64_MAX: inserting gives an error, not a trap.
    func testInsertingIntoAStoreWhoseZ_MAXIsINT64_MAXIsRefused() throws {
        let path = try makeLibrary(authorKeys: [Int64.max, 5], bookKeys: [1, 2, 3, 4], name: "insert.sqlite")
        let store = try PersistentStore.open(at: path, model: v1, readOnly: false)
        defer { store.close() }
        XCTAssertThrowsError(try store.insertObject(entityName: "Author")) { error in
            XCTAssertEqual((error as? MigrationError)?.code, .migration, "\(error)")
        }
        XCTAssertEqual(try store.insertObject(entityName: "Book").objectID.primaryKey, 5)
    }

    /// Ordered to-many members whose order key is INT64_MAX: appending one more is refused.
    func testAnOrderKeyAtINT64_MAXLeavesNoRoomAndSaysSo() {
        XCTAssertThrowsError(try PersistentStore.orderAfter(Int64.max, table: "ZNOTE", orderColumn: "Z_FOK_FOLDER")) {
            error in
            XCTAssertTrue((error as? MigrationError)?.message.contains("leaves no room") ?? false, "\(error)")
        }
        XCTAssertEqual(
            try PersistentStore.orderAfter(Int64.max - 1, table: "ZNOTE", orderColumn: "Z_FOK_FOLDER"), Int64.max)
    }
}
