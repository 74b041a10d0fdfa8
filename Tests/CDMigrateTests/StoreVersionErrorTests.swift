import Foundation
import ReferenceMigrations
import XCTest

@testable import CDMigrate

/// A source store at another version than the source model (134130): the message names each
/// differing entity with the store's and the model's hash in hexadecimal, and, given the model's
/// versions, the version the store does match.
final class StoreVersionErrorTests: XCTestCase {
    var directory = ""
    override func setUpWithError() throws { directory = try TemporaryDirectory.make(prefix: "cdmigrate-store-version") }
    override func tearDown() { TemporaryDirectory.remove(directory) }

    func model(_ version: String) throws -> ManagedObjectModel {
        try ManagedObjectModel(contentsOf: TestPaths.fixtures + "/json-models/renames-v\(version).json")
    }

    func base64(_ bytes: [UInt8]?) -> String { Data(bytes ?? []).base64EncodedString() }

    func testMissingSourceModelNamesBothHashesInBase64AndTheVersionTheStoreMatches() throws {
        let path = try copyFixtureStore("apple-stores/renames/Example_v1.0.0.sqlite", into: directory)
        let source = try model("1.1.0")
        let destination = try model("1.2.0")
        let storeHash = try StoreInfo.read(at: path).metadata.versionHashes["BasicEntity"]
        let manager = try MigrationManager(
            sourceModel: source, destinationModel: destination,
            mappingModels: [try MappingModel.inferred(from: source, to: destination)])
        XCTAssertThrowsError(try manager.migrateStore(from: path, to: directory + "/out.sqlite")) { error in
            let e = error as? MigrationError
            XCTAssertEqual(e?.code, .migrationMissingSourceModel)
            let message = e?.message ?? ""
            XCTAssertTrue(
                message.contains(
                    "BasicEntity: store hash \(self.base64(storeHash)), model hash \(self.base64(source.entity(named: "BasicEntity")?.versionHash))"
                ), message)
            XCTAssertFalse(message.contains("matches version"), message)
        }
        manager.modelVersions = try ModelVersionSet(
            contentsOf: TestPaths.fixtures + "/apple-stores/renames/Model.xcdatamodeld")
        XCTAssertThrowsError(try manager.migrateStore(from: path, to: directory + "/out.sqlite")) { error in
            let message = (error as? MigrationError)?.message ?? ""
            XCTAssertTrue(message.contains("The store matches version 'v1.0.0' of"), message)
        }
        // A set none of whose versions wrote the store says so, listing them.
        manager.modelVersions = try ModelVersionSet(
            contentsOf: TestPaths.fixtures + "/xcode/XcodeServer/1_0_0/XcodeServer.xcdatamodeld")
        XCTAssertThrowsError(try manager.migrateStore(from: path, to: directory + "/out.sqlite")) { error in
            let message = (error as? MigrationError)?.message ?? ""
            XCTAssertTrue(message.contains("The store matches no version of"), message)
        }
    }

    func testVersionDifferenceDescribesMissingSides() {
        let hash: [UInt8] = [0x00, 0xab, 0x10]
        XCTAssertEqual(
            ManagedObjectModel.VersionDifference(entityName: "A", storeHash: hash, modelHash: [0xff]).description,
            "A: store hash AKsQ, model hash /w==")
        XCTAssertEqual(
            ManagedObjectModel.VersionDifference(entityName: "A", storeHash: nil, modelHash: hash).description,
            "A is not in the store")
        XCTAssertEqual(
            ManagedObjectModel.VersionDifference(entityName: "A", storeHash: hash, modelHash: nil).description,
            "A is only in the store")
    }
}
