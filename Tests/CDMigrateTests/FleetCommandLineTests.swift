import Foundation
import ReferenceMigrations
import XCTest

@testable import CDMigrate

/// `cdmigrate migrate --jobs N STORE… --out-dir DIR`: many stores, each in a child process.
final class FleetCommandLineTests: XCTestCase {
    var scratch: ScratchDirectory!

    override func setUpWithError() throws {
        try CommandLineTool.requireBuilt()
        scratch = ScratchDirectory()
        try CommandLineTool.writePeopleSplit(into: scratch)
    }

    /// Runs the command; returns its exit status, standard output and standard error.
    func run(_ arguments: [String]) throws -> (status: Int32, out: String, err: String) {
        try CommandLineTool.run(arguments)
    }

    var models: [String] {
        [
            "--source-model", scratch.file("v1.json"), "--destination-model", scratch.file("v2.json"), "--mapping",
            scratch.file("map.json"),
        ]
    }
    var v1: ManagedObjectModel { get throws { try ManagedObjectModel(contentsOf: scratch.file("v1.json")) } }
    var v2: ManagedObjectModel { get throws { try ManagedObjectModel(contentsOf: scratch.file("v2.json")) } }

    /// A store of `swedes` Swedes and `finns` Finns.
    func makePeople(_ path: String, swedes: Int, finns: Int) throws {
        try makeStore(path, try v1) { store in
            for i in 0..<swedes {
                try insert(
                    store, "Person", ["name": .string("S\(i)"), "country": .string("Sweden"), "age": .integer(30)])
            }
            for i in 0..<finns {
                try insert(
                    store, "Person", ["name": .string("F\(i)"), "country": .string("Finland"), "age": .integer(40)])
            }
        }
    }

    func lines(_ text: String) throws -> [[String: Any]] {
        try text.split(separator: "\n").map {
            try XCTUnwrap(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any], String($0))
        }
    }

    func testGoodStoresMigrateAndACorruptOneIsReportedWithTheSourcesUntouched() throws {
        let folder = scratch.file("stores")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for i in 1...3 { try makePeople(folder + "/user\(i).sqlite", swedes: i, finns: 2 * i) }
        // A store whose schema (page 1) reads but whose other pages are garbage: a store that fails.
        try makePeople(scratch.file("corrupt.sqlite"), swedes: 1, finns: 1)
        var garbled = try Data(contentsOf: URL(fileURLWithPath: scratch.file("corrupt.sqlite")))
        for i in 4096..<garbled.count { garbled[i] = UInt8(truncatingIfNeeded: i &* 31 &+ 7) }
        try garbled.write(to: URL(fileURLWithPath: folder + "/corrupt.sqlite"))
        // Not a store: listed as skipped, never migrated or failed.
        try Data("not a store".utf8).write(to: URL(fileURLWithPath: folder + "/README.txt"))
        let names = try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
        let before = names.map { fileBytes(folder + "/" + $0) }

        let out = scratch.file("out")
        let result = try run(["migrate", "--jobs", "2", folder, "--out-dir", out, "--json"] + models)
        XCTAssertEqual(result.status, 1, result.out + result.err)
        let objects = try lines(result.out)
        XCTAssertEqual(objects.count, 6, result.out)
        let summary = try XCTUnwrap(objects.last?["summary"] as? [String: Any], result.out)
        XCTAssertEqual(summary["stores"] as? Int, 4)
        XCTAssertEqual(summary["notStores"] as? Int, 1)
        let readme = try XCTUnwrap(objects.first { ($0["store"] as? String)?.hasSuffix("README.txt") == true })
        XCTAssertEqual(readme["status"] as? String, "skipped")
        XCTAssertEqual(readme["notAStore"] as? Bool, true)
        XCTAssertEqual(readme["reason"] as? String, "not an SQLite database")
        XCTAssertEqual(summary["migrated"] as? Int, 3)
        XCTAssertEqual(summary["failed"] as? Int, 1)
        XCTAssertEqual(summary["jobs"] as? Int, 2)
        let byStore = Dictionary(
            uniqueKeysWithValues: objects.dropLast().filter { $0["notAStore"] == nil }.map {
                (URL(fileURLWithPath: $0["store"] as? String ?? "").lastPathComponent, $0)
            })
        XCTAssertEqual(Set(byStore.keys), ["user1.sqlite", "user2.sqlite", "user3.sqlite", "corrupt.sqlite"])
        for i in 1...3 {
            let line = try XCTUnwrap(byStore["user\(i).sqlite"])
            XCTAssertEqual(line["status"] as? String, "migrated", "\(line)")
            XCTAssertEqual(line["counts"] as? [String: Int], ["Swede": i, "Finn": 2 * i])
            XCTAssertEqual(line["destination"] as? String, out + "/user\(i).sqlite")
            XCTAssertNotNil(line["duration"] as? Double)
            let store = try PersistentStore.open(at: out + "/user\(i).sqlite", model: try v2)
            defer { store.close() }
            XCTAssertEqual(try fetchAll(store, "Finn").count, 2 * i)
        }
        let corrupt = try XCTUnwrap(byStore["corrupt.sqlite"])
        XCTAssertEqual(corrupt["status"] as? String, "failed")
        XCTAssertNotEqual(corrupt["exitStatus"] as? Int, 0)
        let error = try XCTUnwrap(corrupt["error"] as? [String: Any])
        XCTAssertNotNil(error["code"] as? Int, "\(error)")
        XCTAssertFalse((error["message"] as? String ?? "").isEmpty)
        // Nothing written for the corrupt store, nothing beside the sources, sources byte-identical.
        XCTAssertEqual(
            try FileManager.default.contentsOfDirectory(atPath: out).filter {
                !$0.hasSuffix("-wal") && !$0.hasSuffix("-shm")
            }.sorted(),
            ["user1.sqlite", "user2.sqlite", "user3.sqlite"])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder).sorted(), names)
        XCTAssertEqual(names.map { fileBytes(folder + "/" + $0) }, before)
    }

    func testListsOfStoresMigrateInPlaceWithOneLineEach() throws {
        var stores: [String] = []
        for i in 1...3 {
            let path = scratch.file("list\(i).sqlite")
            try makePeople(path, swedes: 1, finns: i)
            stores.append(path)
        }
        try "# two stores\n\(stores[0])\n\n\(stores[1])\n".write(
            toFile: scratch.file("list.txt"), atomically: true, encoding: .utf8)
        try "\(stores[2])\n".write(toFile: scratch.file("more.txt"), atomically: true, encoding: .utf8)
        // --dry-run checks each store and writes nothing.
        let before = stores.map(fileBytes)
        let dry = try run(
            [
                "migrate", "@" + scratch.file("list.txt"), "--from-file", scratch.file("more.txt"), "--in-place",
                "--dry-run", "--json",
            ] + models)
        XCTAssertEqual(dry.status, 0, dry.out + dry.err)
        XCTAssertEqual(
            try lines(dry.out).dropLast().map { $0["status"] as? String }, ["checked", "checked", "checked"], dry.out)
        XCTAssertEqual(stores.map(fileBytes), before)
        let result = try run(
            [
                "migrate", "@" + scratch.file("list.txt"), "--from-file", scratch.file("more.txt"), "--in-place",
                "--jobs", "3",
            ] + models)
        XCTAssertEqual(result.status, 0, result.out + result.err)
        let output = result.out.split(separator: "\n")
        XCTAssertEqual(output.filter { $0.hasPrefix("migrated ") }.count, 3, result.out)
        XCTAssertTrue(output.last?.hasPrefix("3 of 3 stores migrated, 0 failed") ?? false, result.out)
        for (i, path) in stores.enumerated() {
            let store = try PersistentStore.open(at: path, model: try v2)
            defer { store.close() }
            XCTAssertEqual(try fetchAll(store, "Finn").count, i + 1)
        }
    }

    func testAFleetThatCannotStartExitsBeforeTouchingAnyStore() throws {
        for folder in ["a", "b"] {
            try FileManager.default.createDirectory(atPath: scratch.file(folder), withIntermediateDirectories: true)
            try makePeople(scratch.file(folder + "/people.sqlite"), swedes: 1, finns: 1)
        }
        let out = scratch.file("out")
        // Two stores of one name would share a destination.
        let clash = try run(
            ["migrate", scratch.file("a/people.sqlite"), scratch.file("b/people.sqlite"), "--out-dir", out] + models)
        XCTAssertEqual(clash.status, 64, clash.err)
        XCTAssertTrue(clash.err.contains("would both be written"), clash.err)
        // A bad mapping fails once, as the one-store command does.
        try #"{"entityMappings": [{"name": "X", "sourceEntity": "Nobody"}]}"#.write(
            toFile: scratch.file("bad.json"), atomically: true, encoding: .utf8)
        let bad = try run([
            "migrate", scratch.file("a/people.sqlite"), "--jobs", "2", "--out-dir", out, "--json",
            "--source-model", scratch.file("v1.json"), "--destination-model", scratch.file("v2.json"), "--mapping",
            scratch.file("bad.json"),
        ])
        XCTAssertEqual(bad.status, 65, bad.out + bad.err)
        XCTAssertEqual(try lines(bad.out).count, 1, bad.out)
        // --to names one destination only.
        XCTAssertEqual(
            try run(
                ["migrate", scratch.file("a/people.sqlite"), scratch.file("b/people.sqlite"), "--to", out] + models
            ).status, 64)
        XCTAssertFalse(FileManager.default.fileExists(atPath: out))
    }

    func testStoresOfMixedVersionsEachRunTheirChainAndNameTheirVersion() throws {
        let folder = scratch.file("notes")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var expected: [String: (version: Int, notes: Int)] = [:]
        for (i, version) in [1, 2, 3, 1, 2].enumerated() {
            let name = "notes\(i).sqlite"
            let notes = try UnCloudNotes.generateSource(
                version: version, at: folder + "/" + name, count: 5 + i, seed: UInt64(i + 1))
            expected[name] = (version, notes.count)
        }
        let models = ReferenceMigrations.examplesDirectory + "/" + UnCloudNotes.directory
        let out = scratch.file("out")
        // v3 → v4 names a policy, which the command cannot register: stop at v3.
        let result = try run([
            "migrate", folder, "--out-dir", out, "--models", models, "--to-version", "UnCloudNotes_v3", "--json",
            "--jobs", "2",
        ])
        XCTAssertEqual(result.status, 0, result.out + result.err)
        let objects = try lines(result.out)
        XCTAssertEqual(objects.count, expected.count + 1, result.out)
        for object in objects.dropLast() {
            let name = URL(fileURLWithPath: object["store"] as? String ?? "").lastPathComponent
            let want = try XCTUnwrap(expected[name], name)
            XCTAssertEqual(object["status"] as? String, "migrated", "\(object)")
            XCTAssertEqual(object["version"] as? String, "UnCloudNotes_v\(want.version)")
            XCTAssertEqual(object["targetVersion"] as? String, "UnCloudNotes_v3")
            let notes = try StoreAccess.readStore(at: out + "/" + name, model: try UnCloudNotes.model(version: 3)) {
                try StoreAccess.all("Note", in: $0).count
            }
            XCTAssertEqual(notes, want.notes, name)
        }
    }
}
