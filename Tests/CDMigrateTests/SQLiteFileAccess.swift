import CSQLite
import XCTest

/// Tests that read or change a store's SQLite file directly: each call opens the file, does its
/// one thing and closes it. A failing call is a test failure naming SQLite's message.
protocol SQLiteFileAccess {}

extension SQLiteFileAccess {
    /// Runs SQL text (one or more statements) on the file.
    func sql(_ path: String, _ text: String, file: StaticString = #filePath, line: UInt = #line) throws {
        var db: OpaquePointer?
        XCTAssertEqual(sqlite3_open(path, &db), SQLITE_OK, file: file, line: line)
        defer { sqlite3_close(db) }
        XCTAssertEqual(
            sqlite3_exec(db, text, nil, nil, nil), SQLITE_OK, String(cString: sqlite3_errmsg(db)), file: file,
            line: line)
    }

    /// The rows a query gives, each as its columns' text joined by "|" ("NULL" for NULL).
    func rows(_ path: String, _ query: String, file: StaticString = #filePath, line: UInt = #line) -> [String] {
        var db: OpaquePointer?
        XCTAssertEqual(sqlite3_open(path, &db), SQLITE_OK, file: file, line: line)
        defer { sqlite3_close(db) }
        var statement: OpaquePointer?
        XCTAssertEqual(
            sqlite3_prepare_v2(db, query, -1, &statement, nil), SQLITE_OK,
            "\(query): \(String(cString: sqlite3_errmsg(db)))",
            file: file, line: line)
        defer { sqlite3_finalize(statement) }
        var result: [String] = []
        while sqlite3_step(statement) == SQLITE_ROW {
            result.append(
                (0..<sqlite3_column_count(statement)).map { i in
                    sqlite3_column_type(statement, i) == SQLITE_NULL
                        ? "NULL" : String(cString: sqlite3_column_text(statement, i))
                }.joined(separator: "|"))
        }
        return result
    }

    /// Every row of every entity and join table (`Z…`), sorted, by table: what two runs that must
    /// write the same store are compared by. The metadata (the store's UUID) and the model cache
    /// are left out.
    func entityTables(_ path: String) -> [String: [String]] {
        var tables: [String: [String]] = [:]
        for table in rows(
            path,
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'Z%' AND name NOT IN ('Z_METADATA', 'Z_MODELCACHE')"
        ) {
            tables[table] = rows(path, "SELECT * FROM \"\(table)\"").sorted()
        }
        return tables
    }
}
