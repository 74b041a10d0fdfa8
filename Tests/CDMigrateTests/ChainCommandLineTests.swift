import Foundation
import ReferenceMigrations
import XCTest

@testable import CDMigrate

/// `cdmigrate plan`, `cdmigrate check` and `cdmigrate migrate --models`, run as a process, over
/// Apple's own stores of a model whose every version renames the attribute (inferred steps) and
/// the UnCloudNotes example (mapping models).
final class ChainCommandLineTests: XCTestCase {
    var scratch: ScratchDirectory!
    static let renames = TestPaths.fixtures + "/apple-stores/renames/Model.xcdatamodeld"
    static let versions = ["1.0.0", "1.1.0", "1.1.2", "1.2.0", "2.0.0"]

    override func setUpWithError() throws {
        try CommandLineTool.requireBuilt()
        scratch = ScratchDirectory()
    }

    func run(_ arguments: [String]) throws -> (status: Int32, out: String, err: String) {
        try CommandLineTool.run(arguments)
    }

    func store(_ version: String) throws -> String {
        try copyFixtureStore("apple-stores/renames/Example_v\(version).sqlite", into: scratch.path)
    }

    func testPlanPrintsTheStepsAsTextJSONAndDot() throws {
        let store = try self.store("1.1.0")
        let text = try run(["plan", store, "--models", Self.renames])
        XCTAssertEqual(text.status, 0, text.err)
        XCTAssertTrue(text.out.contains("is at version v1.1.0"), text.out)
        XCTAssertTrue(text.out.contains("target version v2.0.0 (current)"), text.out)
        XCTAssertTrue(text.out.contains("3 steps:"), text.out)
        XCTAssertTrue(text.out.contains("3. v1.2.0 → v2.0.0: inferred (lightweight)"), text.out)

        let json = try run(["plan", store, "--models", Self.renames, "--json", "--to-version", "v1.2.0"])
        XCTAssertEqual(json.status, 0, json.err)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.out.utf8)) as? [String: Any])
        XCTAssertEqual(object["storeVersion"] as? String, "v1.1.0")
        XCTAssertEqual(object["targetVersion"] as? String, "v1.2.0")
        let steps = try XCTUnwrap(object["steps"] as? [[String: Any]])
        XCTAssertEqual(steps.map { $0["to"] as? String }, ["v1.1.2", "v1.2.0"])
        XCTAssertEqual(steps.map { $0["inferred"] as? Bool }, [true, true])

        let dot = try run(["plan", store, "--models", Self.renames, "--dot"])
        XCTAssertEqual(dot.status, 0, dot.err)
        XCTAssertTrue(dot.out.hasPrefix("digraph migration {"), dot.out)
        XCTAssertTrue(dot.out.contains("\"v1.1.0\" [style=filled, fillcolor=lightblue, xlabel=\"store\"];"), dot.out)
        XCTAssertTrue(dot.out.contains("\"v1.2.0\" -> \"v2.0.0\" [label=\"inferred\", style=dashed];"), dot.out)
        XCTAssertFalse(dot.out.contains("\"v1.0.0\" ->"), "no step before the store's version")
    }

    func testHelpOfPlanAndCheckIsProseWithTheExitCodes() throws {
        for command in ["plan", "check"] {
            let help = try run(["help", command])
            XCTAssertEqual(help.status, 0)
            XCTAssertTrue(help.out.contains("Exit codes:") && help.out.contains("0    success"), help.out)
            XCTAssertFalse(help.out.contains("\\"), "no stray backslashes: \(help.out)")
        }
    }

    func testPlanNamesTheMappingModelsOfEachStep() throws {
        let store = scratch.file("notes-v1.sqlite")
        _ = try UnCloudNotes.generateSource(version: 1, at: store, count: 5)
        let folder = ReferenceMigrations.examplesDirectory + "/" + UnCloudNotes.directory
        let text = try run(["plan", store, "--models", folder])
        XCTAssertEqual(text.status, 0, text.err)
        XCTAssertTrue(text.out.contains("2. UnCloudNotes_v2 → UnCloudNotes_v3: UnCloudNotes_v2_to_v3"), text.out)
        XCTAssertTrue(text.out.contains("policies: AttachmentToImageAttachmentMigrationPolicyV3toV4"), text.out)
        let dot = try run(["plan", store, "--models", folder, "--dot"])
        XCTAssertTrue(
            dot.out.contains("\"UnCloudNotes_v2\" -> \"UnCloudNotes_v3\" [label=\"UnCloudNotes_v2_to_v3\"];"), dot.out)

        // A store of no version: 134130, exit 66, naming the store's entity.
        let other = try self.store("1.0.0")
        let unmatched = try run(["plan", other, "--models", folder, "--json"])
        XCTAssertEqual(unmatched.status, 66)
        XCTAssertTrue(unmatched.out.contains("BasicEntity"), unmatched.out)
        XCTAssertTrue(unmatched.out.contains("134130"), unmatched.out)
    }

    func testMigrateWithModelsRunsTheChain() throws {
        let store = try self.store("1.0.0")
        let destination = scratch.file("current.sqlite")
        let result = try run(["migrate", store, "--models", Self.renames, "--to", destination])
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertTrue(result.out.contains("(v1.0.0) → \(destination) (v2.0.0) in 4 steps"), result.out)
        let store2 = try PersistentStore.open(
            at: destination, model: try XCTUnwrap(ModelSet(contentsOf: Self.renames).currentModel), readOnly: true,
            checkVersion: true)
        XCTAssertEqual(try store2.count(FetchRequest(entityName: "BasicEntity")), 1)
        store2.close()

        let again = try run(["migrate", destination, "--models", Self.renames, "--in-place", "--json"])
        XCTAssertEqual(again.status, 0, again.err)
        XCTAssertTrue(again.out.contains("\"alreadyAtTarget\": true"), again.out)

        let both = try run([
            "migrate", store, "--models", Self.renames, "--source-model", "a.json", "--to", scratch.file("x.sqlite"),
        ])
        XCTAssertEqual(both.status, 64, both.err)
        let neither = try run(["migrate", store, "--to", scratch.file("x.sqlite")])
        XCTAssertEqual(neither.status, 64, neither.err)
    }

    func testCheckMigratesEveryStoreAndFailsWithTheFirstFailuresCode() throws {
        let folder = scratch.file("released")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for version in Self.versions {
            let copy = try store(version)
            for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: copy + suffix) {
                try FileManager.default.copyItem(atPath: copy + suffix, toPath: folder + "/v\(version).sqlite" + suffix)
            }
        }
        let passing = try run(["check", folder, "--models", Self.renames])
        XCTAssertEqual(passing.status, 0, passing.err)
        XCTAssertTrue(passing.out.contains("5 of 5 stores reach version v2.0.0"), passing.out)
        XCTAssertTrue(
            passing.out.contains(
                "ok    v1.1.2.sqlite: v1.1.2: v1.1.2 → v1.2.0 (inferred), v1.2.0 → v2.0.0 (inferred); BasicEntity 1"),
            passing.out)
        XCTAssertTrue(passing.out.contains("ok    v2.0.0.sqlite: v2.0.0, already current"), passing.out)

        // A store of another model fails (134130, exit 66); the others still pass.
        try makeStore(
            folder + "/other.sqlite",
            try ManagedObjectModel(
                json:
                    #"{"entities": [{"name": "Other", "attributes": [{"name": "x", "type": "string", "optional": true}]}]}"#
            )
        ) { _ in }
        let failing = try run(["check", folder, "--models", Self.renames])
        XCTAssertEqual(failing.status, 66, failing.out + failing.err)
        XCTAssertTrue(failing.err.contains("FAIL  other.sqlite: error 134130"), failing.err)
        XCTAssertTrue(failing.out.contains("5 of 6 stores reach version v2.0.0"), failing.out)
        let json = try run(["check", folder, "--models", Self.renames, "--json"])
        XCTAssertEqual(json.status, 66)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.out.utf8)) as? [String: Any])
        XCTAssertEqual(object["ok"] as? Bool, false)
        let stores = try XCTUnwrap(object["stores"] as? [[String: Any]])
        XCTAssertEqual(stores.filter { $0["ok"] as? Bool == true }.count, 5)
        // Only the stores are in the folder afterwards.
        XCTAssertEqual(
            try FileManager.default.contentsOfDirectory(atPath: folder).filter {
                !$0.hasSuffix("-wal") && !$0.hasSuffix("-shm")
            }.count, 6)
    }

    // MARK: The loss report

    /// The chain seen in real use: the v2 → v3 mapping model is missing, the inferred step drops
    /// `Post.color` for 1,001 posts. `migrate` says so on standard error and under --json, and
    /// --strict fails before anything is written.
    func testMigrateSaysWhatAnInferredStepLostAndStrictFails() throws {
        let models = try LossReportFixtures.chainFolder(in: scratch.path)
        let store = scratch.file("blog.sqlite")
        try LossReportFixtures.store(at: store)
        let out = scratch.file("out.sqlite")
        let plain = try run(["migrate", store, "--to", out, "--models", models])
        XCTAssertEqual(plain.status, 0, plain.err)
        XCTAssertTrue(
            plain.err.contains(
                "warning: lost: v2 → v3 (inferred): Post.color: 1001 values that no property mapping reads (entity mapping 'IEM_Transform_Post')"
            ), plain.err)

        let json = try run(["migrate", store, "--to", scratch.file("json.sqlite"), "--models", models, "--json"])
        XCTAssertEqual(json.status, 0, json.err)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.out.utf8)) as? [String: Any])
        let steps = try XCTUnwrap(object["steps"] as? [[String: Any]])
        let losses = steps.map { (($0["report"] as? [String: Any])?["losses"] as? [[String: Any]]) ?? [] }
        XCTAssertEqual(losses[0].count, 0)
        XCTAssertEqual(losses[1].count, 1)
        XCTAssertEqual(losses[1].first?["kind"] as? String, "attribute")
        XCTAssertEqual(losses[1].first?["entity"] as? String, "Post")
        XCTAssertEqual(losses[1].first?["property"] as? String, "color")
        XCTAssertEqual(losses[1].first?["entityMapping"] as? String, "IEM_Transform_Post")
        XCTAssertEqual(losses[1].first?["pass"] as? Int, 0)
        XCTAssertEqual(losses[1].first?["count"] as? Int, 1001)
        XCTAssertEqual(losses[1].first?["intended"] as? Bool, false)

        let strict = try run(["migrate", store, "--to", scratch.file("strict.sqlite"), "--models", models, "--strict"])
        XCTAssertEqual(strict.status, 1, strict.err)
        XCTAssertTrue(strict.err.contains("Post.color: 1001 values that no property mapping reads"), strict.err)
        XCTAssertFalse(FileManager.default.fileExists(atPath: scratch.file("strict.sqlite")))
        XCTAssertFalse(
            try FileManager.default.contentsOfDirectory(atPath: scratch.path).contains { $0.contains("cdmigrate-") },
            "nothing left behind")
    }

    /// One step: the summary names the loss; a mapping that declares it passes --strict, and the
    /// summary counts the intended losses in one line.
    func testMigrateOneStepSummarisesLossesAndStrictAcceptsDeclaredOnes() throws {
        let store = scratch.file("blog.sqlite")
        try LossReportFixtures.store(at: store, posts: 4)
        try LossReportFixtures.v1.write(toFile: scratch.file("v1.json"), atomically: true, encoding: .utf8)
        try LossReportFixtures.v2.write(toFile: scratch.file("v2.json"), atomically: true, encoding: .utf8)
        func mapping(_ userInfo: String) -> String {
            LossReportFixtures.v1ToV2.replacingOccurrences(
                of: #""attributeMappings": {"title": "$source.title", "color": "$source.color"}"#,
                with: #""attributeMappings": {"title": "$source.title"}"# + userInfo)
        }
        try mapping("").write(toFile: scratch.file("drops.mapping.json"), atomically: true, encoding: .utf8)
        try mapping(#", "userInfo": {"cdmigrate.intendedLosses": "color"}"#).write(
            toFile: scratch.file("declared.mapping.json"), atomically: true, encoding: .utf8)
        let step = ["--source-model", scratch.file("v1.json"), "--destination-model", scratch.file("v2.json")]
        let dropped = try run(
            ["migrate", store, "--to", scratch.file("a.sqlite"), "--mapping", scratch.file("drops.mapping.json")] + step
        )
        XCTAssertEqual(dropped.status, 0, dropped.err)
        XCTAssertTrue(
            dropped.err.contains(
                "warning: lost: Post.color: 4 values that no property mapping reads (entity mapping 'PostToPost')"),
            dropped.err)
        let refused = try run(
            [
                "migrate", store, "--to", scratch.file("b.sqlite"), "--mapping", scratch.file("drops.mapping.json"),
                "--strict", "--json",
            ] + step)
        XCTAssertEqual(refused.status, 1)
        XCTAssertTrue(refused.out.contains("\"ok\": false"), refused.out)
        XCTAssertFalse(FileManager.default.fileExists(atPath: scratch.file("b.sqlite")))
        let declared = try run(
            [
                "migrate", store, "--to", scratch.file("c.sqlite"), "--mapping", scratch.file("declared.mapping.json"),
                "--strict",
            ] + step)
        XCTAssertEqual(declared.status, 0, declared.err)
        XCTAssertFalse(declared.err.contains("lost:"), declared.err)
        XCTAssertTrue(
            declared.err.contains("warning: 1 loss the mapping declares as intended (details with --json)"),
            declared.err)
    }

    /// `check` lists each store's losses under its line, in --json per step, and --strict fails the store.
    func testCheckListsLossesPerStoreAndStrictFailsTheStore() throws {
        let models = try LossReportFixtures.chainFolder(in: scratch.path)
        let stores = scratch.file("stores")
        try FileManager.default.createDirectory(atPath: stores, withIntermediateDirectories: true)
        try LossReportFixtures.store(at: stores + "/blog-v1.sqlite", posts: 3)
        let text = try run(["check", stores, "--models", models])
        XCTAssertEqual(text.status, 0, text.err)
        XCTAssertTrue(text.out.contains("ok    blog-v1.sqlite: v1: v1 → v2 (v1-to-v2), v2 → v3 (inferred)"), text.out)
        XCTAssertTrue(
            text.out.contains(
                "      lost: v2 → v3 (inferred): Post.color: 3 values that no property mapping reads (entity mapping 'IEM_Transform_Post')"
            ), text.out)
        let json = try run(["check", stores, "--models", models, "--json"])
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.out.utf8)) as? [String: Any])
        let results = try XCTUnwrap(object["stores"] as? [[String: Any]])
        let steps = try XCTUnwrap(results.first?["steps"] as? [[String: Any]])
        let losses = steps.map { (($0["report"] as? [String: Any])?["losses"] as? [[String: Any]]) ?? [] }
        XCTAssertEqual(losses.map(\.count), [0, 1])
        XCTAssertEqual(losses[1].first?["property"] as? String, "color")
        let strict = try run(["check", stores, "--models", models, "--strict"])
        XCTAssertEqual(strict.status, 1, strict.err)
        XCTAssertTrue(
            strict.err.contains("FAIL  blog-v1.sqlite: ") && strict.err.contains("Post.color: 3 values"), strict.err)
    }
}
