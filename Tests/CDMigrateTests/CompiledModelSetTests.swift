import Foundation
import XCTest

@testable import CDMigrate

/// A model set as an app bundle ships it: a `.momd` of several versions with the compiled mapping
/// models (`.cdm`) beside its `.mom` files, built from Xcode's own compiled XcodeServer files.
final class CompiledModelSetTests: XCTestCase {
    /// XcodeServer.momd with v1_0_0, v1_1_0 and v2_0_0, and the two compiled mapping models.
    func makeCompiledSet(in scratch: ScratchDirectory) throws -> String {
        let root = TestPaths.fixtures + "/xcode/XcodeServer"
        let momd = scratch.file("XcodeServer.momd")
        try FileManager.default.createDirectory(atPath: momd, withIntermediateDirectories: true)
        var hashes: [String: Any] = [:]
        for (folder, version) in [("1_0_0", "v1_0_0"), ("1_1_0", "v1_1_0"), ("2_0_0", "v2_0_0")] {
            let compiled = root + "/\(folder)/XcodeServer.momd_precompiled"
            try FileManager.default.copyItem(atPath: compiled + "/XcodeServer.mom", toPath: momd + "/\(version).mom")
            let data = try Data(contentsOf: URL(fileURLWithPath: compiled + "/VersionInfo.plist"))
            let info = try XCTUnwrap(
                try PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any])
            let versions = try XCTUnwrap(info["NSManagedObjectModel_VersionHashes"] as? [String: Any])
            hashes[version] = try XCTUnwrap(versions["XcodeServer"])
        }
        let plist: [String: Any] = [
            "NSManagedObjectModel_CurrentVersionName": "v2_0_0", "NSManagedObjectModel_VersionHashes": hashes,
        ]
        try PropertyListSerialization.data(fromPropertyList: plist, format: .binary, options: 0)
            .write(to: URL(fileURLWithPath: momd + "/VersionInfo.plist"))
        // Named so that file-name order would not tell the steps apart: the recorded hashes do.
        try FileManager.default.copyItem(atPath: root + "/2_0_0/MappingModel.cdm_precompiled", toPath: momd + "/A.cdm")
        try FileManager.default.copyItem(atPath: root + "/1_1_0/MappingModel.cdm_precompiled", toPath: momd + "/B.cdm")
        return momd
    }

    func testACompiledSetMatchesItsCompiledMappingModelsByTheirHashesAndRunsThem() throws {
        let scratch = ScratchDirectory()
        let set = try ModelSet(contentsOf: try makeCompiledSet(in: scratch))
        XCTAssertEqual(set.versionNames, ["v1_0_0", "v1_1_0", "v2_0_0"])
        XCTAssertEqual(set.currentVersionName, "v2_0_0")
        let store = scratch.file("server.sqlite")
        try makeStore(store, try XCTUnwrap(set.models["v1_0_0"])) { _ in }

        let plan = try MigrationPlan(storeAt: store, models: set)
        XCTAssertEqual(plan.storeVersionName, "v1_0_0")
        XCTAssertEqual(
            plan.stages.map { "\($0.sourceVersionName)→\($0.destinationVersionName)" },
            ["v1_0_0→v1_1_0", "v1_1_0→v2_0_0"])
        XCTAssertEqual(plan.stages.map(\.mappingModelNames), [["B"], ["A"]])
        XCTAssertFalse(plan.stages.contains { $0.isInferred })

        let destination = scratch.file("server-current.sqlite")
        let report = try StagedMigrationManager(plan: plan).migrateStore(to: destination)
        XCTAssertEqual(report.targetVersionName, "v2_0_0")
        let info = try StoreInfo(contentsOf: destination)
        XCTAssertEqual(set.versionName(forStoreMetadata: info.metadata), "v2_0_0", "the result carries v2_0_0's hashes")
    }
}
