import Foundation
import ReferenceMigrations
import XCTest

@testable import CDMigrate

/// Progressive migration: model sets, plans and the staged manager.
final class StagedMigrationTests: XCTestCase {
    var scratch: ScratchDirectory!

    override func setUp() { scratch = ScratchDirectory() }

    static let uncloudNotesExample = ReferenceMigrations.examplesDirectory + "/" + UnCloudNotes.directory
    static let uncloudNotesXcode = TestPaths.fixtures + "/xcode/UnCloudNotes/UnCloudNotesDataModel.xcdatamodeld"
    static let renamesXcode = TestPaths.fixtures + "/apple-stores/renames/Model.xcdatamodeld"

    /// A copy of the UnCloudNotes example folder (models and mappings) without the files named.
    func uncloudNotesFolder(without excluded: [String] = []) throws -> String {
        let folder = scratch.file("models")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for name in try FileManager.default.contentsOfDirectory(atPath: Self.uncloudNotesExample)
        where name.hasSuffix(".json") && !excluded.contains(name) {
            try FileManager.default.copyItem(atPath: Self.uncloudNotesExample + "/" + name, toPath: folder + "/" + name)
        }
        return folder
    }

    func files(in folder: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
    }

    func noteCount(_ path: String, version: Int) throws -> Int {
        try StoreAccess.readStore(at: path, model: try UnCloudNotes.model(version: version)) {
            try StoreAccess.all("Note", in: $0).count
        }
    }

    // MARK: Model sets

    func testJSONFolderModelSetFindsItsMappingModelsByRecordedVersionNames() throws {
        let set = try ModelSet(contentsOf: Self.uncloudNotesExample)
        XCTAssertEqual(set.versionNames, ["UnCloudNotes_v1", "UnCloudNotes_v2", "UnCloudNotes_v3", "UnCloudNotes_v4"])
        XCTAssertEqual(
            set.mappingModels.map { $0.name },
            ["UnCloudNotes_v1_to_v2", "UnCloudNotes_v2_to_v3", "UnCloudNotes_v3_to_v4"])
        XCTAssertEqual(
            set.mappingModels.map { $0.sourceVersionName }, ["UnCloudNotes_v1", "UnCloudNotes_v2", "UnCloudNotes_v3"])
        let plan = try MigrationPlan(storePath: "x.sqlite", storeVersion: "UnCloudNotes_v1", models: set)
        XCTAssertEqual(
            plan.stages.map { $0.mappingModelNames },
            [["UnCloudNotes_v1_to_v2"], ["UnCloudNotes_v2_to_v3"], ["UnCloudNotes_v3_to_v4"]])
        XCTAssertEqual(plan.stages.map { $0.isInferred }, [false, false, false])
        XCTAssertEqual(plan.stages.last?.policyNames, [AttachmentToImageAttachmentMigrationPolicyV3toV4.name])
    }

    /// The Xcode mapping models (beside the .xcdatamodeld) are matched by the model versions
    /// their model paths name, each to its own step; v1 → v2 has none and is inferred.
    func testXcodeModelSetMatchesXcodeMappingModelsByTheirModelPaths() throws {
        let set = try ModelSet(contentsOf: Self.uncloudNotesXcode)
        XCTAssertEqual(
            set.mappingModels.map { $0.name },
            ["UnCloudNotesMappingModel_v2_to_v3", "UnCloudNotesMappingModel_v3_to_v4"])
        XCTAssertEqual(
            set.mappingModels.map { $0.sourceVersionName }, ["UnCloudNotesDataModel_v2", "UnCloudNotesDataModel_v3"])
        XCTAssertEqual(set.warnings, [])
        XCTAssertEqual(set.versionNames.first, "UnCloudNotesDataModel")
        let plan = try MigrationPlan(storePath: "x.sqlite", storeVersion: "UnCloudNotesDataModel", models: set)
        XCTAssertEqual(
            plan.stages.map { "\($0.sourceVersionName)>\($0.destinationVersionName)" },
            [
                "UnCloudNotesDataModel>UnCloudNotesDataModel_v2", "UnCloudNotesDataModel_v2>UnCloudNotesDataModel_v3",
                "UnCloudNotesDataModel_v3>UnCloudNotesDataModel_v4",
            ])
        XCTAssertEqual(
            plan.stages.map { $0.mappingModelNames },
            [["inferred"], ["UnCloudNotesMappingModel_v2_to_v3"], ["UnCloudNotesMappingModel_v3_to_v4"]])
        XCTAssertTrue(plan.stages[1].reason.contains("entity hashes of the models it embeds"), plan.stages[1].reason)
        XCTAssertEqual(plan.stages[2].policyNames, ["AttachmentToImageAttachmentMigrationPolicyV3toV4"])
    }

    /// A mapping records its entity hashes: it serves the pair it was written for, and a mapping
    /// written for another pair (v1 → v3) is not used for v1 → v2 or v2 → v3; to the target, the
    /// mapping straight to it is taken (as Core Data finds it for the current model).
    func testMappingModelIsMatchedByRecordedHashesAndOneForAnotherPairIsIgnored() throws {
        let folder = scratch.file("set")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let v1 = #"{"entities": [{"name": "Item", "attributes": [{"name": "title", "type": "string"}]}]}"#
        let v2 =
            #"{"entities": [{"name": "Item", "attributes": [{"name": "title", "type": "string"}, {"name": "note", "type": "string", "optional": true}]}]}"#
        let v3 =
            #"{"entities": [{"name": "Item", "attributes": [{"name": "title", "type": "string"}, {"name": "note", "type": "string", "optional": true}, {"name": "rank", "type": "integer64", "optional": true}]}]}"#
        for (name, text) in [("v1", v1), ("v2", v2), ("v3", v3)] {
            try text.write(toFile: folder + "/\(name).json", atomically: true, encoding: .utf8)
        }
        let m1 = try ManagedObjectModel(contentsOf: folder + "/v1.json")
        let m2 = try ManagedObjectModel(contentsOf: folder + "/v2.json")
        let m3 = try ManagedObjectModel(contentsOf: folder + "/v3.json")
        let oneToTwo = try MappingModel.inferred(from: m1, to: m2).jsonText().replacingOccurrences(
            of: "FUNCTION($source, \\\"valueForKey:\\\", \\\"title\\\")", with: "uppercase:($source.title)")
        XCTAssertTrue(oneToTwo.contains("sourceEntityVersionHash"))
        XCTAssertTrue(oneToTwo.contains("uppercase:"), oneToTwo)
        try oneToTwo.write(toFile: folder + "/a-one-to-two.mapping.json", atomically: true, encoding: .utf8)
        try MappingModel.inferred(from: m1, to: m3).jsonText().write(
            toFile: folder + "/b-one-to-three.mapping.json", atomically: true, encoding: .utf8)

        let set = try ModelSet(contentsOf: folder)
        XCTAssertEqual(set.mappingModels.count, 2)
        let plan = try MigrationPlan(storePath: "x", storeVersion: "v1", models: set, targetVersion: "v2")
        XCTAssertEqual(plan.stages.map { $0.mappingModelNames }, [["a-one-to-two"]])
        XCTAssertTrue(plan.stages[0].reason.contains("recorded entity hashes"), plan.stages[0].reason)
        let fromV2 = try MigrationPlan(storePath: "x", storeVersion: "v2", models: set)
        XCTAssertEqual(fromV2.stages.map { $0.mappingModelNames }, [["inferred"]])
        let toCurrent = try MigrationPlan(storePath: "x", storeVersion: "v1", models: set)
        XCTAssertEqual(toCurrent.stages.map { $0.mappingModelNames }, [["b-one-to-three"]])

        // Run to v2: the mapping's expression (upper-casing) shows it was used.
        let store = scratch.file("items.sqlite")
        try makeStore(store, m1) { s in try insert(s, "Item", ["title": .string("abc")]) }
        let report = try StagedMigrationManager(storeAt: store, models: set, targetVersion: "v2").migrateStore(
            to: scratch.file("out.sqlite"))
        XCTAssertEqual(report.stages.map { $0.stage.isInferred }, [false])
        let out = try PersistentStore.open(
            at: scratch.file("out.sqlite"), model: m2, readOnly: true, checkVersion: true)
        XCTAssertEqual(try fetchAll(out, "Item").map { try $0.value(forKey: "title") }, [.string("ABC")])
        out.close()
    }

    func testPassesManifestOrdersTheStepsMappingModels() throws {
        let folder = scratch.file("set")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try #"{"entities": [{"name": "A", "attributes": [{"name": "x", "type": "string", "optional": true}]}]}"#.write(
            toFile: folder + "/v1.json", atomically: true, encoding: .utf8)
        try
            #"{"entities": [{"name": "A", "attributes": [{"name": "x", "type": "string", "optional": true}]}, {"name": "B", "attributes": [{"name": "y", "type": "string", "optional": true}]}]}"#
            .write(toFile: folder + "/v2.json", atomically: true, encoding: .utf8)
        let first =
            #"{"sourceModel": "v1", "destinationModel": "v2", "entityMappings": [{"name": "AToA", "sourceEntity": "A", "destinationEntity": "A", "attributeMappings": {"x": "$source.x"}}]}"#
        let second =
            #"{"sourceModel": "v1", "destinationModel": "v2", "entityMappings": [{"name": "AToB", "sourceEntity": "A", "destinationEntity": "B", "attributeMappings": {"y": "$source.x"}}]}"#
        try first.write(toFile: folder + "/p1.mapping.json", atomically: true, encoding: .utf8)
        try second.write(toFile: folder + "/p2.mapping.json", atomically: true, encoding: .utf8)
        XCTAssertEqual(
            try MigrationPlan(storePath: "x", storeVersion: "v1", models: try ModelSet(contentsOf: folder)).stages[0]
                .mappingModelNames, ["p1", "p2"])
        try #"{"steps": [{"from": "v1", "to": "v2", "passes": ["p2", "p1"]}]}"#.write(
            toFile: folder + "/migration-passes.json", atomically: true, encoding: .utf8)
        let plan = try MigrationPlan(storePath: "x", storeVersion: "v1", models: try ModelSet(contentsOf: folder))
        XCTAssertEqual(plan.stages[0].mappingModelNames, ["p2", "p1"])
        try #"{"steps": [{"from": "v1", "to": "v2", "passes": ["p3"]}]}"#.write(
            toFile: folder + "/migration-passes.json", atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try ModelSet(contentsOf: folder)) { error in
            XCTAssertEqual((error as? MigrationError)?.code, .invalidMapping)
            XCTAssertTrue("\(error)".contains("'p3'"), "\(error)")
        }
    }

    // MARK: Running

    /// Reference migration 4: stores at v1, v2 and v3 all reach v4 in one call, through the
    /// example's mapping models (and its policy); nothing is left beside them.
    func testUnCloudNotesStoresAtV1V2AndV3AllReachV4InOneCall() throws {
        let set = try ModelSet(contentsOf: Self.uncloudNotesExample)
        for version in 1...3 {
            let folder = scratch.file("v\(version)")
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            let source = folder + "/source.sqlite"
            let notes = try UnCloudNotes.generateSource(version: version, at: source, count: 40)
            let before = try XCTUnwrap(fileBytes(source))
            let manager = try StagedMigrationManager(storeAt: source, models: set)
            manager.registerPolicy(named: AttachmentToImageAttachmentMigrationPolicyV3toV4.name) {
                AttachmentToImageAttachmentMigrationPolicyV3toV4()
            }
            let report = try manager.migrateStore(to: folder + "/v4.sqlite")
            XCTAssertEqual(report.storeVersionName, "UnCloudNotes_v\(version)")
            XCTAssertEqual(report.stages.count, 4 - version)
            XCTAssertEqual(try noteCount(folder + "/v4.sqlite", version: 4), notes.count)
            let images = try StoreAccess.readStore(at: folder + "/v4.sqlite", model: try UnCloudNotes.model(version: 4))
            {
                try StoreAccess.all("ImageAttachment", in: $0).count
            }
            // v3 stores also hold two attachments without a note, one of them with an image.
            XCTAssertEqual(
                images, notes.reduce(0) { $0 + $1.images.filter { $0 != nil }.count } + (version == 3 ? 1 : 0),
                "v\(version)")
            XCTAssertEqual(fileBytes(source), before, "the source is not modified")
            XCTAssertEqual(try files(in: folder).filter { !$0.hasPrefix("source.sqlite") }, ["v4.sqlite"])
        }
    }

    /// A JSON folder without the v1 → v2 mapping: that step is Core Data's inferred mapping.
    func testJSONFolderChainInfersTheStepWithoutAMappingModel() throws {
        let set = try ModelSet(contentsOf: try uncloudNotesFolder(without: ["UnCloudNotes_v1_to_v2.mapping.json"]))
        let source = scratch.file("v1.sqlite")
        let notes = try UnCloudNotes.generateSource(version: 1, at: source, count: 30)
        let manager = try StagedMigrationManager(storeAt: source, models: set, targetVersion: "UnCloudNotes_v3")
        XCTAssertEqual(manager.plan.stages.map { $0.kind }, [.lightweight, .custom])
        let report = try manager.migrateStore(to: scratch.file("v3.sqlite"))
        XCTAssertEqual(report.stages[0].stage.mappingModelNames, ["inferred"])
        XCTAssertTrue(report.stages[0].report.mappings.contains { $0.entityMappingName == "IEM_Transform_Note" })
        XCTAssertEqual(try noteCount(scratch.file("v3.sqlite"), version: 3), notes.count)
    }

    func testInPlaceChainReplacesTheStoreAndAStoreAtTheTargetIsCopiedOrLeftAlone() throws {
        let set = try ModelSet(contentsOf: Self.uncloudNotesExample)
        let source = scratch.file("store.sqlite")
        let notes = try UnCloudNotes.generateSource(version: 2, at: source, count: 12)
        let manager = try StagedMigrationManager(storeAt: source, models: set, targetVersion: "UnCloudNotes_v3")
        let report = try manager.migrateStoreInPlace()
        XCTAssertEqual(report.stages.count, 1)
        XCTAssertEqual(try noteCount(source, version: 3), notes.count)
        XCTAssertEqual(try files(in: scratch.path).filter { !$0.hasPrefix("store.sqlite") }, [])

        let again = try StagedMigrationManager(storeAt: source, models: set, targetVersion: "UnCloudNotes_v3")
        XCTAssertTrue(again.plan.isAtTarget)
        let bytes = fileBytes(source)
        XCTAssertTrue(try again.migrateStoreInPlace().wasAtTarget)
        XCTAssertEqual(fileBytes(source), bytes, "nothing to do in place")
        let copied = try again.migrateStore(to: scratch.file("copy.sqlite"))
        XCTAssertTrue(copied.copied)
        XCTAssertEqual(try noteCount(scratch.file("copy.sqlite"), version: 3), notes.count)
    }

    /// The third step's policy fails: the error names the step, no file is left, the source is as it was.
    func testFailureMidChainLeavesNoFilesAndTheSourceUntouched() throws {
        final class FailingPolicy: EntityMigrationPolicy {
            override func begin(_ mapping: EntityMapping, manager: MigrationManager) throws {
                throw MigrationError(.entityMigrationPolicy, "refused on purpose")
            }
        }
        let set = try ModelSet(contentsOf: Self.uncloudNotesExample)
        let source = scratch.file("store.sqlite")
        _ = try UnCloudNotes.generateSource(version: 1, at: source, count: 20)
        let before = try files(in: scratch.path)
        let bytes = fileBytes(source)
        let manager = try StagedMigrationManager(storeAt: source, models: set)
        manager.registerPolicy(named: AttachmentToImageAttachmentMigrationPolicyV3toV4.name) { FailingPolicy() }
        var stagesSeen = Set<Int>()
        manager.progressHandler = { index, _ in
            stagesSeen.insert(index)
            return true
        }
        XCTAssertThrowsError(try manager.migrateStore(to: scratch.file("out.sqlite"))) { error in
            let e = error as? MigrationError
            XCTAssertEqual(e?.code, .entityMigrationPolicy)
            XCTAssertTrue(e?.message.hasPrefix("UnCloudNotes_v3 → UnCloudNotes_v4") == true, "\(error)")
            XCTAssertTrue(e?.message.contains("refused on purpose") == true, "\(error)")
        }
        XCTAssertEqual(stagesSeen, [0, 1, 2], "the first two steps ran")
        XCTAssertEqual(try files(in: scratch.path), before)
        XCTAssertEqual(fileBytes(source), bytes)

        // An unregistered policy is refused before anything runs.
        let unregistered = try StagedMigrationManager(storeAt: source, models: set)
        XCTAssertThrowsError(try unregistered.migrateStore(to: scratch.file("out.sqlite"))) { error in
            XCTAssertEqual((error as? MigrationError)?.code, .entityMigrationPolicy)
            XCTAssertTrue("\(error)".contains("not registered"), "\(error)")
        }
        XCTAssertEqual(try files(in: scratch.path), before)
    }

    /// cancel() during the second step stops it; nothing is left.
    func testCancelDuringAStepStopsTheChainAndLeavesNothing() throws {
        let set = try ModelSet(contentsOf: Self.uncloudNotesExample)
        let source = scratch.file("store.sqlite")
        _ = try UnCloudNotes.generateSource(version: 1, at: source, count: 20)
        let before = try files(in: scratch.path)
        let manager = try StagedMigrationManager(storeAt: source, models: set, targetVersion: "UnCloudNotes_v3")
        var stagesSeen = Set<Int>()
        manager.progressHandler = { [unowned manager] index, _ in
            stagesSeen.insert(index)
            if index == 1 { manager.cancel() }
            return true
        }
        XCTAssertThrowsError(try manager.migrateStore(to: scratch.file("out.sqlite"))) { error in
            XCTAssertEqual((error as? MigrationError)?.code, .migrationCancelled, "\(error)")
        }
        XCTAssertEqual(stagesSeen, [0, 1])
        XCTAssertEqual(try files(in: scratch.path), before)
    }

    func testStoreThatMatchesNoVersionIsMissingSourceModelNamingItsHashes() throws {
        let set = try ModelSet(contentsOf: Self.uncloudNotesExample)
        let store = scratch.file("other.sqlite")
        let model = try ManagedObjectModel(
            json:
                #"{"entities": [{"name": "Other", "attributes": [{"name": "x", "type": "string", "optional": true}]}]}"#
        )
        try makeStore(store, model) { _ in }
        XCTAssertThrowsError(try MigrationPlan(storeAt: store, models: set)) { error in
            let e = error as? MigrationError
            XCTAssertEqual(e?.code, .migrationMissingSourceModel)
            XCTAssertTrue(
                e?.message.contains("Other " + Base64.encode(model.entities[0].versionHash)) == true, "\(error)")
            XCTAssertEqual(e?.underlying.count, 4, "one line per version")
        }
    }

    /// A step without a mapping model whose change cannot be inferred: the error names the step and the rule.
    func testStepThatCannotBeInferredNamesTheStepAndTheProperty() throws {
        let folder = scratch.file("set")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try #"{"entities": [{"name": "A", "attributes": [{"name": "x", "type": "string", "optional": true}]}]}"#.write(
            toFile: folder + "/v1.json", atomically: true, encoding: .utf8)
        try
            #"{"entities": [{"name": "A", "attributes": [{"name": "x", "type": "string", "optional": true}, {"name": "y", "type": "string", "optional": false}]}]}"#
            .write(toFile: folder + "/v2.json", atomically: true, encoding: .utf8)
        XCTAssertThrowsError(
            try MigrationPlan(storePath: "x", storeVersion: "v1", models: try ModelSet(contentsOf: folder))
        ) { error in
            let e = error as? MigrationError
            XCTAssertEqual(e?.code, .inferredMappingModel)
            XCTAssertTrue(e?.message.hasPrefix("v1 → v2: no mapping model") == true, "\(error)")
            XCTAssertTrue(e?.message.contains("'A.y'") == true, "\(error)")
        }
    }

    /// Apple's own stores, one per version of a model whose every version renames the attribute:
    /// each reaches the current version by inferred steps (renaming identifiers).
    func testAppleRenamesStoresReachTheCurrentVersionByInferredSteps() throws {
        let set = try ModelSet(contentsOf: Self.renamesXcode)
        let current = try XCTUnwrap(set.currentModel)
        for version in ["1.0.0", "1.1.0", "1.2.0"] {
            let source = try copyFixtureStore("apple-stores/renames/Example_v\(version).sqlite", into: scratch.path)
            let manager = try StagedMigrationManager(storeAt: source, models: set)
            XCTAssertTrue(manager.plan.stages.allSatisfy { $0.isInferred })
            let destination = source + "-current.sqlite"
            try manager.migrateStore(to: destination)
            let store = try PersistentStore.open(at: destination, model: current, readOnly: true, checkVersion: true)
            let values = try fetchAll(store, "BasicEntity").map { try $0.value(forKey: "v2_0_0_name") }
            store.close()
            XCTAssertEqual(values, [.string("A Known Value")], version)
        }
    }
}
