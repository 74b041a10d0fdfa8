import CSQLite
import XCTest

@testable import CDMigrate

/// Note's attributes as ZNOTE's columns; relationships have no column here.
private struct NoteColumns: SQLColumnResolver {
    func sqlColumn(forKeyPath keys: [String]) -> (sql: String, type: AttributeType)? {
        switch keys {
        case ["title"]: return ("ZTITLE", .string)
        case ["body"]: return ("ZBODY", .string)
        case ["displayIndex"]: return ("ZDISPLAYINDEX", .integer32)
        case ["rating"]: return ("ZRATING", .double)
        case ["archived"]: return ("ZARCHIVED", .boolean)
        case ["dateCreated"]: return ("ZDATECREATED", .date)
        default: return nil
        }
    }
}

final class PredicateSQLTranslatorTests: XCTestCase {
    private func translate(_ text: String, _ args: [Value] = []) throws -> (sql: String, arguments: [Value])? {
        return PredicateSQLTranslator.translate(
            try ExpressionParser.parsePredicate(text, arguments: args), resolver: NoteColumns())
    }

    private func assertSQL(
        _ text: String, _ sql: String, _ arguments: [Value], file: StaticString = #filePath, line: UInt = #line
    ) {
        do {
            guard let t = try translate(text) else {
                return XCTFail("\(text) did not translate", file: file, line: line)
            }
            XCTAssertEqual(t.sql, sql, text, file: file, line: line)
            XCTAssertEqual(t.arguments, arguments, text, file: file, line: line)
            for (a, b) in zip(t.arguments, arguments) {
                XCTAssertEqual(a.typeName, b.typeName, text, file: file, line: line)
            }
        } catch {
            XCTFail("\(text): \(error)", file: file, line: line)
        }
    }

    func testTranslations() {
        assertSQL(#"title == "a""#, "ZTITLE IS ?", ["a"])
        assertSQL(#"title != "a""#, "ZTITLE IS NOT ?", ["a"])
        assertSQL("title == nil", "ZTITLE IS NULL", [])
        assertSQL("nil != title", "ZTITLE IS NOT NULL", [])
        assertSQL("displayIndex > 2", "(ZDISPLAYINDEX IS NOT NULL AND ZDISPLAYINDEX > ?)", [2])
        assertSQL("2 > displayIndex", "(ZDISPLAYINDEX IS NOT NULL AND ZDISPLAYINDEX < ?)", [2])
        assertSQL("rating <= 4.5", "(ZRATING IS NOT NULL AND ZRATING <= ?)", [4.5])
        assertSQL("archived == YES", "ZARCHIVED IS ?", [.integer(1)])
        assertSQL("displayIndex < nil", "0", [])
        assertSQL(
            "displayIndex BETWEEN {1, 5}", "(ZDISPLAYINDEX IS NOT NULL AND ZDISPLAYINDEX BETWEEN ? AND ?)", [1, 5])
        assertSQL("displayIndex IN {1, 2}", "(ZDISPLAYINDEX IS NOT NULL AND ZDISPLAYINDEX IN (?, ?))", [1, 2])
        assertSQL("displayIndex IN {}", "0", [])
        assertSQL(#"title BEGINSWITH "ab""#, "(ZTITLE IS NOT NULL AND instr(ZTITLE, ?) = 1)", ["ab"])
        assertSQL(#"title ENDSWITH "bé""#, "(ZTITLE IS NOT NULL AND substr(ZTITLE, -2) = ?)", ["bé"])
        assertSQL(#"title CONTAINS "b""#, "(ZTITLE IS NOT NULL AND instr(ZTITLE, ?) > 0)", ["b"])
        assertSQL(#"title CONTAINS[c] "B""#, "(ZTITLE IS NOT NULL AND instr(lower(ZTITLE), ?) > 0)", ["b"])
        assertSQL(#"title CONTAINS """#, "0", [])
        assertSQL(#"title LIKE "a*b?[c]\\*""#, "(ZTITLE IS NOT NULL AND ZTITLE GLOB ?)", ["a*b?[[]c][*]"])
        assertSQL(#"title ==[c] "AB""#, "lower(ZTITLE) IS ?", ["ab"])
        assertSQL(
            #"title == "a" AND (displayIndex == 1 OR NOT rating > 2)"#,
            "(ZTITLE IS ? AND (ZDISPLAYINDEX IS ? OR NOT (ZRATING IS NOT NULL AND ZRATING > ?)))", ["a", 1, 2])
        assertSQL("TRUEPREDICATE", "1", [])
        assertSQL("1 == 2", "0", [])
        assertSQL(
            "displayIndex < rating", "(ZDISPLAYINDEX IS NOT NULL AND ZRATING IS NOT NULL AND ZDISPLAYINDEX < ZRATING)",
            [])
        assertSQL("title == body", "ZTITLE IS ZBODY", [])
    }

    func testEmptyCompoundsAreConstants() {
        XCTAssertEqual(PredicateSQLTranslator.translate(.and([]), resolver: NoteColumns())?.sql, "1")
        XCTAssertEqual(PredicateSQLTranslator.translate(.or([]), resolver: NoteColumns())?.sql, "0")
    }

    func testDatesAndArgumentsBind() throws {
        let t = try XCTUnwrap(try translate("dateCreated >= %@ AND title == %@", [.date(100), "x"]))
        XCTAssertEqual(t.sql, "((ZDATECREATED IS NOT NULL AND ZDATECREATED >= ?) AND ZTITLE IS ?)")
        XCTAssertEqual(t.arguments.map { $0.typeName }, ["double", "string"])
        XCTAssertEqual(t.arguments, [.double(100), "x"])
    }

    func testUntranslatable() throws {
        for text in [
            #"title MATCHES "a.*""#,  // regular expressions stay in Swift
            #"title ==[d] "e""#,  // diacritic folding
            #"title BEGINSWITH[c] "é""#,  // lower() folds ASCII only
            #"ANY tags.name == "x""#,  // to-many
            "note.title == nil",  // no column
            #"title == 3"#,  // mismatched kinds
            "displayIndex == \"3\"",
            "dateCreated > 5",
            "FUNCTION(title, \"length\") > 3",
            "title == $x",
            #"title == "a" OR title MATCHES "b""#,  // one untranslatable part spoils the whole
            "NOT title MATCHES \"b\"",
            "title ==[c] body",
            "title IN {\"a\", nil}",
            "SUBQUERY(tags, $t, $t.name == \"a\").@count > 0",
        ] {
            XCTAssertNil(try translate(text), text)
        }
    }

    // MARK: Against SQLite

    private struct Row {
        var title: Value
        var body: Value
        var displayIndex: Value
        var rating: Value
        var archived: Value
        var date: Value
    }

    private let rows: [Row] = [
        Row(title: "abc", body: "x", displayIndex: 1, rating: 1.5, archived: true, date: .date(10)),
        Row(title: "ABC", body: "abc", displayIndex: 2, rating: 2.5, archived: false, date: .date(20)),
        Row(title: nil, body: nil, displayIndex: nil, rating: nil, archived: nil, date: nil),
        Row(title: "", body: "", displayIndex: 0, rating: 0, archived: false, date: .date(0)),
        Row(title: "Trosa", body: "Sweden", displayIndex: -5, rating: -1, archived: true, date: .date(-100)),
        Row(title: "a*b[c]", body: "a?b", displayIndex: 100, rating: 4.25, archived: false, date: .date(1e9)),
        Row(title: "café", body: "CAFÉ", displayIndex: 3, rating: 3, archived: true, date: .date(30)),
        Row(title: "xabcx", body: "zzz", displayIndex: 4, rating: 2.5, archived: nil, date: .date(25)),
        // The same word decomposed ("e" + U+0301): literally a different string from row 7's.
        Row(title: "cafe\u{301}", body: "cafe\u{301}s", displayIndex: 5, rating: 1, archived: false, date: .date(40)),
    ]

    private func check(_ rc: Int32, _ db: OpaquePointer?, file: StaticString = #filePath, line: UInt = #line) throws {
        if rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW {
            XCTFail("sqlite: \(String(cString: sqlite3_errmsg(db)))", file: file, line: line)
            throw MigrationError(.sqlite, "sqlite error \(rc)")
        }
    }

    private func bind(_ value: Value, _ index: Int32, _ statement: OpaquePointer?) -> Int32 {
        switch value {
        case .null: return sqlite3_bind_null(statement, index)
        case .integer(let i): return sqlite3_bind_int64(statement, index, i)
        case .bool(let b): return sqlite3_bind_int64(statement, index, b ? 1 : 0)
        case .double(let d), .date(let d): return sqlite3_bind_double(statement, index, d)
        case .string(let s): return sqlite3_bind_text(statement, index, s, -1, cdm_sqlite_transient)
        default: return SQLITE_MISUSE
        }
    }

    func testTranslatedSQLSelectsWhatTheEvaluatorAccepts() throws {
        var db: OpaquePointer?
        try check(sqlite3_open(":memory:", &db), db)
        defer { sqlite3_close(db) }
        try check(
            sqlite3_exec(
                db,
                "CREATE TABLE ZNOTE (Z_PK INTEGER PRIMARY KEY, ZTITLE VARCHAR, ZBODY VARCHAR, ZDISPLAYINDEX INTEGER, ZRATING FLOAT, ZARCHIVED INTEGER, ZDATECREATED TIMESTAMP)",
                nil, nil, nil), db)
        let fixture = try ExpressionFixture()
        let entity = try XCTUnwrap(fixture.model.entity(named: "Note"))
        var objects: [ManagedObject] = []
        for (i, row) in rows.enumerated() {
            var insert: OpaquePointer?
            try check(sqlite3_prepare_v2(db, "INSERT INTO ZNOTE VALUES (?, ?, ?, ?, ?, ?, ?)", -1, &insert, nil), db)
            let values: [Value] = [
                .integer(Int64(i + 1)), row.title, row.body, row.displayIndex, row.rating, row.archived, row.date,
            ]
            for (k, v) in values.enumerated() { try check(bind(v, Int32(k + 1), insert), db) }
            try check(sqlite3_step(insert), db)
            sqlite3_finalize(insert)
            let object = ManagedObject(entity: entity, primaryKey: Int64(i + 1))
            try object.setValue(row.title, forKey: "title")
            try object.setValue(row.body, forKey: "body")
            try object.setValue(row.displayIndex, forKey: "displayIndex")
            try object.setValue(row.rating, forKey: "rating")
            try object.setValue(row.archived, forKey: "archived")
            try object.setValue(row.date, forKey: "dateCreated")
            objects.append(object)
        }
        let predicates: [(String, [Value])] = [
            (#"title == "abc""#, []), (#"title != "abc""#, []), (#"NOT title == "abc""#, []),
            (#"title ==[c] "abc""#, []),
            (#"title != nil"#, []), (#"title == nil"#, []), (#"NOT title != nil"#, []),
            ("displayIndex > 1", []), ("NOT displayIndex > 1", []), ("displayIndex <= 0", []), ("0 < displayIndex", []),
            ("rating >= 2.5", []), ("rating < 2", []), ("NOT rating < 2", []), ("displayIndex BETWEEN {0, 3}", []),
            ("NOT displayIndex BETWEEN {0, 3}", []), ("displayIndex IN {1, 4, 100}", []),
            ("NOT displayIndex IN {1, 4}", []),
            ("archived == YES", []), ("archived == NO", []), ("archived != YES", []), ("archived == 1", []),
            (#"title BEGINSWITH "ab""#, []), (#"NOT title BEGINSWITH "ab""#, []), (#"title BEGINSWITH[c] "AB""#, []),
            (#"title ENDSWITH "bc""#, []), (#"title ENDSWITH "é""#, []), (#"title ENDSWITH[c] "BCX""#, []),
            (#"title CONTAINS "bc""#, []), (#"title CONTAINS[c] "BC""#, []), (#"NOT title CONTAINS "b""#, []),
            (#"title CONTAINS """#, []), (#"NOT title CONTAINS """#, []),
            (#"title LIKE "a*""#, []), (#"title LIKE[c] "A?C""#, []), (#"title LIKE "a\\*b[c]""#, []),
            (#"title LIKE "a\\?b""#, []), (#"title LIKE "*""#, []),
            (#"title LIKE "?""#, []), (#"title LIKE """#, []), (#"NOT title LIKE "*c""#, []),
            (#"title IN {"abc", "Trosa"}"#, []), (#"title IN[c] {"ABC"}"#, []), (#"title < "b""#, []),
            (#"title >[c] "b""#, []),
            ("dateCreated > %@", [.date(15)]), ("dateCreated BETWEEN %@", [.collection([.date(0), .date(30)])]),
            ("dateCreated == %@", [.date(20)]), ("NOT dateCreated == %@", [.date(20)]),
            ("title == body", []), ("title != body", []), ("displayIndex > rating", []),
            ("NOT displayIndex > rating", []),
            (#"title == "abc" OR displayIndex > 50"#, []), (#"NOT (title == "abc" OR displayIndex > 50)"#, []),
            (#"(title BEGINSWITH "a" AND rating > 1) OR archived == NO"#, []), ("TRUEPREDICATE", []),
            ("NOT FALSEPREDICATE", []),
            (#"title == "café""#, []), ("title == \"cafe\u{301}\"", []), (#"title BEGINSWITH "cafe""#, []),
            (#"title LIKE "caf?""#, []), (#"title LIKE "caf??""#, []),
            ("title ENDSWITH \"e\u{301}\"", []), (#"title CONTAINS "fe""#, []), (#"title > "café""#, []),
            ("title < \"cafe\u{301}\"", []),
            ("displayIndex == %@", [.double(2.0)]), ("rating == %@", [2]), ("displayIndex < %@", [.decimal("2.5")]),
        ]
        let evaluator = PredicateEvaluator()
        // Keyed by code points: a Swift dictionary would merge the two spellings of "café".
        var results: [[UInt32]: [Int64]] = [:]
        func selectedRows(_ text: String) -> [Int64]? { results[text.unicodeScalars.map(\.value)] }
        for (text, args) in predicates {
            let predicate = try ExpressionParser.parsePredicate(text, arguments: args)
            guard let t = PredicateSQLTranslator.translate(predicate, resolver: NoteColumns()) else {
                XCTFail("\(text) did not translate")
                continue
            }
            var statement: OpaquePointer?
            try check(
                sqlite3_prepare_v2(db, "SELECT Z_PK FROM ZNOTE WHERE " + t.sql + " ORDER BY Z_PK", -1, &statement, nil),
                db)
            for (k, v) in t.arguments.enumerated() { try check(bind(v, Int32(k + 1), statement), db) }
            var selected: [Int64] = []
            while sqlite3_step(statement) == SQLITE_ROW { selected.append(sqlite3_column_int64(statement, 0)) }
            sqlite3_finalize(statement)
            let expected = try objects.filter { try evaluator.evaluate(predicate, object: .object($0)) }.map {
                $0.objectID.primaryKey
            }
            XCTAssertEqual(selected, expected, "\(text) → \(t.sql) \(t.arguments)")
            results[text.unicodeScalars.map(\.value)] = selected
        }
        // Spot checks that the rows exercise the edge cases (nil row 3, empty row 4).
        XCTAssertEqual(selectedRows(#"title ==[c] "abc""#), [1, 2])
        XCTAssertEqual(selectedRows(#"title != "abc""#), [2, 3, 4, 5, 6, 7, 8, 9])
        XCTAssertEqual(selectedRows(#"NOT title CONTAINS """#), [1, 2, 3, 4, 5, 6, 7, 8, 9])
        XCTAssertEqual(selectedRows(#"title LIKE """#), [4])
        XCTAssertEqual(selectedRows("archived != YES"), [2, 3, 4, 6, 8, 9])
        // Literal comparison: the precomposed and the decomposed "café" are different strings.
        XCTAssertEqual(selectedRows(#"title == "café""#), [7])
        XCTAssertEqual(selectedRows("title == \"cafe\u{301}\""), [9])
        XCTAssertEqual(selectedRows(#"title BEGINSWITH "cafe""#), [9])
        XCTAssertEqual(selectedRows(#"title LIKE "caf?""#), [7], "? matches one code point")
        XCTAssertEqual(selectedRows(#"title LIKE "caf??""#), [9])
        XCTAssertEqual(selectedRows("title ENDSWITH \"e\u{301}\""), [9])
    }
}
