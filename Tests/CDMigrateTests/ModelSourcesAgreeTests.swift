import XCTest

@testable import CDMigrate

/// One model, every way in: Xcode's source, Xcode's compiled output and a store's own cache give
/// the same model with the same Apple hashes.
final class ModelSourcesAgreeTests: XCTestCase {
    func testCompiledXcodeServerModelsHashAsXcodesCompilerRecorded() throws {
        for version in ["1_0_0", "1_1_0", "2_0_0"] {
            let folder = TestPaths.fixtures + "/xcode/XcodeServer/\(version)"
            let compiled = try CompiledModelBundle(contentsOf: folder + "/XcodeServer.momd_precompiled")
            let recorded = try XCTUnwrap(compiled.versionHashes.values.first)
            XCTAssertEqual(recorded.count, 23)
            XCTAssertEqual(
                compiled.currentModel.entityVersionHashes, recorded, "\(version): the .mom's computed hashes")
            let source = try ManagedObjectModel(contentsOf: folder + "/XcodeServer.xcdatamodeld")
            XCTAssertEqual(
                source.entityVersionHashes, compiled.currentModel.entityVersionHashes,
                "\(version): source and compiled agree")
            XCTAssertEqual(source.versionHashesDigestBase64, compiled.currentModel.versionHashesDigestBase64)
        }
    }

    func testTheRenamesStoresCachedModelsHashAsTheStoresRecord() throws {
        let scratch = ScratchDirectory()
        for version in ["v1.0.0", "v1.1.0", "v1.1.2", "v1.2.0", "v2.0.0"] {
            let copy = try copyFixtureStore("apple-stores/renames/Example_\(version).sqlite", into: scratch.path)
            let cached = try XCTUnwrap(try StoreModelCache.model(fromStoreAt: copy))
            let metadata = try StoreInfo.read(at: copy).metadata
            XCTAssertTrue(
                cached.isCompatible(withStoreMetadata: metadata),
                "\(version): \(cached.versionDifferences(fromStoreMetadata: metadata))")
        }
    }
}
