import XCTest

@testable import CDMigrate

/// The counts `cdm_plain` (its `c` codes) and `cdm_count_values` keep for a connection
/// (`StoredValueRule.ValueCounts`): per counted column the rows with a value, the flag of a broken
/// rule, both reset before a statement, and an error rather than a write past the last count.
final class ValueCountsTests: XCTestCase {
    var scratch: ScratchDirectory!

    override func setUpWithError() throws { scratch = ScratchDirectory() }

    func testTheChecksCountValuesAndBrokenRulesPerStatement() throws {
        let db = try SQLiteDatabase(path: scratch.file("counts.sqlite"), mode: .create)
        defer { db.close() }
        try db.exec("CREATE TABLE t (a, b, c)")
        try db.exec("INSERT INTO t VALUES (1, NULL, 'x'), (NULL, NULL, 'y'), (3, 4, NULL)")
        XCTAssertEqual(db.valueCounts.counts, [])
        XCTAssertFalse(db.valueCounts.rulesBroken)
        // cdm_plain: `s` checks c, the two `c` codes count a and b.
        XCTAssertEqual(try db.rows("SELECT cdm_plain('csc', a, c, b) FROM t").count, 3)
        XCTAssertEqual(db.valueCounts.counts, [2, 1])
        XCTAssertFalse(db.valueCounts.rulesBroken)
        // Reset, then a required check (`S`) meets a NULL: the rule is broken, the counts go on.
        db.valueCounts.counts = []
        XCTAssertEqual(db.valueCounts.counts, [])
        XCTAssertEqual(try db.rows("SELECT cdm_plain('Sc', c, a) FROM t").count, 3)
        XCTAssertTrue(db.valueCounts.rulesBroken)
        XCTAssertEqual(db.valueCounts.counts, [2])
        db.valueCounts.rulesBroken = false
        XCTAssertFalse(db.valueCounts.rulesBroken)
        // cdm_count_values counts every argument; a column without any value is touched all the same.
        db.valueCounts.counts = []
        XCTAssertEqual(try db.rows("SELECT cdm_count_values(a, b, c, NULL) FROM t").count, 3)
        XCTAssertEqual(db.valueCounts.counts, [2, 1, 2, 0])
        db.valueCounts.counts = [5, 6]
        XCTAssertEqual(db.valueCounts.counts, [5, 6])
    }

    func testMoreCountedColumnsThanACallTakesAreAnError() throws {
        let db = try SQLiteDatabase(path: scratch.file("many.sqlite"), mode: .create)
        defer { db.close() }
        let most = StoredValueRule.plainArguments
        let fits = Array(repeating: "1", count: most).joined(separator: ", ")
        XCTAssertNotNil(try db.scalar("SELECT cdm_count_values(\(fits))"))
        XCTAssertEqual(db.valueCounts.counts, Array(repeating: 1, count: most))
        XCTAssertThrowsError(try db.scalar("SELECT cdm_count_values(\(fits), 1)"))
        let signature = String(repeating: "c", count: most + 1)
        XCTAssertThrowsError(try db.scalar("SELECT cdm_plain('\(signature)', \(fits), 1)"))
    }
}
