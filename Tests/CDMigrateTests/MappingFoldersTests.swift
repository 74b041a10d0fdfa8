import Foundation
import XCTest

@testable import CDMigrate

/// Mapping models kept apart from the model, naming versions renamed since, and the steps they
/// record deciding the order of versions.
final class MappingFoldersTests: XCTestCase {
    var scratch: ScratchDirectory!
    override func setUp() { scratch = ScratchDirectory() }

    static let uncloudNotes = TestPaths.fixtures + "/xcode/UnCloudNotes"

    /// `Model.xcdatamodeld` with v1 (Item.name) and v2 (Item.name and a required `code` with no
    /// default, which Core Data cannot infer), and a JSON mapping v1 → v2 in `Migrations/V2/`.
    func writeProject() throws -> (bundle: String, mappings: String) {
        let project = scratch.file("App")
        let bundle = project + "/Model/Model.xcdatamodeld"
        for (version, extra) in [("v1", ""), ("v2", "<attribute name=\"code\" attributeType=\"String\"/>")] {
            try FileManager.default.createDirectory(
                atPath: bundle + "/\(version).xcdatamodel", withIntermediateDirectories: true)
            try """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
                <entity name="Item" representedClassName="Item"><attribute name="name" optional="YES" attributeType="String"/>\(extra)</entity>
            </model>
            """.write(toFile: bundle + "/\(version).xcdatamodel/contents", atomically: true, encoding: .utf8)
        }
        try
            "<plist version=\"1.0\"><dict><key>_XCCurrentVersionName</key><string>v2.xcdatamodel</string></dict></plist>"
            .write(toFile: bundle + "/.xccurrentversion", atomically: true, encoding: .utf8)
        let mappings = project + "/Migrations"
        try FileManager.default.createDirectory(atPath: mappings + "/V2", withIntermediateDirectories: true)
        try """
        {"name": "ItemV1ToV2", "sourceModel": "v1", "destinationModel": "v2", "entityMappings": [
          {"name": "ItemToItem", "type": "transform", "sourceEntity": "Item", "destinationEntity": "Item",
           "sourceExpression": "FETCH(FUNCTION($manager, \\"fetchRequestForSourceEntityNamed:predicateString:\\", \\"Item\\", \\"TRUEPREDICATE\\"), $manager.sourceContext, NO)",
           "attributeMappings": {"name": "$source.name", "code": "FUNCTION('X-', 'stringByAppendingString:', $source.name)"}}]}
        """.write(toFile: mappings + "/V2/ItemV1ToV2.mapping.json", atomically: true, encoding: .utf8)
        return (bundle, mappings)
    }

    func testMappingModelsInAnotherFolderAreFoundWhenItIsGiven() throws {
        let (bundle, mappings) = try writeProject()
        let alone = try ModelSet(contentsOf: bundle)
        XCTAssertEqual(alone.mappingModels.count, 0)
        XCTAssertThrowsError(try MigrationPlan(storePath: "x.sqlite", storeVersion: "v1", models: alone)) { error in
            let message = "\(error)"
            XCTAssertTrue(
                message.contains("looked in '\(bundle)' and '\(FileIO.directory(of: bundle))', found 0 mapping models"),
                message)
        }
        let set = try ModelSet(contentsOf: bundle, mappingFolders: [mappings])
        XCTAssertEqual(set.mappingModels.map { $0.name }, ["ItemV1ToV2"])
        XCTAssertEqual(set.mappingSearchPaths.last, mappings)
        let plan = try MigrationPlan(storePath: "x.sqlite", storeVersion: "v1", models: set)
        XCTAssertEqual(plan.stages.map { $0.mappingModelNames }, [["ItemV1ToV2"]])
        // The migration runs with it.
        let store = scratch.file("v1.sqlite")
        try makeStore(store, try XCTUnwrap(set.models["v1"])) { _ = try insert($0, "Item", ["name": .string("a")]) }
        let destination = scratch.file("v2.sqlite")
        try StagedMigrationManager(storeAt: store, models: set).migrateStore(to: destination)
        let migrated = try PersistentStore.open(
            at: destination, model: try XCTUnwrap(set.currentModel), readOnly: true, checkVersion: true)
        defer { migrated.close() }
        XCTAssertEqual(try fetchAll(migrated, "Item").map { try $0.value(forKey: "code") }, [.string("X-a")])
        XCTAssertThrowsError(try ModelSet(contentsOf: bundle, mappingFolders: [scratch.file("nowhere")])) {
            XCTAssertEqual(($0 as? MigrationError)?.code, .io)
        }
    }

    /// The command line: `--mappings DIR` with plan, migrate and import; without it, the
    /// messages say where they looked.
    func testTheCommandLineFindsMappingModelsInTheFoldersGiven() throws {
        try CommandLineTool.requireBuilt()
        let (bundle, mappings) = try writeProject()
        let store = scratch.file("v1.sqlite")
        try makeStore(store, try ManagedObjectModel(contentsOf: bundle + "/v1.xcdatamodel")) {
            _ = try insert($0, "Item", ["name": .string("a")])
        }
        let refused = try CommandLineTool.run(["plan", store, "--models", bundle])
        XCTAssertEqual(refused.status, 65, refused.err)
        XCTAssertTrue(refused.err.contains("found 0 mapping models"), refused.err)
        let plan = try CommandLineTool.run(["plan", store, "--models", bundle, "--mappings", mappings])
        XCTAssertEqual(plan.status, 0, plan.err)
        XCTAssertTrue(plan.out.contains("ItemV1ToV2"), plan.out)
        let destination = scratch.file("v2.sqlite")
        let migrate = try CommandLineTool.run([
            "migrate", store, "--to", destination, "--models", bundle, "--mappings", mappings,
        ])
        XCTAssertEqual(migrate.status, 0, migrate.err)
        let set = try ModelSet(contentsOf: bundle)
        let migrated = try PersistentStore.open(
            at: destination, model: try XCTUnwrap(set.currentModel), readOnly: true, checkVersion: true)
        XCTAssertEqual(try fetchAll(migrated, "Item").map { try $0.value(forKey: "code") }, [.string("X-a")])
        migrated.close()
        let imported = try CommandLineTool.run(["import", bundle, "-o", scratch.file("json"), "--mappings", mappings])
        XCTAssertEqual(imported.status, 0, imported.err)
        XCTAssertTrue(FileManager.default.fileExists(atPath: scratch.file("json/ItemV1ToV2.mapping.json")))
        let alone = try CommandLineTool.run(["import", bundle, "-o", scratch.file("json-alone")])
        XCTAssertEqual(alone.status, 0, alone.err)
        XCTAssertTrue(
            alone.err.contains("no mapping model found") && alone.err.contains("found 0 mapping models"), alone.err)
        let misplaced = try CommandLineTool.run([
            "migrate", store, "--to", scratch.file("x.sqlite"), "--mappings", mappings,
            "--source-model", bundle + "/v1.xcdatamodel", "--destination-model", bundle + "/v2.xcdatamodel",
            "--mapping", mappings + "/V2/ItemV1ToV2.mapping.json",
        ])
        XCTAssertNotEqual(misplaced.status, 0)
        XCTAssertTrue(misplaced.err.contains("--mappings goes with --models"), misplaced.err)
    }

    /// An Xcode mapping model whose model path names a version renamed since is matched by the
    /// entity hashes of the models it embeds.
    func testAnXcodeMappingModelNamingARenamedVersionIsMatchedByItsEmbeddedModels() throws {
        let project = scratch.file("Notes")
        try FileManager.default.createDirectory(atPath: project + "/Mappings", withIntermediateDirectories: true)
        let bundle = project + "/UnCloudNotesDataModel.xcdatamodeld"
        try FileManager.default.copyItem(
            atPath: Self.uncloudNotes + "/UnCloudNotesDataModel.xcdatamodeld", toPath: bundle)
        try FileManager.default.moveItem(
            atPath: bundle + "/UnCloudNotesDataModel_v2.xcdatamodel",
            toPath: bundle + "/UnCloudNotesDataModel_v2b.xcdatamodel")
        for name in ["UnCloudNotesMappingModel_v2_to_v3", "UnCloudNotesMappingModel_v3_to_v4"] {
            try FileManager.default.copyItem(
                atPath: Self.uncloudNotes + "/\(name).xcmappingmodel",
                toPath: project + "/Mappings/\(name).xcmappingmodel")
        }
        let set = try ModelSet(contentsOf: bundle, mappingFolders: [project + "/Mappings"])
        XCTAssertEqual(
            set.versionNames,
            [
                "UnCloudNotesDataModel", "UnCloudNotesDataModel_v2b", "UnCloudNotesDataModel_v3",
                "UnCloudNotesDataModel_v4",
            ])
        XCTAssertFalse(set.warnings.contains { $0.contains("not in the set") }, "\(set.warnings)")
        XCTAssertTrue(
            set.warnings.contains {
                $0.contains("names version 'UnCloudNotesDataModel_v2'") && $0.contains("'UnCloudNotesDataModel_v2b'")
            }, "\(set.warnings)")
        let plan = try MigrationPlan(storePath: "x.sqlite", storeVersion: "UnCloudNotesDataModel_v2b", models: set)
        XCTAssertEqual(
            plan.stages.map { $0.mappingModelNames },
            [["UnCloudNotesMappingModel_v2_to_v3"], ["UnCloudNotesMappingModel_v3_to_v4"]])
        XCTAssertTrue(plan.stages[0].reason.contains("entity hashes of the models it embeds"), plan.stages[0].reason)
    }

    /// Versions whose names say nothing of their order are ordered by the steps their mapping
    /// models record; with no current version named, the last of them is current.
    func testTheStepsMappingModelsRecordOrderTheVersions() throws {
        let folder = scratch.file("models")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let versions = ["Initial": ["a"], "Tags": ["a", "b"], "Archive": ["a", "b", "c"]]
        for (name, attributes) in versions {
            let list = attributes.map { "{\"name\": \"\($0)\", \"type\": \"string\", \"optional\": true}" }.joined(
                separator: ", ")
            try "{\"name\": \"M\", \"entities\": [{\"name\": \"Item\", \"attributes\": [\(list)]}]}".write(
                toFile: folder + "/\(name).model.json", atomically: true, encoding: .utf8)
        }
        for (from, to, attributes) in [("Initial", "Tags", ["a"]), ("Tags", "Archive", ["a", "b"])] {
            let list = attributes.map { "\"\($0)\": \"$source.\($0)\"" }.joined(separator: ", ")
            try """
            {"name": "\(from)To\(to)", "sourceModel": "\(from)", "destinationModel": "\(to)", "entityMappings": [
              {"name": "ItemToItem", "type": "transform", "sourceEntity": "Item", "destinationEntity": "Item", "attributeMappings": {\(list)}}]}
            """.write(toFile: folder + "/\(from)To\(to).mapping.json", atomically: true, encoding: .utf8)
        }
        let set = try ModelSet(contentsOf: folder)
        XCTAssertEqual(set.versionNames, ["Initial", "Tags", "Archive"])
        XCTAssertEqual(set.currentVersionName, "Archive")
        XCTAssertTrue(set.warnings.contains { $0.contains("ordered by the steps") }, "\(set.warnings)")
        let plan = try MigrationPlan(storePath: "x.sqlite", storeVersion: "Initial", models: set)
        XCTAssertEqual(plan.stages.map { $0.mappingModelNames }, [["InitialToTags"], ["TagsToArchive"]])
    }

    /// A current version that mapping models lead on from stays current, and the plan to the
    /// later version takes the mapping model (a shipped project's shape: the first version
    /// current, a mapping model to "Recipes 2" kept in another folder).
    func testMappingModelsLeadingOnFromTheCurrentVersionOrderItFirst() throws {
        let folder = scratch.file("models")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for (name, attributes) in [("Recipes", ["a"]), ("Recipes 2", ["a", "b"])] {
            let list = attributes.map { "{\"name\": \"\($0)\", \"type\": \"string\", \"optional\": true}" }.joined(
                separator: ", ")
            try "{\"name\": \"M\", \"entities\": [{\"name\": \"Item\", \"attributes\": [\(list)]}]}".write(
                toFile: folder + "/\(name).model.json", atomically: true, encoding: .utf8)
        }
        try "Recipes\n".write(toFile: folder + "/current-version", atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(atPath: scratch.file("Classes"), withIntermediateDirectories: true)
        try """
        {"name": "MappingModel", "sourceModel": "Recipes", "destinationModel": "Recipes 2", "entityMappings": [
          {"name": "ItemToItem", "type": "transform", "sourceEntity": "Item", "destinationEntity": "Item", "attributeMappings": {"a": "$source.a", "b": "$source.a"}}]}
        """.write(toFile: scratch.file("Classes/MappingModel.mapping.json"), atomically: true, encoding: .utf8)
        let alone = try ModelSet(contentsOf: folder)
        XCTAssertEqual(alone.versionNames, ["Recipes 2", "Recipes"])
        XCTAssertTrue(alone.warnings.contains { $0.contains("'Recipes' is taken as the newest") }, "\(alone.warnings)")
        let set = try ModelSet(contentsOf: folder, mappingFolders: [scratch.file("Classes")])
        XCTAssertEqual(set.versionNames, ["Recipes", "Recipes 2"])
        XCTAssertEqual(set.currentVersionName, "Recipes")
        XCTAssertFalse(set.warnings.contains { $0.contains("is taken as the newest") }, "\(set.warnings)")
        XCTAssertTrue(
            set.warnings.contains {
                $0.contains("'Recipes' is not the newest: mapping models record steps from it to 'Recipes 2'")
            }, "\(set.warnings)")
        let plan = try MigrationPlan(
            storePath: "x.sqlite", storeVersion: "Recipes", models: set, targetVersion: "Recipes 2")
        XCTAssertEqual(plan.stages.map { $0.mappingModelNames }, [["MappingModel"]])
    }

    /// A mapping model recording a step over a version is taken for that step, and the version
    /// between is not passed through.
    func testAMappingModelRecordingAStepOverAVersionIsTaken() throws {
        let folder = scratch.file("models")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for (name, attributes) in [("v1", ["a"]), ("v2", ["a", "b"]), ("v3", ["a", "b", "c"])] {
            let list = attributes.map { "{\"name\": \"\($0)\", \"type\": \"string\", \"optional\": true}" }.joined(
                separator: ", ")
            try "{\"name\": \"M\", \"entities\": [{\"name\": \"Item\", \"attributes\": [\(list)]}]}".write(
                toFile: folder + "/\(name).model.json", atomically: true, encoding: .utf8)
        }
        try """
        {"name": "V1ToV3", "sourceModel": "v1", "destinationModel": "v3", "entityMappings": [
          {"name": "ItemToItem", "type": "transform", "sourceEntity": "Item", "destinationEntity": "Item", "attributeMappings": {"a": "$source.a", "c": "$source.a"}}]}
        """.write(toFile: folder + "/V1ToV3.mapping.json", atomically: true, encoding: .utf8)
        let set = try ModelSet(contentsOf: folder)
        let plan = try MigrationPlan(storePath: "x.sqlite", storeVersion: "v1", models: set)
        XCTAssertEqual(plan.stages.map { "\($0.sourceVersionName)→\($0.destinationVersionName)" }, ["v1→v3"])
        XCTAssertTrue(plan.stages[0].reason.contains("passes over 'v2'"), plan.stages[0].reason)
        let fromV2 = try MigrationPlan(storePath: "x.sqlite", storeVersion: "v2", models: set)
        XCTAssertEqual(fromV2.stages.map { $0.mappingModelNames }, [["inferred"]])

        // With a mapping model for v1 → v2 too, the one straight to the target is still taken,
        // as Core Data and apps' progressive migrations take it; to v2, the step to v2.
        try """
        {"name": "V1ToV2", "sourceModel": "v1", "destinationModel": "v2", "entityMappings": [
          {"name": "ItemToItem", "type": "copy", "sourceEntity": "Item", "destinationEntity": "Item", "attributeMappings": {"a": "$source.a"}}]}
        """.write(toFile: folder + "/V1ToV2.mapping.json", atomically: true, encoding: .utf8)
        let both = try ModelSet(contentsOf: folder)
        let straight = try MigrationPlan(storePath: "x.sqlite", storeVersion: "v1", models: both)
        XCTAssertEqual(straight.stages.map { $0.mappingModelNames }, [["V1ToV3"]])
        let toV2 = try MigrationPlan(storePath: "x.sqlite", storeVersion: "v1", models: both, targetVersion: "v2")
        XCTAssertEqual(toV2.stages.map { $0.mappingModelNames }, [["V1ToV2"]])
    }
}
