import Foundation
import XCTest

@testable import CDMigrate

/// Several mapping models for one step: without `migration-passes.json` they run in file-name
/// order, and that is said (naming the files and the order) by the model set, the plan, the
/// command line's `plan`, `migrate` and `check`; a pass whose relationship mapping needs
/// instances only another pass makes is said before the run.
final class PassOrderTests: XCTestCase {
    var scratch: ScratchDirectory!

    override func setUp() { scratch = ScratchDirectory() }

    static let v1 = """
        {"entities": [
          {"name": "User", "attributes": [{"name": "login", "type": "string"}], "relationships": [
            {"name": "files", "destination": "File", "inverse": "owner", "toMany": true}]},
          {"name": "File", "attributes": [{"name": "title", "type": "string"}], "relationships": [
            {"name": "owner", "destination": "User", "inverse": "files", "optional": true}]}]}
        """
    static let v2 = v1.replacingOccurrences(
        of: #"[{"name": "title", "type": "string"}]"#,
        with: #"[{"name": "title", "type": "string"}, {"name": "note", "type": "string", "optional": true}]"#)
    static let lookUpOwner =
        #"FUNCTION($manager, \"destinationInstancesForSourceRelationshipNamed:sourceInstances:\", \"owner\", $source.owner)"#
    /// The main pass: the files, each with its owner looked up among the users made in this pass.
    static let main = """
        {"sourceModel": "v1", "destinationModel": "v2", "entityMappings": [
          {"name": "FileToFile", "sourceEntity": "File", "destinationEntity": "File", "predicate": "TRUEPREDICATE",
           "attributeMappings": {"title": "$source.title"}, "relationshipMappings": {"owner": "\(lookUpOwner)"}}]}
        """
    /// The users' pass ("Model_User" sorts before "Model_main").
    static let users = """
        {"sourceModel": "v1", "destinationModel": "v2", "entityMappings": [
          {"name": "UserToUser", "sourceEntity": "User", "destinationEntity": "User", "predicate": "TRUEPREDICATE",
           "attributeMappings": {"login": "$source.login"}}]}
        """

    func folder(manifest: String? = nil) throws -> String {
        let folder = scratch.file("set-\(UUID().uuidString)")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for (name, text) in [
            ("v1.json", Self.v1), ("v2.json", Self.v2), ("Model_main.mapping.json", Self.main),
            ("Model_User.mapping.json", Self.users),
        ] {
            try text.write(toFile: folder + "/" + name, atomically: true, encoding: .utf8)
        }
        if let manifest = manifest {
            try manifest.write(toFile: folder + "/migration-passes.json", atomically: true, encoding: .utf8)
        }
        return folder
    }

    func store() throws -> String {
        let path = scratch.file("files-\(UUID().uuidString).sqlite")
        try makeStore(path, try ManagedObjectModel(json: Self.v1)) { store in
            let user = try insert(store, "User", ["login": .string("ana")])
            let file = try insert(store, "File", ["title": .string("notes.txt")])
            try file.setValue(.object(user), forKey: "owner")
        }
        return path
    }

    func testSeveralMappingModelsWithoutAManifestAreNamedInTheOrderTheyRun() throws {
        let folder = try folder()
        let set = try ModelSet(contentsOf: folder)
        let warning = try XCTUnwrap(set.warnings.first { $0.contains("file-name order") }, "\(set.warnings)")
        XCTAssertTrue(
            warning.hasPrefix("v1 → v2: 2 mapping models match and no 'migration-passes.json' orders them"), warning)
        XCTAssertTrue(
            warning.contains(
                "1. 'Model_User' (\(folder)/Model_User.mapping.json), 2. 'Model_main' (\(folder)/Model_main.mapping.json)"
            ), warning)
        XCTAssertTrue(warning.contains(#""passes": ["Model_User", "Model_main"]"#), warning)

        let plan = try MigrationPlan(storePath: "x", storeVersion: "v1", models: set)
        XCTAssertEqual(plan.stages[0].mappingModelNames, ["Model_User", "Model_main"])
        XCTAssertTrue(plan.warnings.contains(warning))
        // The main pass's owner look-up finds nothing: the users are made by the other pass.
        let dependency = try XCTUnwrap(
            plan.warnings.first { $0.contains("destinationInstancesForSourceRelationshipNamed:") }, "\(plan.warnings)")
        XCTAssertTrue(
            dependency.hasPrefix("v1 → v2: pass 2 'Model_main', entity mapping 'FileToFile', relationship 'owner'"),
            dependency)
        XCTAssertTrue(
            dependency.contains("only the earlier pass 1 'Model_User' makes (entity mapping 'UserToUser')"), dependency)
    }

    func testAManifestSetsTheOrderAndSilencesTheOrderWarningButNotTheDependency() throws {
        let set = try ModelSet(
            contentsOf: try folder(
                manifest: #"{"steps": [{"from": "v1", "to": "v2", "passes": ["Model_main", "Model_User"]}]}"#))
        XCTAssertFalse(set.warnings.contains { $0.contains("file-name order") }, "\(set.warnings)")
        let plan = try MigrationPlan(storePath: "x", storeVersion: "v1", models: set)
        XCTAssertEqual(plan.stages[0].mappingModelNames, ["Model_main", "Model_User"])
        let dependency = try XCTUnwrap(
            plan.warnings.first { $0.contains("destinationInstancesForSourceRelationshipNamed:") }, "\(plan.warnings)")
        XCTAssertTrue(
            dependency.contains("pass 1 'Model_main'")
                && dependency.contains("only the later pass 2 'Model_User' makes"), dependency)
    }

    func testOneMappingModelOrPassesThatNeedNothingOfEachOtherAreNotWarnedAbout() throws {
        let folder = try folder()
        try FileManager.default.removeItem(atPath: folder + "/Model_User.mapping.json")
        let single = try ModelSet(contentsOf: folder)
        XCTAssertFalse(single.warnings.contains { $0.contains("file-name order") }, "\(single.warnings)")
        // Users mapped in the main pass too: its look-up finds them there.
        let both = Self.main.replacingOccurrences(
            of: "\"entityMappings\": [",
            with: """
                "entityMappings": [{"name": "UserToUser", "sourceEntity": "User", "destinationEntity": "User", "predicate": "TRUEPREDICATE", "attributeMappings": {"login": "$source.login"}},
                """)
        try both.write(toFile: folder + "/Model_main.mapping.json", atomically: true, encoding: .utf8)
        try Self.users.replacingOccurrences(of: "UserToUser", with: "UserAgain").write(
            toFile: folder + "/Model_User.mapping.json", atomically: true, encoding: .utf8)
        let plan = try MigrationPlan(storePath: "x", storeVersion: "v1", models: try ModelSet(contentsOf: folder))
        XCTAssertFalse(
            plan.warnings.contains { $0.contains("destinationInstancesForSourceRelationshipNamed:") },
            "\(plan.warnings)")
    }

    /// The manager of explicit passes says it too, before the run and in its report; and what it
    /// says is what happens: the owner stays empty.
    func testAManagerOfSeveralPassesSaysWhatAPassCannotFindAndTheRunShowsIt() throws {
        let m1 = try ManagedObjectModel(json: Self.v1)
        let m2 = try ManagedObjectModel(json: Self.v2)
        let users = try MappingModel(json: Self.users)
        let main = try MappingModel(json: Self.main)
        let manager = try MigrationManager(sourceModel: m1, destinationModel: m2, mappingModels: [users, main])
        let warning = try XCTUnwrap(
            manager.warnings.first { $0.contains("destinationInstancesForSourceRelationshipNamed:") },
            "\(manager.warnings)")
        XCTAssertTrue(
            warning.contains("pass 2 'mapping model 2'")
                && warning.contains("only the earlier pass 1 'mapping model 1'"), warning)
        let destination = scratch.file("out.sqlite")
        let report = try manager.migrateStore(from: try store(), to: destination)
        XCTAssertTrue(report.warnings.contains(warning))
        let out = try PersistentStore.open(at: destination, model: m2, readOnly: true)
        defer { out.close() }
        XCTAssertEqual(try fetchAll(out, "File").map { try $0.value(forKey: "owner").isNull }, [true])
        XCTAssertEqual(try fetchAll(out, "User").count, 1)
    }

    func testTheCommandLineWarnsInPlanMigrateAndCheck() throws {
        try CommandLineTool.requireBuilt()
        let folder = try folder()
        let store = try store()
        let plan = try CommandLineTool.run(["plan", store, "--models", folder])
        XCTAssertEqual(plan.status, 0, plan.err)
        XCTAssertTrue(
            plan.err.contains("warning: v1 → v2: 2 mapping models match and no 'migration-passes.json' orders them"),
            plan.err)
        XCTAssertTrue(plan.err.contains("warning: v1 → v2: pass 2 'Model_main'"), plan.err)

        let json = try CommandLineTool.run(["plan", store, "--models", folder, "--json"])
        XCTAssertEqual(json.status, 0, json.err)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.out.utf8)) as? [String: Any])
        let warnings = try XCTUnwrap(object["warnings"] as? [String])
        XCTAssertTrue(warnings.contains { $0.contains("file-name order: 1. 'Model_User'") }, "\(warnings)")
        XCTAssertTrue(warnings.contains { $0.contains("pass 2 'Model_main'") }, "\(warnings)")

        let migrate = try CommandLineTool.run([
            "migrate", store, "--models", folder, "--to", scratch.file("migrated.sqlite"), "--json",
        ])
        XCTAssertEqual(migrate.status, 0, migrate.err)
        let migrated = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(migrate.out.utf8)) as? [String: Any])
        XCTAssertTrue(
            (migrated["warnings"] as? [String] ?? []).contains { $0.contains("file-name order") }, migrate.out)

        let stores = scratch.file("stores-\(UUID().uuidString)")
        try FileManager.default.createDirectory(atPath: stores, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: store, toPath: stores + "/v1.sqlite")
        let check = try CommandLineTool.run(["check", stores, "--models", folder])
        XCTAssertEqual(check.status, 0, check.err)
        XCTAssertTrue(check.err.contains("file-name order: 1. 'Model_User'"), check.err)
        XCTAssertTrue(check.err.contains("warning: v1 → v2: pass 2 'Model_main'"), check.err)
        let checkJSON = try CommandLineTool.run(["check", stores, "--models", folder, "--json"])
        let checked = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(checkJSON.out.utf8)) as? [String: Any])
        XCTAssertTrue(
            (checked["warnings"] as? [String] ?? []).contains { $0.contains("pass 2 'Model_main'") }, checkJSON.out)
    }

    func testValidateOfSeveralPassesSaysWhatAPassCannotFind() throws {
        try CommandLineTool.requireBuilt()
        let folder = try folder()
        let result = try CommandLineTool.run([
            "validate", "--source-model", folder + "/v1.json", "--destination-model", folder + "/v2.json",
            "--mapping", folder + "/Model_User.mapping.json", "--mapping", folder + "/Model_main.mapping.json",
            "--json",
        ])
        XCTAssertEqual(result.status, 0, result.err)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(result.out.utf8)) as? [String: Any])
        XCTAssertTrue(
            (object["warnings"] as? [String] ?? []).contains {
                $0.contains("pass 2") && $0.contains("relationship 'owner'")
            }, result.out)
    }

    /// A look-up by name of an entity mapping only another pass has would find nothing (as Core
    /// Data's does for a mapping not run in that migration): refused before the run, naming both.
    func testALookUpByNameOfAnotherPassesEntityMappingIsRefusedNamingBothPasses() throws {
        let byName = Self.main.replacingOccurrences(
            of: Self.lookUpOwner,
            with:
                #"FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"UserToUser\", $source.owner)"#
        )
        XCTAssertNotEqual(byName, Self.main)
        let folder = try folder(
            manifest: #"{"steps": [{"from": "v1", "to": "v2", "passes": ["Model_main", "Model_User"]}]}"#)
        try byName.write(toFile: folder + "/Model_main.mapping.json", atomically: true, encoding: .utf8)
        XCTAssertThrowsError(
            try MigrationPlan(storePath: "x", storeVersion: "v1", models: try ModelSet(contentsOf: folder))
        ) { error in
            let error = error as? MigrationError
            XCTAssertEqual(error?.code, .invalidMapping)
            XCTAssertTrue(
                error?.message.hasPrefix(
                    "v1 → v2: pass 1 'Model_main', entity mapping 'FileToFile', property 'owner': looks up entity mapping 'UserToUser', which only the later pass 2 'Model_User' has"
                ) == true, "\(String(describing: error))")
        }
        let m1 = try ManagedObjectModel(json: Self.v1)
        let m2 = try ManagedObjectModel(json: Self.v2)
        let passes = [try MappingModel(json: Self.users), try MappingModel(json: byName)]
        XCTAssertThrowsError(try MigrationManager(sourceModel: m1, destinationModel: m2, mappingModels: passes)) {
            error in
            let error = error as? MigrationError
            XCTAssertEqual(error?.code, .invalidMapping)
            XCTAssertTrue(
                error?.message.contains("which only the earlier pass 1 'mapping model 1' has") == true,
                "\(String(describing: error))")
        }
        // Alone, the same mapping model is refused as before: the name is in no mapping model of the run.
        XCTAssertThrowsError(try MigrationManager(sourceModel: m1, destinationModel: m2, mappingModels: [passes[1]])) {
            error in
            XCTAssertTrue(
                "\(error)".contains("names entity mapping 'UserToUser', which is not in the mapping model"), "\(error)")
        }
    }
}
