import XCTest

@testable import CDMigrate

/// The order of a model's versions: natural order of the names, the current version last, and
/// the steps mapping models record.
final class ModelVersionOrderTests: XCTestCase {
    /// An `.xcdatamodeld` at `folder/name` holding `versions` (version → attribute names of entity
    /// `Item`), with `.xccurrentversion` naming `current` (nil: no file; "": an empty `<dict/>`).
    @discardableResult
    static func writeBundle(
        _ folder: String, _ name: String = "Model.xcdatamodeld", versions: [String: [String]], current: String?
    ) throws -> String {
        let bundle = folder + "/" + name
        for (version, attributes) in versions {
            let dir = bundle + "/" + version + ".xcdatamodel"
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            let properties = attributes.map {
                "        <attribute name=\"\($0)\" optional=\"YES\" attributeType=\"String\"/>"
            }.joined(separator: "\n")
            try """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
                <entity name="Item" representedClassName="Item">
            \(properties)
                </entity>
            </model>
            """.write(toFile: dir + "/contents", atomically: true, encoding: .utf8)
        }
        if let current {
            let dict =
                current.isEmpty
                ? "<dict/>"
                : "<dict>\n\t<key>_XCCurrentVersionName</key>\n\t<string>\(current).xcdatamodel</string>\n</dict>"
            try "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<plist version=\"1.0\">\n\(dict)\n</plist>\n"
                .write(toFile: bundle + "/.xccurrentversion", atomically: true, encoding: .utf8)
        }
        return bundle
    }

    func testNumberedVersionNamesSortAsNumbers() throws {
        let scratch = ScratchDirectory()
        let bundle = try Self.writeBundle(
            scratch.path, versions: ["Model_2": ["a"], "Model_9": ["a", "b"], "Model_10": ["a", "b", "c"]],
            current: "Model_10")
        let set = try ModelVersionSet(contentsOf: bundle)
        XCTAssertEqual(set.versionNames, ["Model_2", "Model_9", "Model_10"])
        XCTAssertEqual(set.warnings, [])
        let spaced = try Self.writeBundle(
            scratch.path, "Store.xcdatamodeld",
            versions: ["Store": ["a"], "Store 2": ["a", "b"], "Store 10": ["a", "b", "c"]], current: "Store 10")
        XCTAssertEqual(try ModelVersionSet(contentsOf: spaced).versionNames, ["Store", "Store 2", "Store 10"])
        XCTAssertEqual(try ModelSet(contentsOf: spaced).versionNames, ["Store", "Store 2", "Store 10"])
    }

    func testAPlanPassesOnlyThroughTheVersionsBetweenStoreAndTarget() throws {
        let scratch = ScratchDirectory()
        let bundle = try Self.writeBundle(
            scratch.path, "Engine.xcdatamodeld",
            versions: ["Engine-v1": ["a"], "Engine-v2": ["a", "b"], "Engine-v10": ["a", "b", "c"]],
            current: "Engine-v10")
        let set = try ModelSet(contentsOf: bundle)
        let plan = try MigrationPlan(
            storePath: "x.sqlite", storeVersion: "Engine-v1", models: set, targetVersion: "Engine-v2")
        XCTAssertEqual(
            plan.stages.map { "\($0.sourceVersionName)→\($0.destinationVersionName)" }, ["Engine-v1→Engine-v2"])
        let whole = try MigrationPlan(storePath: "x.sqlite", storeVersion: "Engine-v1", models: set)
        XCTAssertEqual(
            whole.stages.map { "\($0.sourceVersionName)→\($0.destinationVersionName)" },
            ["Engine-v1→Engine-v2", "Engine-v2→Engine-v10"])
    }

    func testTheCurrentVersionIsTheNewestEvenWhenItsNameSortsFirst() throws {
        let scratch = ScratchDirectory()
        let bundle = try Self.writeBundle(
            scratch.path, versions: ["Version1": ["a"], "Version2": ["a", "b"], "Current": ["a", "b", "c"]],
            current: "Current")
        let set = try ModelVersionSet(contentsOf: bundle)
        XCTAssertEqual(set.versionNames, ["Version1", "Version2", "Current"])
        XCTAssertEqual(set.currentVersionName, "Current")
        XCTAssertEqual(set.warnings.count, 1)
        XCTAssertTrue(
            set.warnings[0].contains("'Current' is taken as the newest, after 'Version1', 'Version2'"), set.warnings[0])
        let plan = try MigrationPlan(
            storePath: "x.sqlite", storeVersion: "Version2", models: try ModelSet(contentsOf: bundle))
        XCTAssertEqual(plan.stages.map { "\($0.sourceVersionName)→\($0.destinationVersionName)" }, ["Version2→Current"])
    }

    func testAnEmptyCurrentVersionFileReadsAsNoFile() throws {
        let scratch = ScratchDirectory()
        let bundle = try Self.writeBundle(
            scratch.path, versions: ["v1": ["a"], "v2": ["a", "b"], "v10": ["a", "b", "c"]], current: "")
        let set = try ModelVersionSet(contentsOf: bundle)
        XCTAssertEqual(set.versionNames, ["v1", "v2", "v10"])
        XCTAssertEqual(set.currentVersionName, "v10")
        XCTAssertEqual(set.warnings.count, 1)
        XCTAssertTrue(set.warnings[0].contains("names none") && set.warnings[0].contains("'v10'"), set.warnings[0])
        XCTAssertEqual(try ManagedObjectModel(contentsOf: bundle).entity(named: "Item")?.attributes.count, 3)
    }

    func testAnUnreadableVersionIsSkippedWithAWarning() throws {
        let scratch = ScratchDirectory()
        let bundle = try Self.writeBundle(
            scratch.path, versions: ["v1": ["a"], "v2": ["a", "b"], "v3": ["a", "b", "c"]], current: "v3")
        try "<model><entity/></model>".write(
            toFile: bundle + "/v1.xcdatamodel/contents", atomically: true, encoding: .utf8)
        let set = try ModelVersionSet(contentsOf: bundle)
        XCTAssertEqual(set.versionNames, ["v2", "v3"])
        XCTAssertEqual(set.warnings.count, 1)
        XCTAssertTrue(
            set.warnings[0].contains("version 'v1' is skipped") && set.warnings[0].contains("v1.xcdatamodel/contents"),
            set.warnings[0])
        // The current version must be readable.
        try "<model><entity/></model>".write(
            toFile: bundle + "/v3.xcdatamodel/contents", atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try ModelVersionSet(contentsOf: bundle)) {
            XCTAssertTrue("\($0)".contains("v3.xcdatamodel/contents"), "\($0)")
        }
    }
}
