import Foundation
import XCTest

@testable import CDMigrate

/// `cdmigrate check FOLDER` and `cdmigrate migrate FOLDER --out-dir DIR`, run as a process, over
/// one folder holding a store with its -wal and -shm, a store whose name has XML's special
/// characters and non-ASCII letters, an SQLite database that is not a Core Data store, a text
/// file, symbolic links and a nested folder: both take the same stores and skip the same files
/// with the same reasons; `check --to-version`; `--junit FILE` parsed back with libxml2.
final class StoreFolderCommandLineTests: XCTestCase {
    var scratch: ScratchDirectory!
    var folder: String!
    var models: String!
    static let oddName = #"a&<>"'é ü.sqlite"#

    override func setUpWithError() throws {
        try CommandLineTool.requireBuilt()
        scratch = ScratchDirectory()
        folder = scratch.file("stores")
        models = scratch.file("models")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: models, withIntermediateDirectories: true)
        try #"{"entities": [{"name": "Person", "attributes": [{"name": "name", "type": "string", "optional": true}]}]}"#
            .write(toFile: models + "/v1.json", atomically: true, encoding: .utf8)
        try """
        {"entities": [{"name": "Person", "attributes": [{"name": "name", "type": "string", "optional": true},
          {"name": "age", "type": "integer32", "optional": true}]}]}
        """.write(toFile: models + "/v2.json", atomically: true, encoding: .utf8)
        try "v2\n".write(toFile: models + "/current-version", atomically: true, encoding: .utf8)
        let v1 = try ManagedObjectModel(contentsOf: models + "/v1.json")
        // A store in WAL mode with its companions (copied while open, so the -wal holds rows).
        let live = scratch.file("live.sqlite")
        try makeStore(live, v1) { store in try insert(store, "Person", ["name": .string("Ann")]) }
        let database = try SQLiteDatabase(path: live, mode: .readWrite)
        try database.exec("PRAGMA journal_mode=WAL")
        try database.exec("PRAGMA wal_autocheckpoint=0")
        try database.exec("UPDATE Z_PRIMARYKEY SET Z_MAX = Z_MAX")
        for suffix in ["", "-wal", "-shm"] {
            try FileManager.default.copyItem(atPath: live + suffix, toPath: folder + "/people" + suffix)
        }
        database.close()
        try makeStore(folder + "/" + Self.oddName, v1) { store in try insert(store, "Person", ["name": .string("Bo")]) }
        let other = try SQLiteDatabase(path: folder + "/other.sqlite", mode: .create)
        try other.exec("CREATE TABLE t (x); INSERT INTO t VALUES (1)")
        other.close()
        try "notes\n".write(toFile: folder + "/notes.txt", atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: folder + "/link.sqlite", withDestinationPath: "people")
        try makeStore(scratch.file("elsewhere.sqlite"), v1) { _ in }
        try FileManager.default.createSymbolicLink(
            atPath: folder + "/outside.sqlite", withDestinationPath: scratch.file("elsewhere.sqlite"))
        try FileManager.default.createDirectory(atPath: folder + "/nested", withIntermediateDirectories: true)
        try makeStore(folder + "/nested/inner.sqlite", v1) { _ in }
    }

    static let skippedNames = ["link.sqlite", "nested", "notes.txt", "other.sqlite", "outside.sqlite"]

    func run(_ arguments: [String]) throws -> (status: Int32, out: String, err: String) {
        try CommandLineTool.run(arguments)
    }

    func json(_ text: String) throws -> [String: Any] {
        try XCTUnwrap(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], text)
    }

    /// The `<testcase>`s of a JUnit file, read with libxml2, by name.
    func junitCases(_ path: String) throws -> (suite: CDMigrate.XMLElement, cases: [String: CDMigrate.XMLElement]) {
        let root = try CDMigrate.XMLElement.parse(file: path)
        XCTAssertEqual(root.name, "testsuites")
        XCTAssertEqual(root.children(named: "testsuite").count, 1)
        let suite = try XCTUnwrap(root.child(named: "testsuite"))
        let cases = suite.children(named: "testcase")
        return (suite, Dictionary(uniqueKeysWithValues: cases.map { ($0["name"] ?? "", $0) }))
    }

    func testCheckAndFolderMigrateTakeTheSameStoresAndSkipTheRest() throws {
        let check = try run(["check", folder, "--models", models, "--json"])
        XCTAssertEqual(check.status, 0, check.out + check.err)
        let document = try json(check.out)
        let checked = (document["stores"] as? [[String: Any]] ?? []).compactMap { $0["store"] as? String }
        XCTAssertEqual(checked, [folder + "/" + Self.oddName, folder + "/people"])
        let skipped = document["skipped"] as? [[String: String]] ?? []
        XCTAssertEqual(skipped.compactMap { $0["store"] }, Self.skippedNames.map { folder + "/" + $0 })

        let out = scratch.file("out")
        let migrate = try run(["migrate", folder, "--out-dir", out, "--models", models, "--json", "--jobs", "2"])
        XCTAssertEqual(migrate.status, 0, migrate.out + migrate.err)
        let lines = try migrate.out.split(separator: "\n").map { try json(String($0)) }
        let migrated = lines.filter { $0["status"] as? String == "migrated" }.compactMap { $0["store"] as? String }
        XCTAssertEqual(Set(migrated), Set(checked))
        let notStores = lines.filter { $0["notAStore"] as? Bool == true }
        XCTAssertEqual(notStores.compactMap { $0["store"] as? String }, skipped.compactMap { $0["store"] })
        XCTAssertEqual(notStores.compactMap { $0["reason"] as? String }, skipped.compactMap { $0["reason"] })
        let summary = try XCTUnwrap(lines.last?["summary"] as? [String: Any])
        XCTAssertEqual(summary["stores"] as? Int, 2)
        XCTAssertEqual(summary["failed"] as? Int, 0)
        XCTAssertEqual(summary["notStores"] as? Int, 5)
        // Only the stores were written; the rows of the -wal reached the migrated store.
        XCTAssertEqual(
            try FileManager.default.contentsOfDirectory(atPath: out).filter { !$0.contains("-") }.sorted(),
            [Self.oddName, "people"].sorted())
        let v2 = try ManagedObjectModel(contentsOf: models + "/v2.json")
        let people = try PersistentStore.open(at: out + "/people", model: v2, readOnly: true)
        XCTAssertEqual(try people.count(FetchRequest(entityName: "Person")), 1)
        people.close()

        // The text says what each skipped file is.
        let text = try run(["check", folder, "--models", models])
        XCTAssertEqual(text.status, 0, text.err)
        XCTAssertTrue(text.out.hasPrefix("target version v2 (current)\n"), text.out)
        XCTAssertTrue(text.out.contains("skip  notes.txt: not an SQLite database"), text.out)
        XCTAssertTrue(text.out.contains("skip  nested: a folder (folders inside are not searched)"), text.out)
        XCTAssertTrue(text.out.contains("skip  outside.sqlite: a symbolic link to '"), text.out)
        XCTAssertTrue(text.out.contains("2 of 2 stores reach version v2; 5 files skipped (not stores)"), text.out)
    }

    func testCheckToVersionNamesTheTargetAndRefusesAnUnknownOne() throws {
        let text = try run(["check", folder, "--models", models, "--to-version", "v1"])
        XCTAssertEqual(text.status, 0, text.out + text.err)
        XCTAssertTrue(text.out.hasPrefix("target version v1 (current: v2)\n"), text.out)
        XCTAssertTrue(text.out.contains("ok    people: v1, already at the target; Person 1"), text.out)
        XCTAssertTrue(text.out.contains("2 of 2 stores reach version v1"), text.out)
        let document = try json(try run(["check", folder, "--models", models, "--to-version", "v1", "--json"]).out)
        XCTAssertEqual(document["targetVersion"] as? String, "v1")
        XCTAssertEqual(document["currentVersion"] as? String, "v2")
        let current = try json(try run(["check", folder, "--models", models, "--json"]).out)
        XCTAssertEqual(current["targetVersion"] as? String, "v2")
        let steps = (current["stores"] as? [[String: Any]])?.first?["steps"] as? [[String: Any]]
        XCTAssertEqual(steps?.map { $0["to"] as? String }, ["v2"])

        let unknown = try run(["check", folder, "--models", models, "--to-version", "v9"])
        XCTAssertEqual(unknown.status, 65, unknown.err)
        XCTAssertTrue(unknown.err.contains("has no version 'v9' (it holds v1, v2)"), unknown.err)
    }

    func testCheckWritesJUnitWithAFailureAndSkippedFilesEscaped() throws {
        // A store of another model: it fails (134130, exit 66) and the others still pass.
        try makeStore(
            folder + "/stranger.sqlite",
            try ManagedObjectModel(
                json: #"{"entities": [{"name": "Other", "attributes": [{"name": "x", "type": "string"}]}]}"#)
        ) { _ in }
        // A name with a control character, which XML 1.0 cannot hold: written as U+FFFD.
        try "x".write(toFile: folder + "/bell\u{7}.txt", atomically: true, encoding: .utf8)
        let report = scratch.file("reports/check.xml")
        try FileManager.default.createDirectory(atPath: scratch.file("reports"), withIntermediateDirectories: true)
        try "old report".write(toFile: report, atomically: true, encoding: .utf8)
        let result = try run(["check", folder, "--models", models, "--junit", report])
        XCTAssertEqual(result.status, 66, result.out + result.err)
        let (suite, cases) = try junitCases(report)
        XCTAssertEqual(suite["tests"], "9")
        XCTAssertEqual(suite["failures"], "1")
        XCTAssertEqual(suite["skipped"], "6")
        XCTAssertEqual(cases["bell\u{FFFD}.txt"]?.child(named: "skipped")?["message"], "not an SQLite database")
        XCTAssertNotNil(suite["timestamp"])
        let properties = suite.child(named: "properties")?.children(named: "property") ?? []
        XCTAssertEqual(properties.first { $0["name"] == "targetVersion" }?["value"], "v2")
        // The odd name comes back exactly: escaped on the way in, read back by libxml2.
        let odd = try XCTUnwrap(cases[Self.oddName], "\(cases.keys)")
        XCTAssertEqual(odd["file"], folder + "/" + Self.oddName)
        XCTAssertNil(odd.child(named: "failure"))
        XCTAssertTrue(odd.child(named: "system-out")?.text.contains("ok    \(Self.oddName): v1: v1 → v2") == true)
        XCTAssertNotNil(Double(odd["time"] ?? ""))
        let failure = try XCTUnwrap(cases["stranger.sqlite"]?.child(named: "failure"))
        XCTAssertTrue(failure["message"]?.hasPrefix("error 134130: ") == true, "\(failure.attributes)")
        XCTAssertFalse(failure.text.isEmpty)
        for name in Self.skippedNames {
            XCTAssertNotNil(cases[name]?.child(named: "skipped"), name)
        }
        XCTAssertEqual(cases["notes.txt"]?.child(named: "skipped")?["message"], "not an SQLite database")
        // Written atomically: the old report replaced, no temporary file left beside it.
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: scratch.file("reports")), ["check.xml"])
    }

    func testFolderMigrateWritesJUnitAndAFolderWithoutStoresExitsWith66() throws {
        let report = scratch.file("migrate.xml")
        let out = scratch.file("out")
        let result = try run(["migrate", folder, "--out-dir", out, "--models", models, "--junit", report])
        XCTAssertEqual(result.status, 0, result.out + result.err)
        XCTAssertTrue(result.out.contains("2 of 2 stores migrated, 0 failed, 0 crashed, 0 skipped, 5 not stores"))
        let (suite, cases) = try junitCases(report)
        XCTAssertEqual(suite["tests"], "7")
        XCTAssertEqual(suite["failures"], "0")
        XCTAssertEqual(suite["skipped"], "5")
        XCTAssertNotNil(cases[folder + "/" + Self.oddName])
        XCTAssertNotNil(cases[folder + "/other.sqlite"]?.child(named: "skipped"))

        // No store at all: every file skipped (or an empty folder) exits with 66, in both commands.
        let none = scratch.file("none")
        try FileManager.default.createDirectory(atPath: none, withIntermediateDirectories: true)
        for command in [["check", none], ["migrate", none, "--out-dir", scratch.file("out2")]] {
            let empty = try run(command + ["--models", models])
            XCTAssertEqual(empty.status, 66, empty.err)
            XCTAssertTrue(empty.err.contains("no Core Data store in '\(none)': the folder is empty"), empty.err)
        }
        try "notes\n".write(toFile: none + "/notes.sqlite", atomically: true, encoding: .utf8)
        let noneReport = scratch.file("none.xml")
        for command in [["check", none], ["migrate", none, "--out-dir", scratch.file("out3")]] {
            let skipped = try run(command + ["--models", models, "--junit", noneReport])
            XCTAssertEqual(skipped.status, 66, skipped.err)
            XCTAssertTrue(skipped.err.contains("1 file skipped, none a Core Data store"), skipped.err)
            XCTAssertTrue(skipped.out.contains("notes.sqlite: not an SQLite database"), skipped.out)
            let (suite, _) = try junitCases(noneReport)
            XCTAssertEqual(suite["skipped"], "1")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: scratch.file("out3/notes.sqlite")))
        // A report that could not be written is refused before anything runs.
        let refused = try run(["check", folder, "--models", models, "--junit", scratch.file("missing/r.xml")])
        XCTAssertEqual(refused.status, 74, refused.err)
        XCTAssertTrue(refused.err.contains("cannot write the JUnit report"), refused.err)
    }
}
