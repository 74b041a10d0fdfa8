import Foundation
import XCTest

@testable import CDMigrate

/// What a step done as schema changes reads of a carried column: nothing when the model change
/// does not touch the column's rules (`SchemaStepPlan.promises`), so a value Core Data would not
/// have written there is kept as it is where the general path converts it.
extension SchemaStepTests {
    func testOnlyColumnsWhoseRulesTightenAreChecked() throws {
        let bounded = Self.v2.replacingOccurrences(
            of: #"{"name": "count", "type": "integer32", "indexed": true}"#,
            with: #"{"name": "count", "type": "integer32", "indexed": true, "maxValue": 100}"#
        ).replacingOccurrences(
            of: #"{"name": "title", "type": "string", "indexed": true}"#,
            with: #"{"name": "title", "type": "string", "indexed": true, "optional": false, "default": "untitled"}"#)
        for (destination, unchanged) in [
            (Self.v2, ["ZCOUNT", "ZFOLDER", "ZTEXT", "ZTITLE", "ZWHEN"]), (bounded, ["ZFOLDER", "ZTEXT", "ZWHEN"]),
        ] {
            guard case .eligible(let plan) = try plan(Self.v1, destination) else {
                XCTFail("not eligible")
                continue
            }
            let note = plan.keptTables.first { $0.name == "ZNOTE" }
            XCTAssertEqual(note?.unchangedColumns.sorted(), unchanged)
        }
        // A source bound inside the destination's keeps the column unchanged; a wider one does not.
        func n(_ optional: Bool, _ max: Double) -> AttributeDescription {
            AttributeDescription(name: "n", type: .integer32, isOptional: optional, maxValue: max)
        }
        XCTAssertTrue(SchemaStepPlan.promises(n(true, 10), n(true, 100)))
        XCTAssertFalse(SchemaStepPlan.promises(n(true, 100), n(true, 10)))
        XCTAssertFalse(SchemaStepPlan.promises(n(true, 10), n(false, 100)))
        XCTAssertTrue(SchemaStepPlan.promises(n(false, 10), n(false, 100)))
        XCTAssertFalse(
            SchemaStepPlan.promises(n(true, 10), AttributeDescription(name: "n", type: .integer64, maxValue: 100)))
    }

    func testValuesOfAnotherStorageClassInUnchangedColumnsAreKeptAsTheyAre() throws {
        // Values Core Data does not write: a text in an Integer 32 column, a blob in a String column,
        // a text in a Date column. The model change does not touch these columns' rules, so the step
        // carries them unread; the general path converts them.
        let source = try makeSource()
        let database = try SQLiteDatabase(path: source, mode: .readWrite)
        try database.exec(
            "UPDATE ZNOTE SET ZCOUNT = 'x7' WHERE Z_PK = 5; UPDATE ZNOTE SET ZTITLE = X'00FF' WHERE Z_PK = 7;"
                + " UPDATE ZNOTE SET ZWHEN = '2001-01-01' WHERE Z_PK = 9")
        database.close()
        let general = try inferredManager(schemaChanges: false).migrateStore(
            from: source, to: scratch.file("general.sqlite"))
        let fast = try inferredManager(schemaChanges: true).migrateStore(from: source, to: scratch.file("fast.sqlite"))
        XCTAssertTrue(fast.bySchemaChanges, fast.schemaChangesNotDone ?? "")
        XCTAssertEqual(summary(fast), summary(general))
        let cells = [("ZCOUNT", 5), ("ZTITLE", 7), ("ZWHEN", 9)]
        func read(_ path: String) throws -> [String] {
            let store = try SQLiteDatabase(path: path, mode: .readOnly)
            defer { store.close() }
            return try cells.map { column, key in
                let row = try store.rows("SELECT typeof(\(column)), quote(\(column)) FROM ZNOTE WHERE Z_PK = \(key)")
                return row.first.map { $0.compactMap { $0.text }.joined(separator: " ") } ?? "missing"
            }
        }
        // Nothing lost: the step keeps the source's values, storage class and all.
        XCTAssertEqual(try read(scratch.file("fast.sqlite")), ["text 'x7'", "blob X'00FF'", "text '2001-01-01'"])
        XCTAssertNotEqual(try read(scratch.file("general.sqlite")), try read(scratch.file("fast.sqlite")))
        // Those three cells are the only difference: given the general path's values, the stores are the same.
        let fastStore = try SQLiteDatabase(path: scratch.file("fast.sqlite"), mode: .readWrite)
        try fastStore.run("ATTACH DATABASE ? AS g", [.string(scratch.file("general.sqlite"))])
        for (column, key) in cells {
            try fastStore.exec(
                "UPDATE main.ZNOTE SET \(column) = (SELECT \(column) FROM g.ZNOTE WHERE Z_PK = \(key)) WHERE Z_PK = \(key)"
            )
        }
        try fastStore.exec("DETACH DATABASE g")
        fastStore.close()
        try assertSameStores(scratch.file("general.sqlite"), scratch.file("fast.sqlite"))
    }
}
