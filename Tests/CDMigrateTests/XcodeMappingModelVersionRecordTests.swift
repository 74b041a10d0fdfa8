import Foundation
import XCTest

@testable import CDMigrate

/// What an Xcode `.xcmappingmodel` records about the models it maps: version names in its model
/// paths and the models themselves (Xcode's editor archives), but no entity version hashes
/// (Xcode computes those only when compiling the `.cdm`): a model set matches it to a step by the
/// entity hashes of the embedded models, and by the versions it names where those match none.
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
            let document = try XcodeStoreDocument.read(
                file: XcodeMappingModelReader.documentPath(path), code: .invalidMapping)
            let entityMappings = document.objects.filter { $0.type == "XDDEVENTITYMAPPING" }
            XCTAssertFalse(entityMappings.isEmpty, fixture)
            for object in document.objects {
                let hashLike = object.attributeOrder.filter { $0.lowercased().contains("hash") }
                XCTAssertEqual(hashLike, [], "\(fixture): \(object.label)")
            }
            // The mapping model object names its models by path (and keeps archives of Xcode's editor model).
            let root = try XCTUnwrap(
                document.objects.first { $0.type == XcodeMappingModelReader.mappingModelType }, fixture)
            XCTAssertNotNil(root.string("sourcemodelpath"), fixture)
            XCTAssertNotNil(root.string("destinationmodelpath"), fixture)
            var warnings: [String] = []
            let file = try XCTUnwrap(MappingModelFile.read(path: path, kind: .xcode, warnings: &warnings), fixture)
            XCTAssertEqual(warnings, [], fixture)
            XCTAssertTrue(file.hashesAreWhole, fixture)
            let sourceName = try XCTUnwrap(file.sourceVersionName, fixture)
            let destinationName = try XCTUnwrap(file.destinationVersionName, fixture)
            // The embedded models' hashes are those of the versions the paths name.
            let folder = FileIO.directory(of: path)
            let bundle = try XCTUnwrap(
                try FileManager.default.contentsOfDirectory(atPath: folder).first { $0.hasSuffix(".xcdatamodeld") },
                fixture)
            let versions = try ModelVersionSet(contentsOf: folder + "/" + bundle)
            // (XcodeServer's versions are all named "XcodeServer", each in its own folder with the
            // mapping model that leads to it: there only the destination is the bundle's.)
            for (hashes, name) in [(file.sourceHashes, sourceName), (file.destinationHashes, destinationName)] {
                guard let model = versions.models[name], !(hashes == file.sourceHashes && sourceName == destinationName)
                else { continue }
                XCTAssertEqual(hashes.count, model.entities.count, "\(fixture) \(name)")
                for entity in model.entities {
                    XCTAssertEqual(hashes[entity.name], entity.versionHash, "\(fixture) \(name) \(entity.name)")
                }
            }
        }
    }

    func testAnXcodeMappingModelIsMatchedToTheStepItsModelPathsName() throws {
        let set = try ModelSet(
            contentsOf: TestPaths.fixtures + "/xcode/UnCloudNotes/UnCloudNotesDataModel.xcdatamodeld")
        let steps = set.mappingModels.map { ModelSetJSON.step(of: $0, in: set)?.description }
        XCTAssertEqual(
            steps,
            [
                "UnCloudNotesDataModel_v2 → UnCloudNotesDataModel_v3",
                "UnCloudNotesDataModel_v3 → UnCloudNotesDataModel_v4",
            ])
    }
}
