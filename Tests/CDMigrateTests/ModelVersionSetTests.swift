import XCTest

@testable import CDMigrate

/// A model's versions, and which one a store was written with.
final class ModelVersionSetTests: XCTestCase {
    func testNamesTheVersionEachRealStoreWasWrittenWith() throws {
        let set = try ModelVersionSet(contentsOf: TestPaths.fixtures + "/apple-stores/renames/Model.xcdatamodeld")
        XCTAssertEqual(set.versionNames, ["v1.0.0", "v1.1.0", "v1.1.2", "v1.2.0", "v2.0.0"])
        for version in set.versionNames {
            let (uuid, plist) = try PlistFixtures.metadata(of: "Example_" + version)
            let metadata = try StoreMetadata(storeUUID: uuid, plist: plist)
            XCTAssertEqual(set.versionName(forStoreMetadata: metadata), version)
            XCTAssertTrue(try XCTUnwrap(set.models[version]).isCompatible(withStoreMetadata: metadata))
            let others = set.versionNames.filter { $0 != version }.compactMap { set.models[$0] }
            XCTAssertFalse(others.contains { $0.isCompatible(withStoreMetadata: metadata) })
        }
    }

    func testAFolderOfJSONModelsSkipsMappingsAndOrdersVersionsNaturally() throws {
        let set = try ModelVersionSet(contentsOf: TestPaths.repository + "/examples/4-uncloudnotes")
        XCTAssertEqual(set.versionNames, ["UnCloudNotes_v1", "UnCloudNotes_v2", "UnCloudNotes_v3", "UnCloudNotes_v4"])
        XCTAssertEqual(set.currentVersionName, "UnCloudNotes_v4")
        XCTAssertEqual(set.warnings.count, 1, "no current-version file: said so")
        let scratch = ScratchDirectory()
        let store = scratch.file("v2.sqlite")
        try makeStore(store, try XCTUnwrap(set.models["UnCloudNotes_v2"])) { _ in }
        XCTAssertEqual(set.versionName(forStoreMetadata: try StoreInfo.read(at: store).metadata), "UnCloudNotes_v2")
    }

    func testACurrentVersionFileNamesTheCurrentVersion() throws {
        let scratch = ScratchDirectory()
        for version in ["v2", "v10"] {
            try
                #"{"name": "M", "entities": [{"name": "E\#(version)", "attributes": [{"name": "a", "type": "string"}]}]}"#
                .write(toFile: scratch.file("\(version).model.json"), atomically: true, encoding: .utf8)
        }
        XCTAssertEqual(try ModelVersionSet(contentsOf: scratch.path).versionNames, ["v2", "v10"])
        XCTAssertEqual(try ModelVersionSet(contentsOf: scratch.path).currentVersionName, "v10")
        try "v2\n".write(toFile: scratch.file("current-version"), atomically: true, encoding: .utf8)
        XCTAssertEqual(try ModelVersionSet(contentsOf: scratch.path).currentVersionName, "v2")
        try "v3".write(toFile: scratch.file("current-version"), atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try ModelVersionSet(contentsOf: scratch.path)) {
            XCTAssertEqual(($0 as? MigrationError)?.code, .invalidModel)
        }
    }

    func testNaturalVersionOrder() {
        XCTAssertEqual(
            ["v10", "v2", "v1.10", "v1.9", "a"].sorted(by: ModelVersionSet.versionOrder),
            ["a", "v1.9", "v1.10", "v2", "v10"])
    }

    func testAStoreWithoutVersionMetadataMatchesNoModel() throws {
        let empty = try StoreMetadata(storeUUID: "X", plist: [])
        let set = try ModelVersionSet(contentsOf: TestPaths.fixtures + "/apple-stores/renames/Model.xcdatamodeld")
        XCTAssertNil(set.versionName(forStoreMetadata: empty))
    }
}
