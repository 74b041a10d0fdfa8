import XCTest

@testable import CDMigrate

/// Progress of a step done as schema changes: the rows it carries and checks advance
/// `runProcessed` over `runTotal` as the general path's rows do, from the first call to the last.
extension SchemaStepTests {
    func progress(schemaChanges: Bool, source: String, to name: String) throws -> (
        [MigrationProgress], MigrationReport
    ) {
        let manager = try inferredManager(schemaChanges: schemaChanges)
        var seen: [MigrationProgress] = []
        manager.progressHandler = {
            seen.append($0)
            return true
        }
        let report = try manager.migrateStore(from: source, to: scratch.file(name))
        return (seen, report)
    }

    func testAStepDoneAsSchemaChangesReportsTheRowsItCarriesAndChecks() throws {
        let source = try makeSource(notes: 40)
        let (fast, fastReport) = try progress(schemaChanges: true, source: source, to: "fast.sqlite")
        let (general, generalReport) = try progress(schemaChanges: false, source: source, to: "general.sqlite")
        XCTAssertTrue(fastReport.bySchemaChanges, fastReport.schemaChangesNotDone ?? "")
        XCTAssertFalse(generalReport.bySchemaChanges)
        // The general path's rows: each mapping's source rows through the three stages.
        let rows = 3 * generalReport.mappings.reduce(0) { $0 + $1.sourceInstances }
        XCTAssertGreaterThanOrEqual(rows, 3 * 43, "40 notes and 3 folders")
        XCTAssertEqual(general.last?.runTotal, rows)
        XCTAssertEqual(fast.first?.runTotal, rows, "known before the copy")
        XCTAssertEqual(Set(fast.map { $0.runTotal }), [rows])
        XCTAssertEqual(fast.first?.runProcessed, 0)
        XCTAssertEqual(fast.last?.runProcessed, rows)
        let done = fast.map { $0.runProcessed }
        XCTAssertEqual(done, done.sorted(), "rows done never go back")
        XCTAssertTrue(
            fast.contains { $0.runProcessed > 0 && $0.runProcessed < rows }, "rows advance through the stages")
        // Each stage of the notes' mapping names the rows it carried (stages 1 and 2) or checked (stage 3).
        let notes = fast.filter { $0.entityMappingName.contains("Note") && $0.total > 0 }
        XCTAssertEqual(
            Set(notes.map { $0.stage.rawValue }),
            Set([1, 2, 3]))
        XCTAssertEqual(Set(notes.map { $0.total }), [40])
    }
}
