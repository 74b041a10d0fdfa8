import CSQLite
import XCTest

@testable import CDMigrate

/// Bad values in a source row — text in a number column, a number in a text column, a `Z_ENT`
/// that names no entity of the table — get one rule whichever path migrates the row: the
/// declarative SQL path and the per-instance path (a policy, or SQL turned off) give the same
/// destination rows, or the same error.
final class BadSourceValueTests: XCTestCase {
    static let model = """
        {"name": "Notes", "entities": [
          {"name": "Note", "attributes": [{"name": "n", "type": "integer64", "optional": true},
                                          {"name": "small", "type": "integer16", "optional": true},
                                          {"name": "x", "type": "double", "optional": true},
                                          {"name": "title", "type": "string", "optional": true},
                                          {"name": "when", "type": "date", "optional": true},
                                          {"name": "flag", "type": "boolean", "optional": true}]}
        ]}
        """
    static let mapping = """
        {"entityMappings": [{"name": "NoteToNote", "sourceEntity": "Note", "destinationEntity": "Note", "predicate": "TRUEPREDICATE",
          "attributeMappings": {"n": "$source.n", "small": "$source.small", "x": "$source.x", "title": "$source.title", "when": "$source.when", "flag": "$source.flag"}}]}
        """

    var scratch: ScratchDirectory!
    var model: ManagedObjectModel!

    override func setUpWithError() throws {
        scratch = ScratchDirectory()
        model = try ManagedObjectModel(json: Self.model)
    }

    func sql(_ path: String, _ text: String) {
        var db: OpaquePointer?
        XCTAssertEqual(sqlite3_open(path, &db), SQLITE_OK)
        defer { sqlite3_close(db) }
        XCTAssertEqual(sqlite3_exec(db, text, nil, nil, nil), SQLITE_OK, String(cString: sqlite3_errmsg(db)))
    }

    func rows(_ path: String, _ query: String) -> [String] {
        var db: OpaquePointer?
        XCTAssertEqual(sqlite3_open(path, &db), SQLITE_OK)
        defer { sqlite3_close(db) }
        var statement: OpaquePointer?
        XCTAssertEqual(sqlite3_prepare_v2(db, query, -1, &statement, nil), SQLITE_OK)
        defer { sqlite3_finalize(statement) }
        var result: [String] = []
        while sqlite3_step(statement) == SQLITE_ROW {
            result.append(
                (0..<sqlite3_column_count(statement)).map { i in
                    let type = sqlite3_column_type(statement, i)
                    let text = type == SQLITE_NULL ? "NULL" : String(cString: sqlite3_column_text(statement, i))
                    return text + ":" + ["", "int", "real", "text", "blob", "null"][Int(type)]
                }.joined(separator: "|"))
        }
        return result
    }

    /// A store with one good Note, then `update` applied to it.
    func makeSource(_ name: String, _ update: String) throws -> String {
        let path = scratch.file(name)
        try makeStore(path, model) { store in
            _ = try insert(
                store, "Note",
                [
                    "n": .integer(1), "small": .integer(2), "x": .double(1.5), "title": .string("t"), "when": .date(10),
                    "flag": .bool(true),
                ])
            _ = try insert(store, "Note", ["n": .integer(7), "title": .string("good")])
        }
        sql(path, update)
        return path
    }

    final class Batch: EntityMigrationPolicy {
        override var createsDestinationInstancesInBatches: Bool { true }
    }

    /// The destination's rows, or the error: through the SQL path, the per-instance path (SQL
    /// off), and a policy's batch hook applying the default (SQL over the batch's keys).
    func outcomes(_ source: String) throws -> [String] {
        var results: [String] = []
        for way in ["sql", "per-instance", "batch"] {
            let mappingText =
                way == "batch"
                ? Self.mapping.replacingOccurrences(
                    of: "\"predicate\"", with: "\"type\": \"custom\", \"policy\": \"Batch\", \"predicate\"")
                : Self.mapping
            let manager = try MigrationManager(
                sourceModel: model, destinationModel: model, mappingModel: try MappingModel(json: mappingText))
            manager.registerPolicy(named: "Batch") { Batch() }
            manager.pushDownSQL = way != "per-instance"
            // The general path's ways: a step done as schema changes keeps such values as they are
            // (`SchemaStepCarriedColumnTests`).
            manager.triesSchemaChanges = false
            let out = scratch.file("out-\(way)-\(UInt32.random(in: 0...UInt32.max)).sqlite")
            do {
                _ = try manager.migrateStore(from: source, to: out)
                results.append(
                    rows(out, "SELECT ZN, ZSMALL, ZX, ZTITLE, ZWHEN, ZFLAG FROM ZNOTE ORDER BY Z_PK").joined(
                        separator: " / "))
            } catch let error as MigrationError {
                // The destination's URI differs from run to run: the message up to it.
                let message = error.message.components(separatedBy: " (x-coredata://")[0]
                results.append("error \(error.code.rawValue): \(message)")
            }
        }
        return results
    }

    /// Each bad value, with what every path must give for the first row (or the error's start).
    static let cases: [(update: String, expected: String)] = [
        ("ZN = 'text'", "NULL:null|2:int|1.5:real|t:text|10:int|1:int"),
        ("ZN = '12'", "12:int|2:int|1.5:real|t:text|10:int|1:int"),
        ("ZN = '12abc'", "NULL:null|2:int|1.5:real|t:text|10:int|1:int"),
        ("ZN = 1.5", "1:int|2:int|1.5:real|t:text|10:int|1:int"),
        ("ZN = 1e300", "NULL:null|2:int|1.5:real|t:text|10:int|1:int"),
        ("ZN = x'0102'", "NULL:null|2:int|1.5:real|t:text|10:int|1:int"),
        ("ZSMALL = 100000", "error 1610: Note.small is above its maximum 32767"),
        ("ZSMALL = 'abc'", "1:int|NULL:null|1.5:real|t:text|10:int|1:int"),
        ("ZX = 'abc'", "1:int|2:int|NULL:null|t:text|10:int|1:int"),
        ("ZX = '2.5'", "1:int|2:int|2.5:real|t:text|10:int|1:int"),
        ("ZTITLE = 42", "1:int|2:int|1.5:real|42:text|10:int|1:int"),
        ("ZTITLE = x'4142'", "1:int|2:int|1.5:real|AB:text|10:int|1:int"),
        ("ZWHEN = 'yesterday'", "1:int|2:int|1.5:real|t:text|NULL:null|1:int"),
        ("ZFLAG = 'yes'", "1:int|2:int|1.5:real|t:text|10:int|1:int"),
        ("ZFLAG = 7", "1:int|2:int|1.5:real|t:text|10:int|1:int"),
        ("ZFLAG = 0.0", "1:int|2:int|1.5:real|t:text|10:int|0:int"),
        ("Z_ENT = 99", "error 134180: row 1 of table 'ZNOTE' in the store"),
        ("Z_ENT = NULL", "error 134180: row 1 of table 'ZNOTE' in the store"),
        ("Z_ENT = 'x'", "error 134180: row 1 of table 'ZNOTE' in the store"),
    ]

    func testEveryPathReadsABadValueTheSameWay() throws {
        for (i, c) in Self.cases.enumerated() {
            let o = try outcomes(try makeSource("s\(i).sqlite", "UPDATE ZNOTE SET \(c.update) WHERE Z_PK = 1"))
            XCTAssertEqual(o[0], o[1], "SQL and per-instance paths disagree on \(c.update)")
            XCTAssertEqual(o[0], o[2], "SQL and batch paths disagree on \(c.update)")
            XCTAssertTrue(o[0].hasPrefix(c.expected), "\(c.update): \(o[0])")
            if !c.expected.hasPrefix("error") {
                XCTAssertTrue(
                    o[0].hasSuffix(" / 7:int|NULL:null|NULL:null|good:text|NULL:null|NULL:null"), "\(c.update): \(o[0])"
                )
            }
        }
    }

    /// A table of several entities: a row of another entity is not taken (as Core Data's fetch
    /// restricts on Z_ENT), on every path.
    func testARowOfAnUnknownEntityInASharedTableIsNotTakenOnAnyPath() throws {
        let shared = try ManagedObjectModel(
            json: """
                {"entities": [{"name": "Item", "attributes": [{"name": "title", "type": "string", "optional": true}]},
                              {"name": "Task", "parent": "Item", "attributes": [{"name": "done", "type": "boolean", "optional": true}]}]}
                """)
        let path = scratch.file("shared.sqlite")
        try makeStore(path, shared) { store in
            _ = try insert(store, "Task", ["title": .string("a")])
            _ = try insert(store, "Task", ["title": .string("b")])
        }
        sql(path, "UPDATE ZITEM SET Z_ENT = 99 WHERE Z_PK = 1")
        var results: [[String]] = []
        for pushDown in [true, false] {
            let manager = try MigrationManager(
                sourceModel: shared, destinationModel: shared,
                mappingModel: try MappingModel(
                    json:
                        """
                        {"entityMappings": [{"name": "TaskToTask", "sourceEntity": "Task", "destinationEntity": "Task", "predicate": "TRUEPREDICATE",
                          "attributeMappings": {"title": "$source.title", "done": "$source.done"}}]}
                        """))
            manager.pushDownSQL = pushDown
            let out = scratch.file("shared-out-\(pushDown).sqlite")
            _ = try manager.migrateStore(from: path, to: out)
            results.append(rows(out, "SELECT ZTITLE FROM ZITEM ORDER BY Z_PK"))
        }
        XCTAssertEqual(results[0], ["b:text"])
        XCTAssertEqual(results[0], results[1])
    }
}
