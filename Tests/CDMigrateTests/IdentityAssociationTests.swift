import CSQLite
import XCTest

@testable import CDMigrate

/// A declarative mapping that takes its source entity whole into an empty table keeps the source
/// keys, and its associations are identities rather than rows; every reader of associations
/// (relationship mappings in SQL and per instance, policies' look-ups, the report's counts) still
/// sees the associations the renumbering path records.
final class IdentityAssociationTests: XCTestCase, SQLiteFileAccess {
    static let library = """
        {"name": "Library", "entities": [
          {"name": "Author", "attributes": [{"name": "name", "type": "string"}], "relationships": [
            {"name": "books", "destination": "Book", "inverse": "author", "toMany": true}]},
          {"name": "Book", "attributes": [{"name": "title", "type": "string"}], "relationships": [
            {"name": "author", "destination": "Author", "inverse": "books"}]}
        ]}
        """
    static let shelf = """
        {"name": "Shelf", "entities": [
          {"name": "Writer", "attributes": [{"name": "name", "type": "string"}], "relationships": [
            {"name": "volumes", "destination": "Volume", "inverse": "writer", "toMany": true}]},
          {"name": "Volume", "attributes": [{"name": "title", "type": "string"}], "relationships": [
            {"name": "writer", "destination": "Writer", "inverse": "volumes"}]}
        ]}
        """
    static let writerBySQL =
        "FUNCTION($manager, \\\"destinationInstancesForEntityMappingNamed:sourceInstances:\\\", \\\"AuthorToWriter\\\", $source.author)"
    static let volumesPerInstance =
        "FUNCTION($manager, \\\"destinationInstancesForEntityMappingNamed:sourceInstances:\\\", \\\"BookToVolume\\\", $source.books)"

    var scratch: ScratchDirectory!
    var v1: ManagedObjectModel!
    var v2: ManagedObjectModel!

    override func setUpWithError() throws {
        scratch = ScratchDirectory()
        v1 = try ManagedObjectModel(json: Self.library)
        v2 = try ManagedObjectModel(json: Self.shelf)
    }

    /// Three authors with three books each; the first two authors and first two books are then
    /// deleted, so the source keys start at 3 and renumbering would start at 1.
    func makeLibrary() throws -> String {
        let path = scratch.file("library.sqlite")
        try makeStore(path, v1) { store in
            for a in 0..<5 {
                let author = try insert(store, "Author", ["name": .string("A\(a)")])
                for b in 0..<3 {
                    let book = try insert(store, "Book", ["title": .string("B\(a)-\(b)")])
                    try book.setValue(.object(author), forKey: "author")
                }
            }
        }
        try sql(path, "DELETE FROM ZBOOK WHERE ZAUTHOR IN (1, 2); DELETE FROM ZAUTHOR WHERE Z_PK IN (1, 2)")
        return path
    }

    func mapping(
        authorPredicate: String = "TRUEPREDICATE", writerOfVolume: String? = writerBySQL, volumesOfWriter: String? = nil
    ) throws -> MappingModel {
        let volumes = volumesOfWriter.map { ", \"relationshipMappings\": {\"volumes\": \"\($0)\"}" } ?? ""
        let writer = writerOfVolume.map { ", \"relationshipMappings\": {\"writer\": \"\($0)\"}" } ?? ""
        return try MappingModel(
            json:
                """
                {"entityMappings": [
                  {"name": "AuthorToWriter", "sourceEntity": "Author", "destinationEntity": "Writer", "predicate": "\(authorPredicate)",
                   "attributeMappings": {"name": "$source.name"}\(volumes)},
                  {"name": "BookToVolume", "sourceEntity": "Book", "destinationEntity": "Volume", "predicate": "TRUEPREDICATE",
                   "attributeMappings": {"title": "$source.title"}\(writer)}
                ]}
                """)
    }

    /// Every volume with its writer's name, by title: what the migration must give whatever the keys.
    func links(_ path: String) -> [String] {
        rows(
            path, "SELECT v.ZTITLE, w.ZNAME FROM ZVOLUME v LEFT JOIN ZWRITER w ON w.Z_PK = v.ZWRITER ORDER BY v.ZTITLE")
    }

    func testAWholeEntityKeepsItsSourceKeysAndItsRelationshipsBySQL() throws {
        let source = try makeLibrary()
        let manager = try MigrationManager(sourceModel: v1, destinationModel: v2, mappingModel: try mapping())
        let out = scratch.file("out.sqlite")
        let report = try manager.migrateStore(from: source, to: out)
        XCTAssertEqual(rows(out, "SELECT Z_PK, ZNAME FROM ZWRITER ORDER BY Z_PK"), ["3|A2", "4|A3", "5|A4"])
        XCTAssertEqual(rows(out, "SELECT MIN(Z_PK), MAX(Z_PK), COUNT(*) FROM ZVOLUME"), ["7|15|9"])
        XCTAssertEqual(links(out), (2..<5).flatMap { a in (0..<3).map { "B\(a)-\($0)|A\(a)" } })
        XCTAssertEqual(report.mappings.map { $0.associations }, [3, 9])
        XCTAssertEqual(report.mappings.map { $0.relationshipsBySQL }, [false, true])
        XCTAssertTrue(report.untakenSourceInstances.isEmpty, "\(report.untakenSourceInstances)")
        // Z_MAX covers the kept keys, so a later insert cannot reuse one.
        XCTAssertEqual(rows(out, "SELECT Z_NAME, Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_NAME"), ["Volume|15", "Writer|5"])
    }

    func testKeptKeysAndRenumberedKeysGiveTheSameRelationships() throws {
        let source = try makeLibrary()
        var results: [[String]] = []
        for keeps in [false, true] {
            // The to-many runs per instance (nothing sets its inverse), looking up the identity associations of the other mapping.
            let manager = try MigrationManager(
                sourceModel: v1, destinationModel: v2,
                mappingModel: try mapping(writerOfVolume: nil, volumesOfWriter: Self.volumesPerInstance))
            manager.keepsSourceKeys = keeps
            let out = scratch.file("out-\(keeps).sqlite")
            let report = try manager.migrateStore(from: source, to: out)
            XCTAssertEqual(report.mappings.map { $0.associations }, [3, 9])
            XCTAssertEqual(rows(out, "SELECT MIN(Z_PK) FROM ZWRITER"), [keeps ? "3" : "1"])
            results.append(links(out))
        }
        XCTAssertEqual(results[0].count, 9)
        XCTAssertEqual(results[0], results[1])
    }

    func testAToManySetByTheInverseToOneOfTheOtherMappingNeedsNoPerInstanceStep() throws {
        let source = try makeLibrary()
        var results: [[String]] = []
        for pushDown in [false, true] {
            let manager = try MigrationManager(
                sourceModel: v1, destinationModel: v2,
                mappingModel: try mapping(volumesOfWriter: Self.volumesPerInstance))
            manager.pushDownSQL = pushDown
            let out = scratch.file("out-\(pushDown).sqlite")
            let report = try manager.migrateStore(from: source, to: out)
            XCTAssertEqual(report.mappings.map { $0.relationshipsBySQL }, [pushDown, pushDown])
            results.append(links(out))
        }
        XCTAssertEqual(results[0].count, 9)
        XCTAssertEqual(results[0], results[1])
    }

    func testAToManyWhoseInverseTheOtherMappingSetsFromAnotherSourceRelationshipGetsTheSameLinksBySQL() throws {
        let source = try makeLibrary()
        // The writer of a volume is looked up through another mapping than the one making writers: not the same members.
        let other =
            "FUNCTION($manager, \\\"destinationInstancesForSourceRelationshipNamed:sourceInstances:\\\", \\\"author\\\", $source.author)"
        let manager = try MigrationManager(
            sourceModel: v1, destinationModel: v2,
            mappingModel: try mapping(writerOfVolume: other, volumesOfWriter: Self.volumesPerInstance))
        let out = scratch.file("out.sqlite")
        let report = try manager.migrateStore(from: source, to: out)
        XCTAssertEqual(
            report.mappings.map { $0.relationshipsBySQL }, [true, true], "not set by the inverse: an UPDATE of its own")
        XCTAssertEqual(links(out), (2..<5).flatMap { a in (0..<3).map { "B\(a)-\($0)|A\(a)" } })
    }

    func testAFilteredMappingRenumbersAndRecordsItsAssociations() throws {
        let source = try makeLibrary()
        let manager = try MigrationManager(
            sourceModel: v1, destinationModel: v2, mappingModel: try mapping(authorPredicate: "name != 'A3'"))
        let out = scratch.file("out.sqlite")
        let report = try manager.migrateStore(from: source, to: out)
        XCTAssertEqual(
            rows(out, "SELECT Z_PK, ZNAME FROM ZWRITER ORDER BY Z_PK"), ["1|A2", "2|A4"], "renumbered from 1")
        XCTAssertEqual(links(out).filter { $0.hasPrefix("B3") }, ["B3-0|NULL", "B3-1|NULL", "B3-2|NULL"])
        XCTAssertEqual(links(out).filter { $0.hasPrefix("B4") }, ["B4-0|A4", "B4-1|A4", "B4-2|A4"])
        XCTAssertEqual(report.mappings.map { $0.associations }, [2, 9])
        XCTAssertEqual(report.untakenSourceInstances.map { "\($0.0) \($0.1)" }, ["Author 1"])
    }

    func testASecondMappingIntoTheSameTableIsNumberedAfterTheKeptKeys() throws {
        let source = try makeLibrary()
        let text = """
            {"entityMappings": [
              {"name": "AuthorToWriter", "sourceEntity": "Author", "destinationEntity": "Writer", "predicate": "TRUEPREDICATE",
               "attributeMappings": {"name": "$source.name"}},
              {"name": "BookToWriter", "sourceEntity": "Book", "destinationEntity": "Writer", "predicate": "TRUEPREDICATE",
               "attributeMappings": {"name": "$source.title"}}
            ]}
            """
        let manager = try MigrationManager(
            sourceModel: v1, destinationModel: v2, mappingModel: try MappingModel(json: text))
        let out = scratch.file("out.sqlite")
        let report = try manager.migrateStore(from: source, to: out)
        let writers = rows(out, "SELECT Z_PK, ZNAME FROM ZWRITER ORDER BY Z_PK")
        XCTAssertEqual(writers.prefix(3), ["3|A2", "4|A3", "5|A4"])
        XCTAssertEqual(writers.dropFirst(3).first, "6|B2-0", "the second mapping renumbers after the kept keys")
        XCTAssertEqual(writers.count, 12)
        XCTAssertEqual(report.mappings.map { $0.associations }, [3, 9])
    }

    func testIdentityAssociationsAreWrittenOutInTheOrderMade() throws {
        let path = scratch.file("d.sqlite")
        let store = try PersistentStore.create(at: path, model: v2)
        defer { store.close() }
        let table = try AssociationTable(database: store.database)
        let writer = try XCTUnwrap(v2.entity(named: "Writer"))
        let volume = try XCTUnwrap(v2.entity(named: "Volume"))
        let author = try XCTUnwrap(v1.entity(named: "Author"))
        let sourceStore = try PersistentStore.create(at: scratch.file("s.sqlite"), model: v1)
        defer { sourceStore.close() }
        // Mapping 0 (rows) made volume 1 from author 9; mapping 1 (identity) then made writers 5...7.
        try table.insert(
            mapping: 0, source: sourceStore.fault(entity: author, primaryKey: 9),
            destination: store.fault(entity: volume, primaryKey: 1))
        for pk in [5, 7] as [Int64] {
            try store.database.run(
                "INSERT INTO ZWRITER (Z_PK, Z_ENT, Z_OPT) VALUES (?, ?, 1)",
                [.integer(pk), .integer(Int64(store.layout.entityNumber(of: writer)))])
        }
        try table.recordIdentity(
            mapping: 1, sourceEntity: author.entityNumber, destinationEntity: writer.entityNumber,
            destinationTable: "ZWRITER", low: 5, high: 7, count: 2)
        // Mapping 0 later also made volume 2 from author 7.
        try table.insert(
            mapping: 0, source: sourceStore.fault(entity: author, primaryKey: 7),
            destination: store.fault(entity: volume, primaryKey: 2))
        XCTAssertEqual(try table.count(mapping: 1), 2)
        XCTAssertNotNil(table.identities[1])
        let made = try table.destinations(mappings: [0, 1], source: sourceStore.fault(entity: author, primaryKey: 7))
        XCTAssertNil(table.identities[1], "read row by row: written out")
        XCTAssertEqual(made.map { "\($0.0):\($0.1)" }, ["\(writer.entityNumber):7", "\(volume.entityNumber):2"])
        XCTAssertEqual(
            try table.destinations(mappings: [1], source: sourceStore.fault(entity: author, primaryKey: 6)).count, 0,
            "6 is not a row")
        XCTAssertEqual(
            try table.sources(mapping: 1, destination: store.fault(entity: writer, primaryKey: 5)).map { $0.1 }, [5])
        XCTAssertEqual(try table.count(mapping: 1), 2)
        XCTAssertEqual(try table.distinctSourceCounts()[author.entityNumber], 3, "authors 5, 7 and 9")
    }

    func testIdentityCountsOfOneSourceEntityTakenTwiceAreNotAddedUp() throws {
        let path = scratch.file("d.sqlite")
        let store = try PersistentStore.create(at: path, model: v2)
        defer { store.close() }
        let table = try AssociationTable(database: store.database)
        let writer = try XCTUnwrap(v2.entity(named: "Writer"))
        let volume = try XCTUnwrap(v2.entity(named: "Volume"))
        for (t, e) in [("ZWRITER", writer), ("ZVOLUME", volume)] {
            for pk in 1...3 {
                try store.database.run(
                    "INSERT INTO \(t) (Z_PK, Z_ENT, Z_OPT) VALUES (\(pk), \(store.layout.entityNumber(of: e)), 1)")
            }
        }
        try table.recordIdentity(
            mapping: 0, sourceEntity: 1, destinationEntity: writer.entityNumber, destinationTable: "ZWRITER", low: 1,
            high: 3, count: 3)
        try table.recordIdentity(
            mapping: 1, sourceEntity: 1, destinationEntity: volume.entityNumber, destinationTable: "ZVOLUME", low: 1,
            high: 3, count: 3)
        XCTAssertEqual(try table.distinctSourceCounts(), [1: 3])
        XCTAssertEqual(table.identities.count, 2, "counted in SQL, not written out")
        // With rows of another mapping for the same source entity: keys 2 and 9 by rows, 1...3 by identity.
        let author = try XCTUnwrap(v1.entity(named: "Author"))
        let sourceStore = try PersistentStore.create(at: scratch.file("s.sqlite"), model: v1)
        defer { sourceStore.close() }
        for pk in [2, 9] as [Int64] {
            try table.insert(
                mapping: 5, source: sourceStore.fault(entity: author, primaryKey: pk),
                destination: store.fault(entity: writer, primaryKey: pk))
        }
        XCTAssertEqual(author.entityNumber, 1)
        XCTAssertEqual(try table.distinctSourceCounts(), [1: 4], "1, 2, 3 and 9")
        XCTAssertEqual(table.identities.count, 2)
    }
}
