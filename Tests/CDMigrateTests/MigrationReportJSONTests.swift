import Foundation
import XCTest

@testable import CDMigrate

/// One JSON form of a migration's report: the engine's encoder has the documented keys, counts an
/// entity's rows once, and is what `cdmigrate migrate --json` prints under "report".
final class MigrationReportJSONTests: XCTestCase {
    var scratch: ScratchDirectory!
    var source: String!

    override func setUpWithError() throws {
        try CommandLineTool.requireBuilt()
        scratch = ScratchDirectory()
        try CommandLineTool.writePeopleSplit(into: scratch)
        source = scratch.file("people.sqlite")
        try makeStore(source, try ManagedObjectModel(contentsOf: scratch.file("v1.json"))) { store in
            for (name, country) in [("Anna", "Sweden"), ("Matti", "Finland"), ("Olaf", "Norway")] {
                try insert(store, "Person", ["name": .string(name), "country": .string(country), "age": .integer(30)])
            }
        }
    }

    func object(_ text: String) throws -> [String: Any] {
        try XCTUnwrap(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], text)
    }

    func testAReportHasTheDocumentedKeysAndTheCommandLinePrintsTheSame() throws {
        let manager = try MigrationManager(
            sourceModel: try ManagedObjectModel(contentsOf: scratch.file("v1.json")),
            destinationModel: try ManagedObjectModel(contentsOf: scratch.file("v2.json")),
            mappingModel: try MappingModel(contentsOf: scratch.file("map.json")))
        let report = try manager.migrateStore(from: source, to: scratch.file("swift.sqlite"))
        let encoded = try object(report.json.serialized())
        XCTAssertEqual(
            Set(encoded.keys),
            [
                "mappings", "destinationCounts", "untakenSourceInstances", "warnings",
                "missingExternalDataFiles", "losses", "bySchemaChanges", "schemaChanges", "schemaChangesNotDone",
            ])
        let mappings = try XCTUnwrap(encoded["mappings"] as? [[String: Any]])
        XCTAssertEqual(
            Set(mappings.flatMap(\.keys)),
            [
                "pass", "entityMapping", "sourceInstances", "associations",
                "instancesBySQL", "relationshipsBySQL",
            ])
        XCTAssertEqual(encoded["untakenSourceInstances"] as? [String: Int], ["Person": 1], "Olaf of Norway")
        XCTAssertEqual(encoded["destinationCounts"] as? [String: Int], ["Swede": 1, "Finn": 1])

        let printed = try CommandLineTool.run([
            "migrate", source, "--to", scratch.file("cli.sqlite"), "--json",
            "--source-model", scratch.file("v1.json"), "--destination-model", scratch.file("v2.json"),
            "--mapping", scratch.file("map.json"),
        ])
        XCTAssertEqual(printed.status, 0, printed.err)
        XCTAssertFalse(printed.out.contains("\\/"), "paths print as they are: \(printed.out)")
        let cli = try XCTUnwrap(try object(printed.out)["report"] as? [String: Any])
        XCTAssertEqual(NSDictionary(dictionary: cli), NSDictionary(dictionary: encoded))
    }

    func testCountsOfOneEntityNamedTwiceAreSummed() throws {
        var report = MigrationReport()
        report.destinationCounts = [("Swede", 2), ("Finn", 1), ("Swede", 3)]
        let encoded = try object(report.json.serialized())
        XCTAssertEqual(encoded["destinationCounts"] as? [String: Int], ["Swede": 5, "Finn": 1])
    }
}
