import Foundation
import XCTest

@testable import CDMigrate

/// The `cdmigrate` command, run as a process: its output, its JSON and its exit codes.
final class CommandLineTests: XCTestCase {
    var scratch: ScratchDirectory!
    var source: String!

    override func setUpWithError() throws {
        try CommandLineTool.requireBuilt()
        scratch = ScratchDirectory()
        try CommandLineTool.writePeopleSplit(into: scratch)
        source = scratch.file("people.sqlite")
        try makeStore(source, try ManagedObjectModel(contentsOf: scratch.file("v1.json"))) { store in
            for (name, country) in [("Anna", "Sweden"), ("Matti", "Finland"), ("Ebba", "Sweden")] {
                try insert(store, "Person", ["name": .string(name), "country": .string(country), "age": .integer(30)])
            }
        }
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

    func json(_ text: String) throws -> [String: Any] {
        try XCTUnwrap(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], text)
    }

    func testMigrateWritesTheStoreAndReportsAsJSON() throws {
        let destination = scratch.file("out.sqlite")
        let result = try run(["migrate", source, "--to", destination, "--json"] + models)
        XCTAssertEqual(result.status, 0, result.err)
        let report = try json(result.out)
        XCTAssertEqual(report["ok"] as? Bool, true)
        let counts = (report["report"] as? [String: Any])?["destinationCounts"] as? [String: Int]
        XCTAssertEqual(counts, ["Swede": 2, "Finn": 1])
        let store = try PersistentStore.open(
            at: destination, model: try ManagedObjectModel(contentsOf: scratch.file("v2.json")))
        defer { store.close() }
        XCTAssertEqual(try fetchAll(store, "Swede").count, 2)
    }

    func testMigrateInPlaceAndPlainOutput() throws {
        let result = try run(["migrate", source, "--in-place"] + models)
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertTrue(result.out.contains("Swede: 2"), result.out)
        XCTAssertNoThrow(
            try PersistentStore.open(at: source, model: try ManagedObjectModel(contentsOf: scratch.file("v2.json")))
                .close())
    }

    func testDryRunWritesNothing() throws {
        let destination = scratch.file("out.sqlite")
        let result = try run(["migrate", source, "--to", destination, "--dry-run"] + models)
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertTrue(result.out.contains("Person: 3"), result.out)
        XCTAssertFalse(FileManager.default.fileExists(atPath: destination))
    }

    func testExitCodesSayWhatWentWrong() throws {
        // Usage: neither --to nor --in-place.
        XCTAssertEqual(try run(["migrate", source] + models).status, 64)
        // An existing destination is never overwritten.
        try Data().write(to: URL(fileURLWithPath: scratch.file("taken.sqlite")))
        let taken = try run(["migrate", source, "--to", scratch.file("taken.sqlite"), "--json"] + models)
        XCTAssertEqual(taken.status, 74, taken.out)
        XCTAssertEqual((try json(taken.out)["error"] as? [String: Any])?["code"] as? Int, 134160)
        // A store at another version: the models swapped.
        let swapped = try run([
            "migrate", source, "--to", scratch.file("x.sqlite"), "--source-model", scratch.file("v2.json"),
            "--destination-model", scratch.file("v1.json"), "--mapping", scratch.file("map.json"),
        ])
        XCTAssertEqual(swapped.status, 65, "the mapping does not fit the swapped models: \(swapped.err)")
        // A broken mapping names its file.
        try #"{"entityMappings": [{"name": "X", "sourceEntity": "Nobody"}]}"#.write(
            toFile: scratch.file("bad.json"), atomically: true, encoding: .utf8)
        let bad = try run([
            "validate", "--source-model", scratch.file("v1.json"), "--destination-model", scratch.file("v2.json"),
            "--mapping", scratch.file("bad.json"),
        ])
        XCTAssertEqual(bad.status, 65)
        XCTAssertTrue(bad.err.contains("Nobody"), bad.err)
        XCTAssertFalse(FileManager.default.fileExists(atPath: scratch.file("x.sqlite")))
    }

    func testAStoreAtAnotherVersionExitsWith66() throws {
        let other = scratch.file("other.sqlite")
        try makeStore(other, try ManagedObjectModel(contentsOf: scratch.file("v2.json"))) { _ in }
        let result = try run(["migrate", other, "--to", scratch.file("x.sqlite")] + models)
        XCTAssertEqual(result.status, 66, result.err)
    }

    func testValidateReportsOK() throws {
        let result = try run(["validate", "--json"] + models)
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertEqual(try json(result.out)["entityMappings"] as? Int, 2)
    }

    func testInspectShowsEntitiesRowsAndVersion() throws {
        let result = try run(["inspect", source, "--json", "--model", scratch.file("v2.json")])
        XCTAssertEqual(result.status, 0, result.err)
        let document = try json(result.out)
        let entities = try XCTUnwrap(document["entities"] as? [[String: Any]])
        XCTAssertEqual(entities.first?["name"] as? String, "Person")
        XCTAssertEqual(entities.first?["rows"] as? Int, 3)
        XCTAssertEqual(document["compatible"] as? Bool, false)
        XCTAssertEqual(
            try json(try run(["inspect", source, "--json", "--model", scratch.file("v1.json")]).out)["compatible"]
                as? Bool, true)
        XCTAssertEqual(try run(["inspect", scratch.file("missing.sqlite")]).status, 74)
        // Which version of a set wrote the store.
        let versions = scratch.file("versions")
        try FileManager.default.createDirectory(atPath: versions, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: scratch.file("v1.json"), toPath: versions + "/v1.model.json")
        try FileManager.default.copyItem(atPath: scratch.file("v2.json"), toPath: versions + "/v2.model.json")
        let named = try json(try run(["inspect", source, "--json", "--models", versions]).out)
        XCTAssertEqual(named["version"] as? String, "v1")
        XCTAssertEqual(named["currentVersion"] as? String, "v2")
    }
}
