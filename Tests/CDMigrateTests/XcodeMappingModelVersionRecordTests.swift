import XCTest
@testable import CDMigrate

/// What an Xcode `.xcmappingmodel` records about the models it maps: version names in its model
/// paths, and no entity version hashes (Xcode computes those only when compiling the `.cdm`), so
/// a model set matches it to a step by the versions it names.
final class XcodeMappingModelVersionRecordTests: XCTestCase {
    static let mappingModels = [
        "/xcode/UnCloudNotes/UnCloudNotesMappingModel_v2_to_v3.xcmappingmodel",
        "/xcode/UnCloudNotes/UnCloudNotesMappingModel_v3_to_v4.xcmappingmodel",
        "/xcode/XcodeServer/1_1_0/MappingModel.xcmappingmodel",
        "/xcode/XcodeServer/2_0_0/MappingModel.xcmappingmodel",
    ]

    func testEntityMappingsOfXcodeMappingModelsRecordNoVersionHashes() throws {
        for fixture in Self.mappingModels {
            let path = TestPaths.fixtures + fixture
            let document = try XcodeStoreDocument.read(file: XcodeMappingModelReader.documentPath(path), code: .invalidMapping)
            let entityMappings = document.objects.filter { $0.type == "XDDEVENTITYMAPPING" }
            XCTAssertFalse(entityMappings.isEmpty, fixture)
            for object in document.objects {
                let hashLike = object.attributeOrder.filter { $0.lowercased().contains("hash") }
                XCTAssertEqual(hashLike, [], "\(fixture): \(object.label)")
            }
            // The mapping model object names its models by path (and keeps archives of Xcode's editor model).
            let root = try XCTUnwrap(document.objects.first { $0.type == XcodeMappingModelReader.mappingModelType }, fixture)
            XCTAssertNotNil(root.string("sourcemodelpath"), fixture)
            XCTAssertNotNil(root.string("destinationmodelpath"), fixture)
            var warnings: [String] = []
            let file = try XCTUnwrap(MappingModelFile.read(path: path, kind: .xcode, warnings: &warnings), fixture)
            XCTAssertTrue(file.sourceHashes.isEmpty && file.destinationHashes.isEmpty, fixture)
            XCTAssertNotNil(file.sourceVersionName, fixture)
            XCTAssertNotNil(file.destinationVersionName, fixture)
        }
    }

    func testAnXcodeMappingModelIsMatchedToTheStepItsModelPathsName() throws {
        let set = try ModelSet(contentsOf: TestPaths.fixtures + "/xcode/UnCloudNotes/UnCloudNotesDataModel.xcdatamodeld")
        let steps = set.mappingModels.map { ModelSetJSON.step(of: $0, in: set)?.description }
        XCTAssertEqual(steps, ["UnCloudNotesDataModel_v2 → UnCloudNotesDataModel_v3", "UnCloudNotesDataModel_v3 → UnCloudNotesDataModel_v4"])
    }
}
