import CSQLite
import XCTest

@testable import CDMigrate

/// Stage 3 skips the rows a checked SQL copy already validated (`ValidatedByCopy`): the copy's
/// per-row check carries the destination's rules for the values it copies bare. These tests check
/// that every rule stage 3 enforces still fails the migration where a copied value can break it —
/// a nil into a required attribute (whether the source allows nil or only its store holds one), an
/// integer beyond the destination's type, a computed value, a constant, a value that needed
/// converting — with the same error (code, message, instance and key) as the per-instance path,
/// which validates every row; and that a clean copy is recorded as validated, so that stage 3
/// scans only the rows outside it.
final class CopyValidationTests: XCTestCase {
    var scratch: ScratchDirectory!

    override func setUpWithError() throws { scratch = ScratchDirectory() }

    static let sourceModel = """
        {"name": "Source", "entities": [
          {"name": "Item", "attributes": [{"name": "name", "type": "string", "optional": true},
                                          {"name": "label", "type": "string", "optional": false},
                                          {"name": "big", "type": "integer64", "optional": true},
                                          {"name": "small", "type": "integer16", "optional": true},
                                          {"name": "medium", "type": "integer32", "optional": true},
                                          {"name": "score", "type": "double", "optional": true}]}
        ]}
        """
    static let destinationModel = """
        {"name": "Destination", "entities": [
          {"name": "Item", "attributes": [{"name": "name", "type": "string", "optional": false},
                                          {"name": "label", "type": "string", "optional": false},
                                          {"name": "big", "type": "integer16", "optional": true},
                                          {"name": "small", "type": "integer16", "optional": false},
                                          {"name": "medium", "type": "integer32", "optional": true},
                                          {"name": "score", "type": "double", "optional": true},
                                          {"name": "kind", "type": "string", "optional": true}]}
        ]}
        """

    /// 30 clean items, then `update` run on the store with SQLite.
    func makeSource(_ name: String, _ update: String) throws -> String {
        let model = try ManagedObjectModel(json: Self.sourceModel)
        let path = scratch.file(name)
        try makeStore(path, model) { store in
            for i in 1...30 {
                _ = try insert(
                    store, "Item",
                    [
                        "name": .string("item \(i)"), "label": .string("l\(i)"), "big": .integer(Int64(i)),
                        "small": .integer(Int64(i)), "medium": .integer(Int64(i) * 1000),
                        "score": .double(Double(i) / 2),
                    ])
            }
        }
        var db: OpaquePointer?
        XCTAssertEqual(sqlite3_open(path, &db), SQLITE_OK)
        XCTAssertEqual(sqlite3_exec(db, update, nil, nil, nil), SQLITE_OK, String(cString: sqlite3_errmsg(db)))
        sqlite3_close(db)
        return path
    }

    func mapping(_ values: [String: String]) throws -> MappingModel {
        var all = [
            "name": "$source.name", "label": "$source.label", "big": "$source.big", "small": "$source.small",
            "medium": "$source.medium", "score": "$source.score",
        ]
        for (key, value) in values { all[key] = value }
        let json = all.sorted { $0.key < $1.key }.map { "\"\($0.key)\": \"\($0.value)\"" }.joined(separator: ", ")
        return try MappingModel(
            json:
                """
                {"entityMappings": [{"name": "ItemToItem", "sourceEntity": "Item", "destinationEntity": "Item", "predicate": "TRUEPREDICATE",
                  "attributeMappings": {\(json)}}]}
                """)
    }

    struct Outcome: Equatable {
        var code: MigrationError.Code?
        var message: String
        var subjects: [String]
    }

    /// Runs the migration the SQL way (keeping or renumbering the source keys) or per instance:
    /// its error with the store's identifier taken out of the message, or nil.
    func run(_ source: String, _ mapping: MappingModel, _ way: String, check: ((MigrationManager) -> Void)? = nil)
        throws -> Outcome?
    {
        let manager = try MigrationManager(
            sourceModel: try ManagedObjectModel(json: Self.sourceModel),
            destinationModel: try ManagedObjectModel(json: Self.destinationModel), mappingModel: mapping)
        manager.pushDownSQL = way != "per-instance"
        manager.keepsSourceKeys = way != "sql-renumbered"
        // The run's state is looked at when the run reports its end, while it still has it.
        var checked = false
        manager.progressHandler = { [unowned manager] progress in
            if progress.fraction >= 1, let check {
                check(manager)
                checked = true
            }
            return true
        }
        do {
            let report = try manager.migrateStore(
                from: source, to: scratch.file("out-\(UInt32.random(in: 0...UInt32.max)).sqlite"))
            XCTAssertEqual(report.mappings.first?.instancesBySQL, way != "per-instance", way)
            XCTAssertEqual(checked, check != nil, "the run's end was reported")
            return nil
        } catch let error as MigrationError {
            func clean(_ text: String) -> String {
                // x-coredata://UUID/Item/p7 → x-coredata://…/Item/p7
                var out = ""
                var rest = Substring(text)
                while let start = rest.range(of: "x-coredata://") {
                    out += rest[..<start.upperBound] + "…"
                    rest = rest[start.upperBound...]
                    if let slash = rest.firstIndex(of: "/") { rest = rest[slash...] }
                }
                return out + rest
            }
            let all = [error] + error.underlying
            return Outcome(
                code: error.code, message: clean(error.message),
                subjects: all.compactMap {
                    $0.validationSubject.map { "\($0.entityName) \($0.primaryKey) \($0.key) \(clean($0.objectURI))" }
                })
        }
    }

    /// Every way gives the per-instance path's outcome, which must be a failure with `code`.
    func assertSameFailure(
        _ source: String, _ mapping: MappingModel, _ code: MigrationError.Code, _ what: String,
        file: StaticString = #filePath, line: UInt = #line
    ) throws {
        let expected = try run(source, mapping, "per-instance")
        XCTAssertEqual(expected?.code, code, "\(what): \(expected?.message ?? "no error")", file: file, line: line)
        XCTAssertFalse(expected?.subjects.isEmpty ?? true, what, file: file, line: line)
        for way in ["sql", "sql-renumbered"] {
            XCTAssertEqual(try run(source, mapping, way), expected, "\(what), \(way)", file: file, line: line)
        }
    }

    func testAClearCopyPassesAndIsRecordedAsValidated() throws {
        let source = try makeSource("clean.sqlite", "SELECT 1")
        let mapping = try mapping(["big": "$source.small", "kind": "'k'"])
        XCTAssertNil(try run(source, mapping, "per-instance"))
        for way in ["sql", "sql-renumbered"] {
            XCTAssertNil(
                try run(source, mapping, way) { manager in
                    guard let entity = manager.destinationModel.entity(named: "Item") else { return XCTFail("no Item") }
                    // Every attribute copied bare or set to a constant meeting its rules: none is scanned again.
                    for attribute in ["name", "label", "big", "small", "medium", "score", "kind"] {
                        let keys = manager.run.validatedByCopy.coveredKeys(of: entity, attribute: attribute)
                        XCTAssertEqual(keys.count, 1, "\(way): \(attribute)")
                        XCTAssertEqual(keys.first.map { $0.upperBound - $0.lowerBound + 1 }, 30, "\(way): \(attribute)")
                    }
                }, way)
        }
    }

    /// The source allows nil where the destination requires a value.
    func testANilIntoARequiredAttributeStillFails() throws {
        let source = try makeSource("nil.sqlite", "UPDATE ZITEM SET ZNAME = NULL WHERE Z_PK = 17")
        try assertSameFailure(source, try mapping([:]), .validationMissingMandatoryProperty, "one nil name")
        let two = try makeSource("nil2.sqlite", "UPDATE ZITEM SET ZNAME = NULL WHERE Z_PK IN (3, 29)")
        try assertSameFailure(two, try mapping([:]), .validationMultipleErrors, "two nil names")
    }

    /// The rules are the same on both sides, but the source store holds a nil all the same.
    func testANilTheSourceStoreHoldsAgainstItsOwnModelStillFails() throws {
        let source = try makeSource("label.sqlite", "UPDATE ZITEM SET ZLABEL = NULL WHERE Z_PK = 30")
        try assertSameFailure(source, try mapping([:]), .validationMissingMandatoryProperty, "nil label")
        let small = try makeSource("small.sqlite", "UPDATE ZITEM SET ZSMALL = NULL WHERE Z_PK = 1")
        try assertSameFailure(small, try mapping([:]), .validationMissingMandatoryProperty, "nil small")
    }

    /// An integer beyond the destination's type: copied from a wider type, or held by a source
    /// store beyond its own type's range.
    func testAnIntegerBeyondTheDestinationTypeStillFails() throws {
        let wide = try makeSource("big.sqlite", "UPDATE ZITEM SET ZBIG = 40000 WHERE Z_PK = 12")
        try assertSameFailure(wide, try mapping([:]), .validationNumberTooLarge, "big 40000 into 16 bits")
        let low = try makeSource("low.sqlite", "UPDATE ZITEM SET ZBIG = -40000 WHERE Z_PK = 12")
        try assertSameFailure(low, try mapping([:]), .validationNumberTooSmall, "big -40000 into 16 bits")
        let held = try makeSource("held.sqlite", "UPDATE ZITEM SET ZSMALL = 70000 WHERE Z_PK = 5")
        try assertSameFailure(held, try mapping([:]), .validationNumberTooLarge, "small 70000 held by the source")
        let medium = try makeSource("medium.sqlite", "UPDATE ZITEM SET ZMEDIUM = 5000000000 WHERE Z_PK = 9")
        try assertSameFailure(medium, try mapping([:]), .validationNumberTooLarge, "medium beyond 32 bits")
        // One column read into two attributes of different ranges: the narrower one's rule holds.
        let shared = try makeSource("shared.sqlite", "UPDATE ZITEM SET ZMEDIUM = 40000 WHERE Z_PK = 9")
        try assertSameFailure(
            shared, try mapping(["big": "$source.medium"]), .validationNumberTooLarge, "medium 40000 into big")
    }

    /// A computed value or a constant that breaks a rule.
    func testAComputedValueOrConstantBreakingARuleStillFails() throws {
        let source = try makeSource("computed.sqlite", "SELECT 1")
        // Rows 17 to 30 go beyond 16 bits.
        try assertSameFailure(
            source, try mapping(["small": "$source.small * 2000"]), .validationMultipleErrors, "small * 2000")
        let one = try makeSource("computed-one.sqlite", "UPDATE ZITEM SET ZBIG = 20000 WHERE Z_PK = 4")
        try assertSameFailure(
            one, try mapping(["small": "$source.big + 20000"]), .validationNumberTooLarge, "big + 20000")
        try assertSameFailure(
            source, try mapping(["small": "40000"]), .validationMultipleErrors, "a constant beyond 16 bits")
        try assertSameFailure(source, try mapping(["label": "nil"]), .validationMultipleErrors, "a nil constant")
    }

    /// A value whose storage does not fit its source type is converted (here to nil) before the
    /// rules apply, on the SQL path as per instance.
    func testAValueThatNeedsConvertingIsStillChecked() throws {
        let text = try makeSource("text.sqlite", "UPDATE ZITEM SET ZSMALL = 'many' WHERE Z_PK = 8")
        try assertSameFailure(text, try mapping([:]), .validationMissingMandatoryProperty, "text in an integer column")
        let real = try makeSource(
            "real.sqlite",
            "UPDATE ZITEM SET ZSMALL = 1e300 WHERE Z_PK = 8; UPDATE ZITEM SET ZSMALL = x'01' WHERE Z_PK = 9")
        try assertSameFailure(real, try mapping([:]), .validationMultipleErrors, "1e300 and a blob")
    }

    /// The check records a broken rule without failing the row; it fails only for a value that
    /// needs converting.
    func testTheRowCheckRecordsBrokenRules() throws {
        let db = try SQLiteDatabase(path: scratch.file("check.sqlite"), mode: .create)
        defer { db.close() }
        try db.exec("CREATE TABLE t (v)")
        let cases: [(UInt8, String, Bool)] = [
            (UInt8(ascii: "i"), "NULL", false), (UInt8(ascii: "I"), "NULL", true), (UInt8(ascii: "S"), "'a'", false),
            (UInt8(ascii: "S"), "NULL", true),
            (UInt8(ascii: "h"), "32767", false), (UInt8(ascii: "h"), "32768", true),
            (UInt8(ascii: "h"), "-32769", true), (UInt8(ascii: "h"), "NULL", false),
            (UInt8(ascii: "W"), "2147483647", false), (UInt8(ascii: "W"), "2147483648", true),
            (UInt8(ascii: "w"), "-2147483649", true),
            (UInt8(ascii: "i"), "9223372036854775807", false), (UInt8(ascii: "B"), "1", false),
            (UInt8(ascii: "D"), "NULL", true),
        ]
        for (code, value, broken) in cases {
            guard let check = StoredValueRule.plainRowCheck(codes: [("t.v", code)]) else { return XCTFail("no check") }
            try db.exec("DELETE FROM t; INSERT INTO t (v) VALUES (\(value))")
            db.valueCounts.rulesBroken = false
            XCTAssertEqual(
                try db.scalar("SELECT \(check) FROM t")?.integer, 1, "\(Character(Unicode.Scalar(code))) \(value)")
            XCTAssertEqual(db.valueCounts.rulesBroken, broken, "\(Character(Unicode.Scalar(code))) \(value)")
        }
        // A value that needs converting still fails the row.
        guard let check = StoredValueRule.plainRowCheck(codes: [("t.v", UInt8(ascii: "H"))]) else {
            return XCTFail("no check")
        }
        try db.exec("DELETE FROM t; INSERT INTO t (v) VALUES ('text')")
        XCTAssertThrowsError(try db.scalar("SELECT \(check) FROM t"))
    }

    func testTheRowsLeftToScanAreThoseOutsideTheCoveredKeys() {
        XCTAssertEqual(ValidatedByCopy.gaps(outside: []), [Int64.min...Int64.max])
        XCTAssertEqual(ValidatedByCopy.gaps(outside: [1...10]), [Int64.min...0, 11...Int64.max])
        XCTAssertEqual(ValidatedByCopy.gaps(outside: [1...10, 20...30]), [Int64.min...0, 11...19, 31...Int64.max])
        XCTAssertEqual(ValidatedByCopy.gaps(outside: [Int64.min...Int64.max]), [])
        XCTAssertEqual(ValidatedByCopy.gaps(outside: [Int64.min...5, 7...Int64.max]), [6...6])
    }
}
