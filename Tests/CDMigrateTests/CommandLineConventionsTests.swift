import Foundation
import XCTest

@testable import CDMigrate

/// The conventions every command keeps (docs/cli.md): `--version`, the exit codes of a file that
/// is not a store and of a missing policy, `inspect --fail-on-mismatch`, hashes in base64, errors
/// summarised, `--quiet`, each warning once, JSON without `\/`, a closed pipe, completion of file
/// names, and `validate --models`.
final class CommandLineConventionsTests: XCTestCase {
    var scratch: ScratchDirectory!
    var store: String!

    override func setUpWithError() throws {
        try CommandLineTool.requireBuilt()
        scratch = ScratchDirectory()
        try CommandLineTool.writePeopleSplit(into: scratch)
        store = scratch.file("people.sqlite")
        try makeStore(store, try ManagedObjectModel(contentsOf: scratch.file("v1.json"))) { store in
            for (name, country) in [("Anna", "Sweden"), ("Matti", "Finland")] {
                try insert(store, "Person", ["name": .string(name), "country": .string(country), "age": .integer(30)])
            }
        }
    }

    func run(_ arguments: [String]) throws -> (status: Int32, out: String, err: String) {
        try CommandLineTool.run(arguments)
    }

    var models: [String] {
        [
            "--source-model", scratch.file("v1.json"), "--destination-model", scratch.file("v2.json"), "--mapping",
            scratch.file("map.json"),
        ]
    }

    func json(_ text: String) throws -> [String: Any] {
        try XCTUnwrap(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], text)
    }

    /// A folder of JSON models v1 and v2 with the two passes of PassOrderTests (a pass-dependency
    /// warning, and a relationship no mapping fills), and a v1 store.
    func passSet() throws -> (folder: String, store: String) {
        let folder = scratch.file("set")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for (name, text) in [
            ("v1.json", PassOrderTests.v1), ("v2.json", PassOrderTests.v2),
            ("Model_main.mapping.json", PassOrderTests.main), ("Model_User.mapping.json", PassOrderTests.users),
        ] {
            try text.write(toFile: folder + "/" + name, atomically: true, encoding: .utf8)
        }
        let path = scratch.file("files.sqlite")
        try makeStore(path, try ManagedObjectModel(json: PassOrderTests.v1)) { store in
            let user = try insert(store, "User", ["login": .string("ana")])
            let file = try insert(store, "File", ["title": .string("notes.txt")])
            try file.setValue(.object(user), forKey: "owner")
        }
        return (folder, path)
    }

    func warnings(_ standardError: String) -> [String] {
        standardError.split(separator: "\n").filter { $0.hasPrefix("warning: ") }.map { String($0.dropFirst(9)) }
    }

    // MARK: --version

    func testVersionPrintsTheLibrarysVersionAndExitsZero() throws {
        let expected = try String(contentsOfFile: TestPaths.repository + "/VERSION", encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let result = try run(["--version"])
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertEqual(result.out.trimmingCharacters(in: .whitespacesAndNewlines), expected)
        XCTAssertEqual(result.err, "")
    }

    // MARK: exit codes

    func testAFileThatIsNotAStoreExitsWith66InEveryCommand() throws {
        let set = try passSet()
        let text = scratch.file("notes.sqlite")
        try "these are notes, not a database\n".write(toFile: text, atomically: true, encoding: .utf8)
        let folder = scratch.file("not-stores")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: text, toPath: folder + "/notes.sqlite")
        let commands: [[String]] = [
            ["inspect", text],
            ["inspect", text, "--model", scratch.file("v1.json")],
            ["plan", text, "--models", set.folder],
            ["migrate", text, "--to", scratch.file("out1.sqlite")] + models,
            ["migrate", text, "--to", scratch.file("out2.sqlite"), "--dry-run"] + models,
            ["migrate", text, "--to", scratch.file("out3.sqlite"), "--models", set.folder],
            ["check", folder, "--models", set.folder],
        ]
        for command in commands {
            let result = try run(command)
            XCTAssertEqual(result.status, 66, "\(command.joined(separator: " ")): \(result.err)")
            if command[0] == "check" {
                // In a folder it is skipped, as not a store; a folder without a store exits with 66.
                XCTAssertTrue(result.out.contains("skip  notes.sqlite: not an SQLite database"), result.out)
                XCTAssertTrue(result.err.contains("no Core Data store in"), result.err)
            } else {
                XCTAssertTrue(result.err.contains("not a database"), result.err)
            }
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: scratch.file("out1.sqlite")))
    }

    func testAMissingPolicyHasOneCodeInValidateAndMigrate() throws {
        guard
            let compiler = ["/usr/bin/cc", "/usr/bin/gcc"].first(where: {
                FileManager.default.isExecutableFile(atPath: $0)
            })
        else {
            throw XCTSkip("no C compiler")
        }
        // A library registering another policy than the one the mapping names.
        let source = scratch.file("other.c")
        try """
        #include "cdmigrate.h"
        static int noop(cdm_context *ctx, cdm_object *source, void *user) { (void)ctx; (void)source; (void)user; return 0; }
        int cdm_register_policies(cdm_migration *migration) {
            cdm_policy hooks = {0};
            hooks.create_destination_instances = noop;
            return cdm_migration_register_policy(migration, "SomethingElse", &hooks, sizeof hooks, NULL, NULL);
        }
        """.write(toFile: source, atomically: true, encoding: .utf8)
        let library = scratch.file("libother.so")
        let build = try runProcess(
            compiler, ["-shared", "-fPIC", "-I", TestPaths.repository + "/include", "-o", library, source])
        XCTAssertEqual(build.status, 0, build.err)
        let mapping = try String(contentsOfFile: scratch.file("map.json"), encoding: .utf8)
            .replacingOccurrences(
                of: #""name": "PersonToSwede","#, with: #""name": "PersonToSwede", "policy": "OlderSwedes","#)
        try mapping.write(toFile: scratch.file("policy-map.json"), atomically: true, encoding: .utf8)
        let step = [
            "--source-model", scratch.file("v1.json"), "--destination-model", scratch.file("v2.json"), "--mapping",
            scratch.file("policy-map.json"),
        ]

        let validate = try run(["validate", "--policies", library, "--json"] + step)
        let migrate = try run(
            ["migrate", store, "--to", scratch.file("out.sqlite"), "--policies", library, "--json"] + step)
        let unhosted = try run(["migrate", store, "--to", scratch.file("out.sqlite"), "--json"] + step)
        for result in [validate, migrate, unhosted] {
            XCTAssertEqual(result.status, 1, result.out)
            XCTAssertEqual((try json(result.out)["error"] as? [String: Any])?["code"] as? Int, 134170, result.out)
            XCTAssertTrue(result.out.contains("OlderSwedes"), result.out)
        }
        // The same through a model set: validate --models and migrate --models.
        let set = scratch.file("policy-set")
        try FileManager.default.createDirectory(atPath: set, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: scratch.file("v1.json"), toPath: set + "/v1.json")
        try FileManager.default.copyItem(atPath: scratch.file("v2.json"), toPath: set + "/v2.json")
        try mapping.replacingOccurrences(
            of: #"{"entityMappings""#, with: #"{"sourceModel": "v1", "destinationModel": "v2", "entityMappings""#
        )
        .write(toFile: set + "/v1-v2.mapping.json", atomically: true, encoding: .utf8)
        let validateSet = try run(["validate", "--models", set, "--policies", library, "--json"])
        let migrateSet = try run([
            "migrate", store, "--models", set, "--to", scratch.file("set-out.sqlite"), "--policies", library, "--json",
        ])
        for result in [validateSet, migrateSet] {
            XCTAssertEqual(result.status, 1, result.out)
            XCTAssertEqual((try json(result.out)["error"] as? [String: Any])?["code"] as? Int, 134170, result.out)
            XCTAssertTrue(result.out.contains("OlderSwedes"), result.out)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: scratch.file("set-out.sqlite")))
        // Without --policies validate cannot know: it says so, and passes.
        let unchecked = try run(["validate"] + step)
        XCTAssertEqual(unchecked.status, 0, unchecked.err)
        XCTAssertTrue(
            unchecked.err.contains(
                "warning: entity mapping 'PersonToSwede' names policy 'OlderSwedes': give --policies"), unchecked.err)
    }

    // MARK: inspect

    func testInspectFailsOnAMismatchWhenAskedAndSaysWhenAStoreHasNoHashes() throws {
        let v1 = scratch.file("v1.json")
        let v2 = scratch.file("v2.json")
        XCTAssertEqual(try run(["inspect", store, "--model", v2]).status, 0, "a mismatch alone is information")
        let failed = try run(["inspect", store, "--model", v2, "--fail-on-mismatch", "--quiet"])
        XCTAssertEqual(failed.status, 66, failed.err)
        XCTAssertEqual(failed.out, "")
        XCTAssertEqual(try run(["inspect", store, "--model", v1, "--fail-on-mismatch"]).status, 0)
        XCTAssertEqual(try run(["inspect", store, "--fail-on-mismatch"]).status, 64, "nothing to compare with")
        let versions = scratch.file("versions")
        try FileManager.default.createDirectory(atPath: versions, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: v2, toPath: versions + "/v2.model.json")
        XCTAssertEqual(try run(["inspect", store, "--models", versions, "--fail-on-mismatch"]).status, 66)

        // A store whose metadata records no hashes: said once, not "not in the store" per entity.
        let bare = scratch.file("bare.sqlite")
        try FileManager.default.copyItem(atPath: store, toPath: bare)
        let sqlite = try runProcess("/usr/bin/sqlite3", [bare, "UPDATE Z_METADATA SET Z_PLIST = NULL"])
        XCTAssertEqual(sqlite.status, 0, sqlite.err)
        let result = try run(["inspect", bare, "--model", v1])
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertTrue(result.out.contains("the store records no entity version hashes"), result.out)
        XCTAssertFalse(result.out.contains("is not in the store"), result.out)
        XCTAssertTrue(result.err.contains("warning: the store '\(bare)' records no entity version hashes"), result.err)
        let document = try json(try run(["inspect", bare, "--model", v1, "--json"]).out)
        XCTAssertEqual(document["compatible"] as? Bool, false)
        XCTAssertEqual(document["differences"] as? [String], [])
        XCTAssertEqual(try run(["inspect", bare, "--model", v1, "--fail-on-mismatch"]).status, 66)
        let plan = try run(["plan", bare, "--models", versions])
        XCTAssertEqual(plan.status, 66, plan.err)
        XCTAssertTrue(plan.err.contains("records no entity version hashes"), plan.err)
        XCTAssertFalse(plan.err.contains("is not in the store"), plan.err)
    }

    func testHashesAreBase64AsCoreDataKeepsThemAndHexOnRequest() throws {
        let hash = try XCTUnwrap(StoreInfo.read(at: store).metadata.versionHashes["Person"])
        let base64 = Data(hash).base64EncodedString()
        let hex = hash.map { String(format: "%02x", $0) }.joined()
        let plain = try run(["inspect", store, "--model", scratch.file("v2.json")])
        XCTAssertTrue(plain.out.contains("Person: 2 rows  \(base64)"), plain.out)
        XCTAssertTrue(
            plain.out.contains("Person: store hash \(base64)") || plain.out.contains("Person is only in the store"),
            plain.out)
        let document = try json(try run(["inspect", store, "--json"]).out)
        XCTAssertEqual((document["entities"] as? [[String: Any]])?.first?["versionHash"] as? String, base64)
        let hexed = try run(["inspect", store, "--hex"])
        XCTAssertTrue(hexed.out.contains("Person: 2 rows  \(hex)"), hexed.out)
        // The error of a store no version of a set matches: base64 too.
        let set = try passSet()
        let plan = try run(["plan", store, "--models", set.folder])
        XCTAssertEqual(plan.status, 66, plan.err)
        XCTAssertTrue(plan.err.contains("Person \(base64)"), plan.err)
        XCTAssertFalse(plan.err.contains(hex), plan.err)
    }

    // MARK: output

    func testAnErrorWithManyProblemsShowsTheFirstFewAndJSONAllOfThem() throws {
        let attributes = (0..<8).map { #"{"name": "a\#($0)", "type": "bogus"}"# }.joined(separator: ", ")
        try #"{"entities": [{"name": "E", "attributes": [\#(attributes)]}]}"#.write(
            toFile: scratch.file("bad.json"), atomically: true, encoding: .utf8)
        let arguments = [
            "validate", "--source-model", scratch.file("bad.json"), "--destination-model", scratch.file("v2.json"),
            "--mapping", scratch.file("map.json"),
        ]
        let plain = try run(arguments)
        XCTAssertEqual(plain.status, 65, plain.err)
        XCTAssertTrue(plain.err.contains("8 problems"), plain.err)
        XCTAssertTrue(plain.err.contains("'E.a4'") && !plain.err.contains("'E.a5'"), plain.err)
        XCTAssertTrue(plain.err.contains("… and 3 more (--json lists all 8)"), plain.err)
        let document = try json(try run(arguments + ["--json"]).out)
        XCTAssertEqual(((document["error"] as? [String: Any])?["errors"] as? [Any])?.count, 8)
    }

    func testQuietPrintsErrorsOnlyInEveryCommand() throws {
        let set = try passSet()
        let stores = scratch.file("stores")
        try FileManager.default.createDirectory(atPath: stores, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: set.store, toPath: stores + "/files.sqlite")
        let commands: [[String]] = [
            ["migrate", set.store, "--models", set.folder, "--to", scratch.file("quiet-\(UUID().uuidString).sqlite")],
            ["plan", set.store, "--models", set.folder],
            ["check", stores, "--models", set.folder],
            ["validate", "--models", set.folder],
            ["validate"] + models,
            ["inspect", set.store, "--models", set.folder],
        ]
        for command in commands {
            let loud = try run(command)
            XCTAssertFalse(loud.out.isEmpty && loud.err.isEmpty, command.joined(separator: " "))
            let quiet = try run(
                command.map {
                    $0.hasSuffix(".sqlite") && $0.contains("quiet-") ? scratch.file("quiet-again.sqlite") : $0
                } + ["--quiet"])
            XCTAssertEqual(quiet.out, "", command.joined(separator: " "))
            XCTAssertEqual(quiet.err, "", command.joined(separator: " "))
        }
        let failing = try run(["inspect", scratch.file("missing.sqlite"), "--quiet"])
        XCTAssertEqual(failing.status, 74)
        XCTAssertTrue(failing.err.contains("cdmigrate: error"), failing.err)
    }

    func testEachWarningIsPrintedOnceAndPlanPrintsWhatMigrateWillSay() throws {
        let set = try passSet()
        let migrate = try run(["migrate", set.store, "--models", set.folder, "--to", scratch.file("once.sqlite")])
        XCTAssertEqual(migrate.status, 0, migrate.err)
        let printed = warnings(migrate.err)
        XCTAssertEqual(printed.filter { $0.contains("pass 2 'Model_main'") }.count, 1, migrate.err)
        XCTAssertEqual(printed.count, Set(printed).count, migrate.err)
        let plan = try run(["plan", set.store, "--models", set.folder])
        XCTAssertEqual(plan.status, 0, plan.err)
        // What migrate warns before its run, plan warns too (the run's own — losses — aside).
        let planned = Set(warnings(plan.err))
        for warning in printed where !warning.hasPrefix("lost") && !warning.contains("lost:") {
            XCTAssertTrue(planned.contains(warning), "plan does not say: \(warning)\n\(plan.err)")
        }
        let document = try json(try run(["plan", set.store, "--models", set.folder, "--json"]).out)
        XCTAssertEqual(Set(document["warnings"] as? [String] ?? []), planned)
    }

    func testAFleetPrintsItsStoresWarningsOnceAsTheOneStoreCommandDoes() throws {
        let set = try passSet()
        let stores = scratch.file("fleet")
        try FileManager.default.createDirectory(atPath: stores, withIntermediateDirectories: true)
        for name in ["a.sqlite", "b.sqlite"] {
            try FileManager.default.copyItem(atPath: set.store, toPath: stores + "/" + name)
        }
        let one = try run(["migrate", set.store, "--models", set.folder, "--to", scratch.file("one.sqlite")])
        XCTAssertEqual(one.status, 0, one.err)
        let fleet = try run([
            "migrate", stores, "--models", set.folder, "--out-dir", scratch.file("fleet-out"), "--jobs", "1",
        ])
        XCTAssertEqual(fleet.status, 0, fleet.err)
        // The reports' warnings; the losses each store's JSON line carries in full.
        XCTAssertEqual(
            warnings(fleet.err),
            warnings(one.err).filter { !$0.hasPrefix("lost: ") && !$0.contains("the mapping declares as intended") },
            fleet.err)
        XCTAssertFalse(warnings(fleet.err).isEmpty)
        let lines = try run([
            "migrate", stores, "--models", set.folder, "--out-dir", scratch.file("fleet-json"), "--jobs", "1", "--json",
        ])
        let first = try json(String(lines.out.split(separator: "\n")[0]))
        XCTAssertTrue((first["warnings"] as? [String] ?? []).contains { $0.contains("pass 2 'Model_main'") }, lines.out)
    }

    func testJSONWritesPathsWithoutEscapedSlashes() throws {
        let result = try run(["migrate", store, "--to", scratch.file("slashes.sqlite"), "--json"] + models)
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertTrue(result.out.contains(scratch.file("slashes.sqlite")), result.out)
        XCTAssertFalse(result.out.contains("\\/"), result.out)
    }

    func testAPipeClosedEarlyEndsTheCommandQuietly() throws {
        // A model large enough that its graph overflows a pipe's buffer.
        let entities = (0..<1500).map {
            #"{"name": "Entity\#($0)", "attributes": [{"name": "title", "type": "string"}, {"name": "count", "type": "integer64"}]}"#
        }
        try #"{"entities": [\#(entities.joined(separator: ", "))]}"#.write(
            toFile: scratch.file("large.json"), atomically: true, encoding: .utf8)
        let result = try runProcess(
            "/bin/sh",
            ["-c", "'\(CommandLineTool.executable)' inspect --dot --model '\(scratch.file("large.json"))' | head -n 1"])
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertTrue(result.out.hasPrefix("digraph ") && result.out.split(separator: "\n").count == 1, result.out)
        XCTAssertEqual(result.err, "")
    }

    // MARK: completion

    func testCompletionScriptsCompleteFileAndFolderNames() throws {
        let bash = try run(["--generate-completion-script", "bash"]).out
        for option in ["--source-model", "--mapping", "--models", "--policies", "--to", "--junit"] {
            XCTAssertTrue(
                bash.contains("'\(option)')\n        __cdmigrate_add_completions -f"),
                "\(option) completes no file name")
        }
        for option in ["--mappings", "--out-dir"] {
            XCTAssertTrue(
                bash.contains("'\(option)')\n        __cdmigrate_add_completions -d"),
                "\(option) completes no folder name")
        }
        let zsh = try run(["--generate-completion-script", "zsh"]).out
        XCTAssertTrue(zsh.contains("--source-model[The model the store was written with.]:path:_files"), zsh)
        let fish = try run(["--generate-completion-script", "fish"]).out
        XCTAssertTrue(fish.contains("-l 'source-model' -d 'The model the store was written with.' -rF"), fish)
    }

    // MARK: validate --models

    func testValidateWithModelsChecksEveryVersionsSteps() throws {
        let set = try passSet()
        let result = try run(["validate", "--models", set.folder, "--json"])
        XCTAssertEqual(result.status, 0, result.err)
        let document = try json(result.out)
        XCTAssertEqual(document["targetVersion"] as? String, "v2")
        XCTAssertEqual(document["steps"] as? Int, 1)
        XCTAssertTrue(
            (document["warnings"] as? [String] ?? []).contains { $0.contains("pass 2 'Model_main'") }, result.out)
        // A mapping model that does not fit its versions fails, naming it.
        try PassOrderTests.main.replacingOccurrences(
            of: #""title": "$source.title""#, with: #""nothing": "$source.title""#
        )
        .write(toFile: set.folder + "/Model_main.mapping.json", atomically: true, encoding: .utf8)
        let broken = try run(["validate", "--models", set.folder])
        XCTAssertEqual(broken.status, 65, broken.err)
        XCTAssertTrue(broken.err.contains("Model_main"), broken.err)
        XCTAssertEqual(try run(["validate", "--models", set.folder] + models).status, 64)
    }
}
