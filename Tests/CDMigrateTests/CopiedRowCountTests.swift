import XCTest

@testable import CDMigrate

/// A declarative copy counts the rows as it writes them: a mapping taking its source entity whole
/// reads no `COUNT(*)` of the source before copying, and the report's counts of a destination
/// table that only copies wrote are the rows they wrote. The report is the same as when every
/// table is counted: with several mappings into one table, with instances made by a policy in a
/// table a copy also wrote, with entities sharing a table, with an empty source table, and with a
/// progress handler (which counts the source first to give the total).
final class CopiedRowCountTests: XCTestCase {
    var scratch: ScratchDirectory!
    /// The statements the last `migrate` ran.
    var traced: [String] = []

    override func setUpWithError() throws { scratch = ScratchDirectory() }

    static let model = """
        {"name": "Shapes", "entities": [
          {"name": "Note", "attributes": [{"name": "n", "type": "integer64", "optional": true}]},
          {"name": "Tag", "attributes": [{"name": "name", "type": "string", "optional": true}]},
          {"name": "Empty", "attributes": [{"name": "e", "type": "integer64", "optional": true}]},
          {"name": "Shape", "abstract": true, "attributes": [{"name": "size", "type": "integer64", "optional": true}]},
          {"name": "Circle", "parent": "Shape", "attributes": [{"name": "r", "type": "integer64", "optional": true}]},
          {"name": "Square", "parent": "Shape", "attributes": [{"name": "s", "type": "integer64", "optional": true}]}
        ]}
        """

    /// 40 notes (keys 1…40 less those in `deleted`), 3 tags, no `Empty`, 5 circles, 7 squares.
    func makeSource(_ name: String, deleted: [Int] = []) throws -> String {
        let model = try ManagedObjectModel(json: Self.model)
        let path = scratch.file(name)
        try makeStore(path, model) { store in
            for i in 1...40 { _ = try insert(store, "Note", ["n": .integer(Int64(i))]) }
            for name in ["a", "b", "c"] { _ = try insert(store, "Tag", ["name": .string(name)]) }
            for i in 1...12 {
                _ =
                    i % 2 == 1 && i <= 10
                    ? try insert(store, "Circle", ["size": .integer(Int64(i)), "r": .integer(Int64(i))])
                    : try insert(store, "Square", ["size": .integer(Int64(i)), "s": .integer(Int64(i))])
            }
        }
        if !deleted.isEmpty {
            let db = try SQLiteDatabase(path: path, mode: .readWrite)
            defer { db.close() }
            try db.exec("DELETE FROM ZNOTE WHERE Z_PK IN (\(deleted.map(String.init).joined(separator: ", ")))")
        }
        return path
    }

    static func mapping(
        _ name: String, _ source: String, _ destination: String, _ attributes: String,
        predicate: String = "TRUEPREDICATE", extra: String = ""
    ) -> String {
        #"{"name": "\#(name)", "sourceEntity": "\#(source)", "destinationEntity": "\#(destination)", "predicate": "\#(predicate)", \#(extra)"attributeMappings": {\#(attributes)}}"#
    }

    static let copies = [
        mapping("NoteToNote", "Note", "Note", #""n": "$source.n""#),
        mapping("TagToTag", "Tag", "Tag", #""name": "$source.name""#),
        mapping("EmptyToEmpty", "Empty", "Empty", #""e": "$source.e""#),
        mapping("CircleToCircle", "Circle", "Circle", #""size": "$source.size", "r": "$source.r""#),
        mapping("SquareToSquare", "Square", "Square", #""size": "$source.size", "s": "$source.s""#),
    ]

    /// Makes a `Note` of its own for each tag it copies.
    final class TagWithNote: EntityMigrationPolicy {
        override func createDestinationInstances(
            forSource sInstance: ManagedObject, in mapping: EntityMapping, manager: MigrationManager
        ) throws {
            try super.createDestinationInstances(forSource: sInstance, in: mapping, manager: manager)
            let note = try manager.createDestinationInstance(entityName: "Note")
            try note.setValue(.integer(1000), forKey: "n")
        }
    }

    struct Outcome: Equatable {
        var destinationCounts: [String]
        var untaken: [String]
        var taken: [String]
        var tableCounts: [String]
    }

    /// Runs `mappings` on `source` and returns the report's counts beside the destination's own.
    func migrate(_ source: String, _ mappings: [String], sql: Bool = true, progress: Bool = false) throws -> Outcome {
        let model = try ManagedObjectModel(json: Self.model)
        let manager = try MigrationManager(
            sourceModel: model, destinationModel: model,
            mappingModel: try MappingModel(json: #"{"entityMappings": [\#(mappings.joined(separator: ", "))]}"#))
        manager.registerPolicy(named: "TagWithNote") { TagWithNote() }
        manager.pushDownSQL = sql
        manager.triesSchemaChanges = false
        if progress { manager.progressHandler = { _ in true } }
        let out = scratch.file("out-\(UInt32.random(in: 0...UInt32.max)).sqlite")
        let (report, statements) = try StatementTrace.during { try manager.migrateStore(from: source, to: out) }
        traced = statements
        let store = try PersistentStore.open(at: out, model: model)
        defer { store.close() }
        var tableCounts: [String] = []
        for entity in model.entitiesInStoreOrder where !entity.isAbstract {
            var request = FetchRequest(entityName: entity.name)
            request.includesSubentities = false
            tableCounts.append("\(entity.name) \(try store.count(request))")
        }
        return Outcome(
            destinationCounts: report.destinationCounts.map { "\($0.entityName) \($0.count)" },
            untaken: report.untakenSourceInstances.map { "\($0.entityName) \($0.count)" },
            taken: report.mappings.map { "\($0.entityMappingName) \($0.sourceInstances) \($0.instancesBySQL)" },
            tableCounts: tableCounts)
    }

    func testTheReportCountsWhatTheCopiesWroteAsACountOfEveryTableWould() throws {
        let source = try makeSource("shapes.sqlite")
        let gapped = try makeSource("gapped.sqlite", deleted: [2, 17, 39])
        let again = Self.mapping("NoteToNoteAgain", "Note", "Note", #""n": "$source.n + 100""#, predicate: "n > 30")
        let tagWithNote = Self.mapping(
            "TagToTag", "Tag", "Tag", #""name": "$source.name""#, extra: #""policy": "TagWithNote", "#)
        let cases: [(String, String, [String], [String])] = [
            ("copies", source, Self.copies, ["Note 40", "Tag 3", "Empty 0", "Circle 5", "Square 7"]),
            ("gapped keys", gapped, Self.copies, ["Note 37", "Tag 3", "Empty 0", "Circle 5", "Square 7"]),
            (
                "two copies into one table", source, Self.copies + [again],
                ["Note 50", "Tag 3", "Empty 0", "Circle 5", "Square 7"]
            ),
            (
                "a policy's instances in a copied table", source, [Self.copies[0], tagWithNote] + Self.copies[2...],
                ["Note 43", "Tag 3", "Empty 0", "Circle 5", "Square 7"]
            ),
            (
                "one of two entities of a table", source, Array(Self.copies[0...3]),
                ["Note 40", "Tag 3", "Empty 0", "Circle 5", "Square 0"]
            ),
        ]
        for (name, store, mappings, expected) in cases {
            let bySQL = try migrate(store, mappings)
            XCTAssertEqual(bySQL.tableCounts.sorted(), expected.sorted(), name)
            XCTAssertEqual(bySQL.destinationCounts, bySQL.tableCounts, name)
            // The same report as the row-by-row path, which counts every table, and as with a progress handler.
            let byRow = try migrate(store, mappings, sql: false)
            XCTAssertEqual(bySQL.destinationCounts, byRow.destinationCounts, name)
            XCTAssertEqual(bySQL.untaken, byRow.untaken, name)
            func taken(_ outcome: Outcome) -> [String] { outcome.taken.map { String($0.split(separator: " ")[1]) } }
            XCTAssertEqual(taken(bySQL), taken(byRow), name)
            XCTAssertEqual(try migrate(store, mappings, progress: true), bySQL, name)
        }
        let squaresLeft = try migrate(source, Array(Self.copies[0...3]))
        XCTAssertEqual(squaresLeft.untaken, ["Square 7"])
        // An empty source table is left to the row-by-row path, which takes nothing.
        XCTAssertEqual(
            try migrate(source, Self.copies).taken,
            [
                "NoteToNote 40 true", "TagToTag 3 true", "EmptyToEmpty 0 false", "CircleToCircle 5 true",
                "SquareToSquare 7 true",
            ])
    }

    /// Whether `sql` counts the rows of a table (source or destination) named `table`.
    static func counts(_ sql: String, table: String) -> Bool {
        let upper = sql.uppercased()
        return upper.contains("COUNT(") && upper.contains(table)
            && !upper.contains("CDM_ASSOCIATION") && !upper.contains("INSERT")
    }

    func testACopyTakingItsEntityWholeCountsNoTableRowsOfItsOwn() throws {
        let source = try makeSource("traced.sqlite", deleted: [5])
        let outcome = try migrate(source, [Self.copies[0]])
        XCTAssertEqual(outcome.destinationCounts.filter { $0.hasPrefix("Note ") }, ["Note 39"])
        XCTAssertEqual(outcome.taken, ["NoteToNote 39 true"])
        XCTAssertTrue(traced.contains { $0.hasPrefix("INSERT INTO main.\"ZNOTE\"") }, "\(traced)")
        XCTAssertEqual(traced.filter { Self.counts($0, table: "ZNOTE") }, [])
        // The tags, which no mapping takes, are counted for the report: in the source and in the destination.
        XCTAssertEqual(traced.filter { Self.counts($0, table: "ZTAG") }.count, 2)
        // With a progress handler the source is counted once, for the total.
        _ = try migrate(source, [Self.copies[0]], progress: true)
        XCTAssertEqual(traced.filter { Self.counts($0, table: "ZNOTE") }.count, 1)
    }
}
