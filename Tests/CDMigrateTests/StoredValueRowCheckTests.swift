import CSQLite
import XCTest

@testable import CDMigrate

/// The SQL path copies source columns bare with one `cdm_plain` check per row
/// (`StoredValueRule.plainRowCheck`) and runs the copy again through `StoredValueRule.sql` when a
/// row holds a value that needs converting. These tests check that the check lets through exactly
/// what the converting `CASE` copies unchanged, and that a bad value in a row after many good ones
/// (rows already written when the check fails) gives the per-instance path's rows on every SQL
/// path: the plain copy, the copy keeping source keys, one destination per distinct value, and a
/// policy's batch default with and without source keys.
final class StoredValueRowCheckTests: XCTestCase {
    var scratch: ScratchDirectory!

    override func setUpWithError() throws { scratch = ScratchDirectory() }

    static let types: [AttributeType] = [
        .integer16, .integer32, .integer64, .boolean, .double, .float, .date, .string, .uri,
        .decimal, .binary, .transformable, .uuid,
    ]
    static let samples = [
        "NULL", "0", "1", "7", "-1", "1.5", "0.0", "1e300", "'text'", "'12'", "''", "x'0102'", "x''",
        "x'000102030405060708090a0b0c0d0e0f'", "'00010203-0405-0607-0809-0a0b0c0d0e0f'",
    ]

    /// For every type and every storage class, `cdm_plain` passes a value exactly when the
    /// converting `CASE` would copy it unchanged.
    func testTheRowCheckPassesExactlyWhatTheConvertingCaseCopiesUnchanged() throws {
        let db = try SQLiteDatabase(path: scratch.file("check.sqlite"), mode: .create)
        defer { db.close() }
        try db.exec("CREATE TABLE t (v)")
        for type in Self.types {
            guard let condition = StoredValueRule.plainCondition("t.v", as: type),
                let check = StoredValueRule.plainRowCheck([("t.v", type)])
            else { return XCTFail("\(type) has no check") }
            for sample in Self.samples {
                try db.exec("DELETE FROM t; INSERT INTO t (v) VALUES (\(sample))")
                let plain = try db.scalar("SELECT (\(condition)) FROM t")?.integer == 1
                var passes = true
                do { _ = try db.scalar("SELECT \(check) FROM t") } catch let error as MigrationError {
                    XCTAssertTrue(error.message.contains(StoredValueRule.needsConversion), error.message)
                    passes = false
                }
                XCTAssertEqual(passes, plain, "\(type.rawValue), \(sample)")
            }
        }
        for type in [AttributeType.undefined, .objectID, .composite] {
            XCTAssertNil(StoredValueRule.plainRowCheck([("t.v", type)]), "\(type)")
            XCTAssertEqual(StoredValueRule.sql("t.v", as: type), "t.v")
        }
    }

    /// More columns than one SQL function call takes: the check is split across calls, and a bad
    /// value in any of them fails the row.
    func testTheRowCheckOfManyColumnsSpansSeveralCalls() throws {
        let db = try SQLiteDatabase(path: scratch.file("wide.sqlite"), mode: .create)
        defer { db.close() }
        let count = StoredValueRule.plainArguments * 2 + 5
        let columns = (0..<count).map { "c\($0)" }
        try db.exec("CREATE TABLE t (\(columns.joined(separator: ", ")))")
        try db.exec("INSERT INTO t VALUES (\(columns.map { _ in "1" }.joined(separator: ", ")))")
        guard let check = StoredValueRule.plainRowCheck(columns.map { ("t." + $0, AttributeType.integer64) }) else {
            return XCTFail()
        }
        XCTAssertTrue(check.hasPrefix("min(cdm_plain("), check)
        XCTAssertEqual(try db.scalar("SELECT \(check) FROM t")?.integer, 1)
        for column in [columns[0], columns[StoredValueRule.plainArguments], columns[count - 1]] {
            try db.exec("UPDATE t SET \(column) = 'text'")
            XCTAssertThrowsError(try db.scalar("SELECT \(check) FROM t"), column)
            try db.exec("UPDATE t SET \(column) = 1")
        }
    }

    static let model = """
        {"name": "Notes", "entities": [
          {"name": "Note", "attributes": [{"name": "n", "type": "integer64", "optional": true},
                                          {"name": "x", "type": "double", "optional": true},
                                          {"name": "title", "type": "string", "optional": true},
                                          {"name": "when", "type": "date", "optional": true},
                                          {"name": "flag", "type": "boolean", "optional": true},
                                          {"name": "amount", "type": "decimal", "optional": true},
                                          {"name": "data", "type": "binary", "optional": true},
                                          {"name": "uid", "type": "uuid", "optional": true},
                                          {"name": "kind", "type": "string", "optional": true}]}
        ]}
        """
    static let attributes = ["n", "x", "title", "when", "flag", "amount", "data", "uid", "kind"]

    final class Batch: EntityMigrationPolicy {
        override var createsDestinationInstancesInBatches: Bool { true }
    }

    func mapping(policy: Bool, distinct: Bool) throws -> MappingModel {
        let values = Self.attributes.map { "\"\($0)\": \"$source.\($0)\"" }.joined(separator: ", ")
        let extra =
            policy
            ? #""type": "custom", "policy": "Batch", "#
            : distinct ? #""userInfo": {"cdmigrate.distinctValueKeyPath": "kind"}, "# : ""
        return try MappingModel(
            json:
                """
                {"entityMappings": [{"name": "NoteToNote", "sourceEntity": "Note", "destinationEntity": "Note", \(extra)"predicate": "TRUEPREDICATE",
                  "attributeMappings": {\(values)}}]}
                """)
    }

    /// 40 good notes (every third of kind "b", the others of their own kind), then `update`.
    func makeSource(_ model: ManagedObjectModel, _ name: String, _ update: String) throws -> String {
        let path = scratch.file(name)
        try makeStore(path, model) { store in
            for i in 1...40 {
                _ = try insert(
                    store, "Note",
                    [
                        "n": .integer(Int64(i)), "x": .double(Double(i) / 4), "title": .string("note \(i)"),
                        "when": .date(Double(i)), "flag": .bool(i % 2 == 0), "amount": .decimal("\(i).25"),
                        "data": .binary([UInt8(i), 1]), "uid": .uuid(Array(repeating: UInt8(i), count: 16)),
                        "kind": .string(i % 3 == 0 ? "b" : "k\(i)"),
                    ])
            }
        }
        var db: OpaquePointer?
        XCTAssertEqual(sqlite3_open(path, &db), SQLITE_OK)
        XCTAssertEqual(sqlite3_exec(db, update, nil, nil, nil), SQLITE_OK, String(cString: sqlite3_errmsg(db)))
        sqlite3_close(db)
        return path
    }

    /// The destination's rows with each value's storage class.
    func rows(_ path: String) throws -> [String] {
        let db = try SQLiteDatabase(path: path, mode: .readOnly)
        defer { db.close() }
        let columns = Self.attributes.map { "quote(Z\($0.uppercased())) || ':' || typeof(Z\($0.uppercased()))" }.joined(
            separator: " || '|' || ")
        // Z_OPT too: the row check stands in its place and must leave 1 there.
        return try db.rows("SELECT Z_PK || ' ' || Z_OPT || ' ' || \(columns) FROM ZNOTE ORDER BY Z_PK").map {
            $0[0].text ?? ""
        }
    }

    func run(_ model: ManagedObjectModel, _ source: String, _ way: String, distinct: Bool) throws -> [String] {
        let manager = try MigrationManager(
            sourceModel: model, destinationModel: model,
            mappingModel: try mapping(policy: way.hasPrefix("batch"), distinct: distinct))
        manager.registerPolicy(named: "Batch") { Batch() }
        manager.pushDownSQL = way != "per-instance"
        // The SQL copy itself: a step done as schema changes carries such values unread.
        manager.triesSchemaChanges = false
        manager.keepsSourceKeys = !way.hasSuffix("renumbered")
        let out = scratch.file("out-\(way)-\(UInt32.random(in: 0...UInt32.max)).sqlite")
        let report = try manager.migrateStore(from: source, to: out)
        XCTAssertEqual(report.mappings.first?.instancesBySQL, way.hasPrefix("sql"), way)
        return try rows(out)
    }

    static let badValues = [
        "ZN = 'text'", "ZN = 1.5", "ZX = 'abc'", "ZTITLE = x'4142'", "ZWHEN = 'yesterday'", "ZFLAG = 7",
        "ZAMOUNT = x'01'", "ZDATA = 'text'", "ZUID = x'0102'", "ZUID = '00010203-0405-0607-0809-0a0b0c0d0e0f'",
        "ZKIND = 42",
    ]

    /// A bad value in row 31 of 40: the rows the bare copy wrote before the check failed are
    /// gone, and every SQL path gives the per-instance path's rows.
    func testABadValueAfterManyGoodRowsGivesThePerInstanceRowsOnEverySQLPath() throws {
        let model = try ManagedObjectModel(json: Self.model)
        for (i, bad) in Self.badValues.enumerated() {
            let source = try makeSource(model, "s\(i).sqlite", "UPDATE ZNOTE SET \(bad) WHERE Z_PK = 31")
            let expected = try run(model, source, "per-instance", distinct: false)
            XCTAssertEqual(expected.count, 40, bad)
            XCTAssertTrue(
                expected.allSatisfy { $0.split(separator: " ").element(at: 1) == "1" },
                "\(bad): \(expected.first ?? "")")
            for way in ["sql", "sql-renumbered", "batch", "batch-renumbered"] {
                XCTAssertEqual(try run(model, source, way, distinct: false), expected, "\(way): \(bad)")
            }
            XCTAssertEqual(
                try run(model, source, "sql", distinct: true), try run(model, source, "per-instance", distinct: true),
                "distinct: \(bad)")
        }
        // Good rows only: the bare copy stands, with the same rows.
        let good = try makeSource(model, "good.sqlite", "SELECT 1")
        let expected = try run(model, good, "per-instance", distinct: false)
        for way in ["sql", "sql-renumbered", "batch", "batch-renumbered"] {
            XCTAssertEqual(try run(model, good, way, distinct: false), expected, way)
        }
    }

    /// The copy's INSERT reads the columns bare with the row check as `Z_OPT`; the converting
    /// INSERT reads them through `StoredValueRule.sql`.
    func testTheCopyReadsColumnsBareWithOneCheckPerRow() throws {
        let model = try ManagedObjectModel(json: Self.model)
        let source = try makeSource(model, "plan-source.sqlite", "SELECT 1")
        let destinationPath = scratch.file("plan-destination.sqlite")
        try makeStore(destinationPath, model) { _ in }
        let sourceStore = try PersistentStore.open(at: source, model: model)
        let destination = try PersistentStore.open(at: destinationPath, model: model, readOnly: false)
        defer {
            sourceStore.close()
            destination.close()
        }
        let mapping = try mapping(policy: false, distinct: false).validate(sourceModel: model, destinationModel: model)
            .entityMappings[0]
        guard
            let plan = DeclarativeMappingSQL.plan(
                mapping: mapping, request: FetchRequest(entityName: "Note"), mappingID: 1,
                source: sourceStore, destination: destination)
        else { return XCTFail("no SQL plan") }
        // The row's entity is checked in the same call (`e`, then the entity numbers as `=` constants).
        XCTAssertTrue(plan.insertRows.contains("cdm_plain('e=idsdbxnus', t.Z_ENT, 1, "), plan.insertRows)
        XCTAssertFalse(plan.insertRows.contains("CASE WHEN typeof"), plan.insertRows)
        XCTAssertFalse(plan.insertRows.contains("cdm_bad_entity"), plan.insertRows)
        XCTAssertTrue(plan.insertRowsConverting?.contains("cdm_bad_entity(t.Z_PK") == true)
        XCTAssertNil(plan.insertRowsDense)
        XCTAssertEqual(plan.insertRowsConverting?.components(separatedBy: "cdm_read(").count, Self.attributes.count + 1)
        XCTAssertEqual(plan.destinationTable, #"main."ZNOTE""#)
        // Counting the values of columns left behind: the same single call, with a `c` per counted column.
        guard
            let counting = DeclarativeMappingSQL.plan(
                mapping: mapping, request: FetchRequest(entityName: "Note"), mappingID: 1,
                counting: [#"t."ZKIND""#], source: sourceStore, destination: destination)
        else { return XCTFail("no SQL plan") }
        XCTAssertTrue(counting.countsValues)
        XCTAssertTrue(counting.insertRows.contains("cdm_plain('e=idsdbxnusc', "), counting.insertRows)
        XCTAssertFalse(counting.insertRows.contains("cdm_count_values"), counting.insertRows)
    }

    /// The copy counts the values of the source attributes no mapping reads, which the loss
    /// report then takes instead of scanning the source: the same losses as the per-instance path
    /// and as the copy that had to convert a value (whose counts come from a scan), for every
    /// row or a predicate's rows.
    func testTheCopyCountsTheValuesItLeavesBehindAsTheLossReportCountsThem() throws {
        let model = try ManagedObjectModel(json: Self.model)
        // Every fourth title nil: 30 of 40 titles, 10 of the 30 notes with n > 10.
        let clean = try makeSource(model, "losses.sqlite", "UPDATE ZNOTE SET ZTITLE = NULL WHERE Z_PK % 4 = 0")
        let converting = try makeSource(
            model, "losses-bad.sqlite",
            "UPDATE ZNOTE SET ZTITLE = NULL WHERE Z_PK % 4 = 0; UPDATE ZNOTE SET ZN = 'text' WHERE Z_PK = 35")
        for predicate in ["TRUEPREDICATE", "n > 10"] {
            let mapping = try MappingModel(
                json:
                    """
                    {"entityMappings": [{"name": "NoteToNote", "sourceEntity": "Note", "destinationEntity": "Note", "predicate": "\(predicate)",
                      "attributeMappings": {"n": "$source.n", "when": "$source.when", "flag": "$source.flag", "kind": "$source.kind"}}]}
                    """)
            var results: [[String]] = []
            for (source, way) in [
                (clean, "sql"), (clean, "sql-renumbered"), (clean, "per-instance"), (converting, "sql"),
                (converting, "per-instance"),
            ] {
                let manager = try MigrationManager(sourceModel: model, destinationModel: model, mappingModel: mapping)
                manager.pushDownSQL = way != "per-instance"
                // The SQL copy itself: a step done as schema changes carries such values unread.
                manager.triesSchemaChanges = false
                manager.keepsSourceKeys = !way.hasSuffix("renumbered")
                // Looked at when the run reports its end, while it still has its counts.
                var countedByCopy: Bool?
                manager.progressHandler = { [unowned manager] progress in
                    if progress.fraction >= 1 { countedByCopy = !manager.run.leftBehindCounts.isEmpty }
                    return true
                }
                let report = try manager.migrateStore(
                    from: source, to: scratch.file("losses-\(UInt32.random(in: 0...UInt32.max)).sqlite"))
                XCTAssertEqual(report.mappings.first?.instancesBySQL, way != "per-instance", way)
                // Counted by the copy only where the bare copy stood.
                XCTAssertEqual(countedByCopy, way != "per-instance" && source == clean, "\(predicate), \(way)")
                // What this test checks: the values left behind and the instances not taken (the
                // `nilled` comparison of values that came out nil is another count).
                results.append(
                    report.losses.losses.filter { $0.kind != .nilled }.map {
                        "\($0.kind.rawValue) \($0.entityName).\($0.propertyName ?? "") \($0.count)"
                    })
            }
            let title = predicate == "TRUEPREDICATE" ? 30 : 22
            let all = predicate == "TRUEPREDICATE" ? 40 : 30
            XCTAssertEqual(
                results[0],
                [
                    "attribute Note.x \(all)", "attribute Note.title \(title)", "attribute Note.amount \(all)",
                    "attribute Note.data \(all)", "attribute Note.uid \(all)",
                ] + (all == 40 ? [] : ["instances Note. 10"]), predicate)
            for result in results.dropFirst() { XCTAssertEqual(result, results[0], predicate) }
        }
    }

    /// A row of an unknown entity after many good rows: the row check refuses it, and the copy
    /// run again with the `CASE` names it with the per-instance path's error, on every path.
    func testAnUnknownEntityAfterManyGoodRowsGivesThePerInstanceErrorOnEverySQLPath() throws {
        let model = try ManagedObjectModel(json: Self.model)
        for update in ["Z_ENT = 99", "Z_ENT = NULL", "Z_ENT = 'x'"] {
            let source = try makeSource(
                model, "entity-\(update.count).sqlite", "UPDATE ZNOTE SET \(update) WHERE Z_PK = 31")
            var errors: [String] = []
            for way in ["per-instance", "sql", "sql-renumbered", "batch", "batch-renumbered"] {
                do {
                    _ = try run(model, source, way, distinct: false)
                    XCTFail("\(update), \(way): no error")
                } catch let error as MigrationError {
                    errors.append(
                        "\(error.code.rawValue): \(error.message.components(separatedBy: " (x-coredata://")[0])")
                }
            }
            XCTAssertEqual(errors.count, 5, update)
            XCTAssertTrue(errors[0].hasPrefix("134180: row 31 of table 'ZNOTE'"), "\(update): \(errors[0])")
            for error in errors.dropFirst() { XCTAssertEqual(error, errors[0], update) }
        }
    }

    /// A copy keeping the source keys leaves them to SQLite while they are 1, 2, 3, … (no key in
    /// the INSERT), its check testing every key: at the first key out of sequence the rows written
    /// stay and the rest is copied with its keys, the values counted on; a value that needs
    /// converting, before or after that key, runs the converting copy whole. The rows, the count of
    /// rows and the value counts are those of the copy with the keys either way.
    func testACopyKeepingKeysLeavesConsecutiveKeysToSQLiteAndCopiesTheRestWithTheirKeys() throws {
        let model = try ManagedObjectModel(json: Self.model)
        let mapping = try mapping(policy: false, distinct: false).validate(sourceModel: model, destinationModel: model)
            .entityMappings[0]
        let dense = try makeSource(model, "dense.sqlite", "UPDATE ZNOTE SET ZTITLE = NULL WHERE Z_PK % 7 = 0")
        // Keys 1…4, 6…41: as many rows as a dense source, but not 1…n.
        let gap = try makeSource(
            model, "gap.sqlite",
            "UPDATE ZNOTE SET Z_PK = 41 WHERE Z_PK = 5; UPDATE ZNOTE SET ZTITLE = NULL WHERE Z_PK < 3")
        // Keys 1…38, 40, 41: the gap near the end.
        let late = try makeSource(
            model, "late.sqlite",
            "UPDATE ZNOTE SET Z_PK = 41 WHERE Z_PK = 39; UPDATE ZNOTE SET ZTITLE = NULL WHERE Z_PK > 38")
        // Keys from 101: the first row is already out of sequence.
        let shifted = try makeSource(model, "shifted.sqlite", "UPDATE ZNOTE SET Z_PK = Z_PK + 100")
        let bad = try makeSource(model, "dense-bad.sqlite", "UPDATE ZNOTE SET ZN = 'text' WHERE Z_PK = 31")
        // A gap at 5, then a value that needs converting: found by the copy with the keys.
        let gapBad = try makeSource(
            model, "gap-bad.sqlite",
            "UPDATE ZNOTE SET Z_PK = 41 WHERE Z_PK = 5; UPDATE ZNOTE SET ZN = 'text' WHERE Z_PK = 31")
        struct Copy: Equatable {
            var rows: [String]
            var lastKey: Int64
            var bare: Bool
            var written: Int
            var counts: [Int]
        }
        func copy(_ source: String, dense useDense: Bool) throws -> Copy {
            let path = scratch.file("dense-out-\(UInt32.random(in: 0...UInt32.max)).sqlite")
            try makeStore(path, model) { _ in }
            let sourceStore = try PersistentStore.open(at: source, model: model)
            let destination = try PersistentStore.open(at: path, model: model, readOnly: false)
            defer {
                sourceStore.close()
                destination.close()
            }
            guard
                let plan = DeclarativeMappingSQL.plan(
                    mapping: mapping, request: FetchRequest(entityName: "Note"), mappingID: 1, keepsSourceKeys: true,
                    counting: [#"t."ZTITLE""#, #"t."ZKIND""#], source: sourceStore, destination: destination),
                let denseSQL = plan.insertRowsDense, let afterKey = plan.insertRowsAfterKey
            else {
                XCTFail("no plan without keys")
                return Copy(rows: [], lastKey: 0, bare: false, written: 0, counts: [])
            }
            XCTAssertTrue(denseSQL.contains("cdm_plain('ke=idsdbxnuscc', t.Z_PK, t.Z_ENT, 1, "), denseSQL)
            XCTAssertTrue(denseSQL.hasPrefix(#"INSERT INTO main."ZNOTE" (Z_ENT, Z_OPT, "#), denseSQL)
            XCTAssertTrue(afterKey.hasPrefix(#"INSERT INTO main."ZNOTE" (Z_PK, Z_ENT, Z_OPT, "#), afterKey)
            XCTAssertTrue(afterKey.hasSuffix(#" t WHERE t.Z_PK > ? ORDER BY t.Z_PK"#), afterKey)
            try destination.database.run("ATTACH DATABASE ? AS cdm_source", [.string(source)])
            let result = try plan.runInsertRows(
                on: destination.database, [], keys: 1...(Int64.max / 2), dense: useDense)
            let lastKey = destination.database.valueCounts.lastKey
            let counts = destination.database.valueCounts.counts
            try destination.database.exec("DETACH DATABASE cdm_source")
            try destination.save()
            return Copy(
                rows: try rows(path), lastKey: lastKey, bare: result.bare, written: result.rows,
                counts: result.bare ? counts : [])
        }
        var lastKeys: [Int64] = []
        for source in [dense, gap, late, shifted, bad, gapBad] {
            var withKeys = try copy(source, dense: false)
            let withoutKeys = try copy(source, dense: true)
            lastKeys.append(withoutKeys.lastKey)
            withKeys.lastKey = withoutKeys.lastKey
            XCTAssertEqual(withoutKeys, withKeys, source)
            XCTAssertEqual(withoutKeys.rows.count, 40, source)
            XCTAssertEqual(withoutKeys.written, 40, source)
        }
        // The keys SQLite gave are the source's: every one checked on the dense source, the
        // check stopping at the first key out of sequence on the others.
        // (The bad row's key passed before its value failed.)
        XCTAssertEqual(lastKeys, [40, 4, 38, 0, 31, 4])
        let gapCopy = try copy(gap, dense: true)
        XCTAssertEqual(gapCopy.rows.last?.hasPrefix("41 1 "), true)
        XCTAssertEqual(gapCopy.counts, [38, 40])
        XCTAssertEqual(try copy(late, dense: true).counts, [38, 40])
        XCTAssertEqual(try copy(dense, dense: true).counts, [35, 40])
        XCTAssertEqual(try copy(bad, dense: true).bare, false)
        XCTAssertEqual(try copy(gapBad, dense: true).bare, false)
        // The whole run: the per-instance path's rows, which number the instances 1…n in the
        // order of the source keys (with gaps, the keys alone differ).
        func values(_ rows: [String]) -> [String] { rows.map { String($0.drop { $0 != " " }) } }
        XCTAssertEqual(
            try run(model, dense, "sql", distinct: false), try run(model, dense, "per-instance", distinct: false))
        for source in [gap, late] {
            let bySQL = try run(model, source, "sql", distinct: false)
            XCTAssertEqual(values(bySQL), values(try run(model, source, "per-instance", distinct: false)), source)
            XCTAssertEqual(bySQL, try copy(source, dense: false).rows, source)
        }
    }

    /// `cdm_plain`'s entity and key codes, called directly.
    func testTheRowCheckTestsTheEntityAndTheKey() throws {
        let db = try SQLiteDatabase(path: scratch.file("codes.sqlite"), mode: .create)
        defer { db.close() }
        func check(_ sql: String) throws -> String {
            do { return String(try db.scalar("SELECT \(sql)")?.integer ?? -1) } catch let error as MigrationError {
                return error.message.contains(StoredValueRule.needsConversion)
                    ? "convert" : error.message.contains(StoredValueRule.keysNotDense) ? "keys" : error.message
            }
        }
        XCTAssertEqual(try check("cdm_plain('e==', 3, 2, 3)"), "1")
        XCTAssertEqual(try check("cdm_plain('e==', 4, 2, 3)"), "convert")
        XCTAssertEqual(try check("cdm_plain('e=', NULL, 2)"), "convert")
        XCTAssertEqual(try check("cdm_plain('e=', '2', 2)"), "convert")
        XCTAssertEqual(try check("cdm_plain('e', 2)"), "convert")
        XCTAssertEqual(try check("cdm_plain('=', 2)").contains("signature"), true)
        XCTAssertEqual(try check("cdm_plain('e=i', 2, 2)").contains("signature"), true)
        XCTAssertEqual(try check("cdm_plain('e=', 2, 2, 5)").contains("signature"), true)
        db.valueCounts.lastKey = 0
        XCTAssertEqual(try check("cdm_plain('k', 1)"), "1")
        XCTAssertEqual(try check("cdm_plain('k', 2)"), "1")
        XCTAssertEqual(try check("cdm_plain('k', 4)"), "keys")
        XCTAssertEqual(try check("cdm_plain('k', '3')"), "keys")
        XCTAssertEqual(db.valueCounts.lastKey, 2)
        XCTAssertEqual(try check("cdm_plain('ki', 3, 'x')"), "convert")
    }
}
