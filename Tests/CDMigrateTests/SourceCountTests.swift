import XCTest

@testable import CDMigrate

/// A run counts each source request once (`MigrationManager.countSource`): stage 1's count of a
/// mapping's rows is reused by the report's count of the entity only when both count the same
/// rows. A predicate, or a second run over a changed store, is counted anew.
final class SourceCountTests: XCTestCase {
    var scratch: ScratchDirectory!

    override func setUpWithError() throws { scratch = ScratchDirectory() }

    static let model = """
        {"name": "Notes", "entities": [{"name": "Note", "attributes": [{"name": "n", "type": "integer64", "optional": true}]}]}
        """

    func makeSource(_ name: String, _ count: Int) throws -> String {
        let model = try ManagedObjectModel(json: Self.model)
        let path = scratch.file(name)
        try makeStore(path, model) { store in
            for i in 1...count { _ = try insert(store, "Note", ["n": .integer(Int64(i))]) }
        }
        return path
    }

    func report(_ source: String, predicate: String, sql: Bool, manager existing: MigrationManager? = nil) throws -> (
        MigrationReport, MigrationManager
    ) {
        let model = try ManagedObjectModel(json: Self.model)
        let manager =
            try existing
            ?? MigrationManager(
                sourceModel: model, destinationModel: model,
                mappingModel: try MappingModel(
                    json:
                        """
                        {"entityMappings": [{"name": "NoteToNote", "sourceEntity": "Note", "destinationEntity": "Note", "predicate": "\(predicate)",
                          "attributeMappings": {"n": "$source.n"}}]}
                        """))
        manager.pushDownSQL = sql
        let report = try manager.migrateStore(
            from: source, to: scratch.file("out-\(UInt32.random(in: 0...UInt32.max)).sqlite"))
        return (report, manager)
    }

    func untaken(_ report: MigrationReport) -> Int {
        report.untakenSourceInstances.first { $0.entityName == "Note" }?.count ?? 0
    }

    func testTheReportCountsTheEntityAsStageOneCountsTheMappingOnlyWhenTheyAreTheSameRows() throws {
        let source = try makeSource("notes.sqlite", 40)
        for sql in [true, false] {
            let (whole, _) = try report(source, predicate: "TRUEPREDICATE", sql: sql)
            XCTAssertEqual(whole.mappings.first?.sourceInstances, 40)
            XCTAssertEqual(untaken(whole), 0)
            let (some, _) = try report(source, predicate: "n > 10", sql: sql)
            XCTAssertEqual(some.mappings.first?.sourceInstances, 30)
            XCTAssertEqual(untaken(some), 10, "sql: \(sql)")
        }
    }

    func testASecondRunOfTheSameManagerCountsAnew() throws {
        let (first, manager) = try report(try makeSource("a.sqlite", 40), predicate: "TRUEPREDICATE", sql: true)
        XCTAssertEqual(first.mappings.first?.sourceInstances, 40)
        let (second, _) = try report(
            try makeSource("b.sqlite", 25), predicate: "TRUEPREDICATE", sql: true, manager: manager)
        XCTAssertEqual(second.mappings.first?.sourceInstances, 25)
        XCTAssertEqual(second.destinationCounts.first { $0.0 == "Note" }?.1, 25)
    }
}
