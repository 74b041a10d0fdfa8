import Foundation
import XCTest

@testable import CDMigrate

/// The SQLite wrapper: binding, reading, caching, errors, transactions.
final class StoreSQLiteTests: XCTestCase {
    var directory = ""

    override func setUpWithError() throws {
        directory = NSTemporaryDirectory() + "cdm-sqlite-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: directory)
    }

    func testBindsValuesAsCoreDataStoresThem() throws {
        let db = try SQLiteDatabase(path: directory + "/values.sqlite", mode: .create)
        defer { db.close() }
        try db.exec("CREATE TABLE t (v, d DECIMAL)")
        let uuid: [UInt8] = Array(repeating: 0xAB, count: 16)
        let values: [Value] = [
            .null, .bool(true), .integer(-5), .double(2.5), .decimal("10.25"), .string("text"),
            .date(100.5), .binary([1, 2]), .uuid(uuid), .uri("http://x"), .binary([]), .string(""),
        ]
        for value in values { try db.run("INSERT INTO t (v, d) VALUES (?, ?)", [value, value]) }
        let rows = try db.rows("SELECT v, typeof(v), d FROM t ORDER BY rowid")
        XCTAssertEqual(
            rows.map { $0[1] },
            ["null", "integer", "integer", "real", "text", "text", "real", "blob", "blob", "text", "blob", "text"].map {
                SQLiteStatement.Raw.text($0)
            })
        XCTAssertEqual(rows[1][0], .integer(1))
        XCTAssertEqual(rows[8][0], .blob(uuid))
        // The DECIMAL column's numeric affinity stores the decimal's text as a number.
        XCTAssertEqual(rows[4][2], .real(10.25))

        // Typed reading converts what affinity did.
        let statement = try db.prepare("SELECT d, v FROM t WHERE rowid = ?")
        try statement.bind([.integer(5)])
        XCTAssertTrue(try statement.step())
        XCTAssertEqual(statement.value(at: 0, as: .decimal), .decimal("10.25"))
        XCTAssertEqual(statement.value(at: 1, as: .decimal), .decimal("10.25"))
        XCTAssertEqual(statement.value(at: 0, as: .string), .string("10.25"))
        statement.reset()
        try statement.bind([.integer(9)])
        XCTAssertTrue(try statement.step())
        XCTAssertEqual(statement.value(at: 1, as: .uuid), .uuid(uuid))
        XCTAssertEqual(statement.value(at: 1, as: .binary), .binary(uuid))
        XCTAssertEqual(statement.value(at: 1, as: .integer64), .null)
        statement.reset()
        try statement.bind([.integer(2)])
        XCTAssertTrue(try statement.step())
        XCTAssertEqual(statement.value(at: 1, as: .boolean), .bool(true))
        XCTAssertEqual(statement.value(at: 1, as: .date), .date(1))
        statement.reset()
        XCTAssertThrowsError(try db.run("SELECT ?", [.collection([])])) { error in
            XCTAssertEqual((error as? MigrationError)?.code, .sqlite)
        }
        XCTAssertThrowsError(try db.run("SELECT ?", [1, 2])) { error in
            XCTAssertTrue((error as? MigrationError)?.message.contains("2 arguments given for 1 parameters") ?? false)
        }
    }

    func testStatementCacheReusesAndNestsSafely() throws {
        let db = try SQLiteDatabase(path: ":memory:", mode: .create)
        defer { db.close() }
        try db.exec("CREATE TABLE t (x); INSERT INTO t VALUES (1), (2), (3)")
        let sql = "SELECT x FROM t ORDER BY x"
        let first = try db.prepare(sql)
        first.reset()
        XCTAssertTrue(try db.prepare(sql) === first)
        // While it is stepping, the same SQL gets a second statement.
        XCTAssertTrue(try first.step())
        let nested = try db.prepare(sql)
        XCTAssertFalse(nested === first)
        XCTAssertTrue(try nested.step())
        XCTAssertEqual(nested.int64(at: 0), 1)
        XCTAssertTrue(try first.step())
        XCTAssertEqual(first.int64(at: 0), 2)
        first.reset()
        XCTAssertTrue(try db.prepare(sql) === first)
        // Closing finalizes every statement; using one afterwards is an error, not a crash.
        db.close()
        XCTAssertThrowsError(try first.step()) { error in
            XCTAssertTrue((error as? MigrationError)?.message.contains("closed") ?? false)
        }
        XCTAssertThrowsError(try nested.bind([1]))
        XCTAssertThrowsError(try db.exec("SELECT 1")) { error in
            XCTAssertEqual((error as? MigrationError)?.code, .sqlite)
            XCTAssertTrue((error as? MigrationError)?.message.contains("closed") ?? false)
        }
    }

    func testErrorsNameSQLiteMessageAndSQL() throws {
        let db = try SQLiteDatabase(path: ":memory:", mode: .create)
        defer { db.close() }
        XCTAssertThrowsError(try db.prepare("SELEKT 1")) { error in
            let e = error as? MigrationError
            XCTAssertEqual(e?.code, .sqlite)
            XCTAssertTrue(e?.message.contains("syntax error") ?? false, e?.message ?? "")
            XCTAssertTrue(e?.message.contains("SELEKT 1") ?? false, e?.message ?? "")
        }
        try db.exec("CREATE TABLE t (x INTEGER PRIMARY KEY)")
        try db.run("INSERT INTO t VALUES (1)")
        XCTAssertThrowsError(try db.run("INSERT INTO t VALUES (1)")) { error in
            let e = error as? MigrationError
            XCTAssertTrue(e?.message.contains("UNIQUE constraint failed") ?? false, e?.message ?? "")
            XCTAssertTrue(e?.message.contains("INSERT INTO t VALUES (1)") ?? false)
        }
        XCTAssertThrowsError(try db.exec("DROP TABLE absent")) { error in
            XCTAssertTrue((error as? MigrationError)?.message.contains("no such table: absent") ?? false, "\(error)")
        }
        XCTAssertThrowsError(try SQLiteDatabase(path: directory + "/missing/x.sqlite", mode: .readOnly)) { error in
            XCTAssertEqual((error as? MigrationError)?.code, .sqlite)
            XCTAssertTrue((error as? MigrationError)?.message.contains("missing/x.sqlite") ?? false)
        }
    }

    func testTransactionsRowIDsAndChanges() throws {
        let db = try SQLiteDatabase(path: directory + "/tx.sqlite", mode: .create)
        defer { db.close() }
        try db.exec("CREATE TABLE t (x)")
        XCTAssertFalse(db.isInTransaction)
        try db.begin()
        XCTAssertTrue(db.isInTransaction)
        try db.run("INSERT INTO t VALUES (?)", ["a"])
        XCTAssertEqual(db.lastInsertRowID, 1)
        try db.run("INSERT INTO t VALUES (?)", ["b"])
        try db.rollback()
        XCTAssertFalse(db.isInTransaction)
        XCTAssertEqual(try db.scalar("SELECT COUNT(*) FROM t")?.integer, 0)
        try db.begin()
        try db.run("INSERT INTO t VALUES (?), (?)", ["a", "b"])
        XCTAssertEqual(db.changes, 2)
        try db.commit()
        try db.run("UPDATE t SET x = 'c'")
        XCTAssertEqual(db.changes, 2)
        XCTAssertEqual(try db.columns(ofTable: "t"), ["x"])
        XCTAssertTrue(try db.tableExists("T"))
        XCTAssertFalse(try db.tableExists("u"))
        XCTAssertNoThrow(try db.rollback())  // nothing open: harmless
    }

    func testReadOnlyConnectionRefusesWrites() throws {
        let path = directory + "/ro.sqlite"
        let writer = try SQLiteDatabase(path: path, mode: .create)
        try writer.exec("CREATE TABLE t (x)")
        writer.close()
        let reader = try SQLiteDatabase(path: path, mode: .readOnly)
        defer { reader.close() }
        XCTAssertThrowsError(try reader.exec("INSERT INTO t VALUES (1)")) { error in
            XCTAssertTrue((error as? MigrationError)?.message.contains("readonly") ?? false, "\(error)")
        }
    }
}

final class SQLiteErrorCodeTests: XCTestCase {
    func testSQLiteErrorsCarrySQLitesResultCode() throws {
        let scratch = ScratchDirectory()
        let database = try SQLiteDatabase(path: scratch.file("a.sqlite"), mode: .create)
        defer { database.close() }
        try database.exec("CREATE TABLE t (x NOT NULL)")
        XCTAssertThrowsError(try database.run("INSERT INTO t VALUES (NULL)")) { error in
            XCTAssertEqual((error as? MigrationError)?.sqliteResultCode, 1299, "SQLITE_CONSTRAINT_NOTNULL: \(error)")
        }
        XCTAssertThrowsError(try database.exec("SELECT * FROM missing")) { error in
            XCTAssertEqual((error as? MigrationError)?.sqliteResultCode, 1, "SQLITE_ERROR: \(error)")
        }
        XCTAssertThrowsError(try SQLiteDatabase(path: scratch.file("none/b.sqlite"), mode: .readOnly)) { error in
            XCTAssertEqual((error as? MigrationError)?.sqliteResultCode, 14, "SQLITE_CANTOPEN: \(error)")
        }
        XCTAssertNil(MigrationError(.io, "x").sqliteResultCode)
    }
}
