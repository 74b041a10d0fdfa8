import Foundation
import XCTest

@testable import CDMigrate

/// `cdmigrate infer`, `import`, `inspect --dot`, `--policies`, shell completion and help, run as
/// a process (the executable `swift build --build-tests` builds).
final class CommandLineToolsTests: XCTestCase {
    var scratch: ScratchDirectory!

    override func setUpWithError() throws {
        try CommandLineTool.requireBuilt()
        scratch = ScratchDirectory()
    }

    func run(_ arguments: [String]) throws -> (status: Int32, out: String, err: String) {
        try CommandLineTool.run(arguments)
    }

    func write(_ text: String, _ name: String) throws -> String {
        let path = scratch.file(name)
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Finds a program on PATH; nil when it is not installed.
    func program(_ name: String) -> String? {
        for folder in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let path = "\(folder)/\(name)"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return nil
    }

    func exec(_ program: String, _ arguments: [String]) throws -> (status: Int32, err: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        let err = Pipe()
        process.standardError = err
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let data = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    // MARK: infer

    static let withEmail = """
        {"name": "People", "versionIdentifier": "2", "entities": [
          {"name": "Person", "attributes": [{"name": "name", "type": "string"}, {"name": "country", "type": "string"},
                                            {"name": "age", "type": "integer64"}, {"name": "email", "type": "string", "default": "none"}]}
        ]}
        """

    func testInferWritesAMappingThatLoadsBackAndMigrates() throws {
        let v1 = try write(MigrationBehaviourTests.people, "v1.json")
        let v2 = try write(Self.withEmail, "v2.json")
        let mappingPath = scratch.file("inferred.json")
        let result = try run(["infer", "--source-model", v1, "--destination-model", v2, "-o", mappingPath])
        XCTAssertEqual(result.status, 0, result.err)
        let mapping = try MappingModel(contentsOf: mappingPath)
        XCTAssertEqual(mapping.entityMappings.map(\.name), ["IEM_Transform_Person"])
        // Standard output gives the same JSON.
        let printed = try run(["infer", "--source-model", v1, "--destination-model", v2])
        XCTAssertEqual(printed.out, try String(contentsOfFile: mappingPath, encoding: .utf8))

        let store = scratch.file("people.sqlite")
        try makeStore(store, try ManagedObjectModel(contentsOf: v1)) { store in
            try insert(store, "Person", ["name": .string("Anna"), "country": .string("Sweden"), "age": .integer(30)])
        }
        let migrated = try run([
            "migrate", store, "--to", scratch.file("out.sqlite"), "--source-model", v1, "--destination-model", v2,
            "--mapping", mappingPath, "--json",
        ])
        XCTAssertEqual(migrated.status, 0, migrated.err + migrated.out)
        let out = try PersistentStore.open(
            at: scratch.file("out.sqlite"), model: try ManagedObjectModel(contentsOf: v2))
        defer { out.close() }
        let people = try fetchAll(out, "Person")
        XCTAssertEqual(people.count, 1)
        XCTAssertEqual(try people.first?.value(forKey: "name"), .string("Anna"))
        XCTAssertEqual(try people.first?.value(forKey: "email"), .string("none"))
    }

    func testInferNamesWhatCannotBeInferred() throws {
        let v1 = try write(MigrationBehaviourTests.people, "v1.json")
        let v2 = try write(
            Self.withEmail.replacingOccurrences(of: #""default": "none""#, with: #""optional": false"#), "v2.json")
        let output = scratch.file("never.json")
        let result = try run(["infer", "--source-model", v1, "--destination-model", v2, "-o", output])
        XCTAssertEqual(result.status, 65)
        XCTAssertTrue(result.err.contains("'Person.email'"), result.err)
        XCTAssertTrue(result.err.contains("non-optional"), result.err)
        XCTAssertTrue(result.err.contains("134190"), result.err)
        XCTAssertFalse(FileManager.default.fileExists(atPath: output))
        let json = try run(["infer", "--source-model", v1, "--destination-model", v2, "--json"])
        let document = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.out.utf8)) as? [String: Any])
        let error = try XCTUnwrap(document["error"] as? [String: Any])
        XCTAssertEqual(error["code"] as? Int, 134190)
        let problem = try XCTUnwrap((error["errors"] as? [[String: Any]])?.first)
        XCTAssertEqual(problem["path"] as? String, "$.entities[0].attributes[3]")
    }

    // MARK: import

    func testImportWritesEveryVersionOfAnXcodeModelBundle() throws {
        let bundlePath = TestPaths.fixtures + "/xcode/UnCloudNotes/UnCloudNotesDataModel.xcdatamodeld"
        let folder = scratch.file("models")
        let result = try run(["import", bundlePath, "-o", folder])
        XCTAssertEqual(result.status, 0, result.err)
        let bundle = try XcodeModelBundle.versions(contentsOf: bundlePath)
        let set = try ModelVersionSet(contentsOf: folder)
        XCTAssertEqual(set.versionNames, bundle.versionNames)
        XCTAssertEqual(set.currentVersionName, bundle.currentVersionName)
        XCTAssertEqual(set.warnings, [])
        for name in bundle.versionNames {
            let original = try XCTUnwrap(bundle.models[name])
            let imported = try XCTUnwrap(set.models[name])
            XCTAssertEqual(imported.entityVersionHashes, original.entityVersionHashes, name)
            XCTAssertEqual(
                imported.entities.map { $0.attributes.map(\.name) },
                original.entities.map { $0.attributes.map(\.name) }, name)
        }
    }

    func testImportWritesTheBundlesMappingModelsForTheSameSteps() throws {
        let bundlePath = TestPaths.fixtures + "/xcode/UnCloudNotes/UnCloudNotesDataModel.xcdatamodeld"
        let folder = scratch.file("set")
        let result = try run(["import", bundlePath, "-o", folder, "--json"])
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertTrue(result.out.contains("UnCloudNotesMappingModel_v3_to_v4"), result.out)
        let original = try ModelSet(contentsOf: bundlePath)
        let imported = try ModelSet(contentsOf: folder)
        XCTAssertEqual(imported.versionNames, original.versionNames)
        XCTAssertEqual(
            imported.mappingModels.map(\.name),
            ["UnCloudNotesMappingModel_v2_to_v3", "UnCloudNotesMappingModel_v3_to_v4"])
        XCTAssertEqual(imported.mappingModels.map(\.kind), [.json, .json])
        XCTAssertEqual(imported.warnings, [])
        for (mine, theirs) in zip(imported.mappingModels, original.mappingModels) {
            // The JSON mapping is matched by the entity hashes it now records, to the step the
            // Xcode mapping's model paths name.
            XCTAssertFalse(mine.sourceHashes.isEmpty, mine.name)
            let step = try XCTUnwrap(ModelSetJSON.step(of: theirs, in: original))
            XCTAssertEqual(ModelSetJSON.step(of: mine, in: imported), step, mine.name)
            let source = try XCTUnwrap(original.models[step.sourceVersionName])
            let destination = try XCTUnwrap(original.models[step.destinationVersionName])
            XCTAssertEqual(
                try mine.mappingModel(source: source, destination: destination).entityMappings.map(\.name),
                try theirs.mappingModel(source: source, destination: destination).entityMappings.map(\.name))
        }
    }

    func testImportWritesThePassesManifestOfTheSet() throws {
        let fixtures = TestPaths.fixtures + "/xcode/UnCloudNotes"
        let copy = scratch.file("bundle")
        try FileManager.default.createDirectory(atPath: copy, withIntermediateDirectories: true)
        for name in [
            "UnCloudNotesDataModel.xcdatamodeld", "UnCloudNotesMappingModel_v2_to_v3.xcmappingmodel",
            "UnCloudNotesMappingModel_v3_to_v4.xcmappingmodel",
        ] {
            try FileManager.default.copyItem(atPath: fixtures + "/" + name, toPath: copy + "/" + name)
        }
        _ = try write(
            #"{"steps": [{"from": "UnCloudNotesDataModel_v3", "to": "UnCloudNotesDataModel_v4", "passes": ["UnCloudNotesMappingModel_v3_to_v4"]}]}"#,
            "bundle/migration-passes.json")
        let folder = scratch.file("with-passes")
        let result = try run(["import", copy + "/UnCloudNotesDataModel.xcdatamodeld", "-o", folder])
        XCTAssertEqual(result.status, 0, result.err)
        let original = try ModelSet(contentsOf: copy + "/UnCloudNotesDataModel.xcdatamodeld")
        let imported = try ModelSet(contentsOf: folder)
        XCTAssertEqual(imported.passOrder, original.passOrder)
        XCTAssertEqual(
            imported.passOrder[ModelSet.Step("UnCloudNotesDataModel_v3", "UnCloudNotesDataModel_v4")],
            ["UnCloudNotesMappingModel_v3_to_v4"])
    }

    func testImportLeavesOutAMappingModelOfNoPairOfTheSetsVersions() throws {
        // The 1_1_0 .momd's folder holds the Xcode mapping model from 1_0_0, a version the .momd lacks.
        let momd = TestPaths.fixtures + "/xcode/XcodeServer/1_1_0/XcodeServer.momd_precompiled"
        let folder = scratch.file("compiled-set")
        let result = try run(["import", momd, "-o", folder])
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertTrue(
            result.err.contains("MappingModel.xcmappingmodel' records no pair of the set's versions"), result.err)
        XCTAssertEqual(
            try FileManager.default.contentsOfDirectory(atPath: folder).sorted(),
            ["XcodeServer.json", "current-version"])
    }

    func testImportReadsCompiledModelsWithXcodesHashes() throws {
        let momd = TestPaths.fixtures + "/xcode/XcodeServer/1_1_0/XcodeServer.momd_precompiled"
        let folder = scratch.file("compiled")
        XCTAssertEqual(try run(["import", momd, "-o", folder]).status, 0)
        let compiled = try CompiledModelBundle(contentsOf: momd)
        let set = try ModelVersionSet(contentsOf: folder)
        XCTAssertEqual(set.currentVersionName, compiled.currentVersionName)
        XCTAssertEqual(set.currentModel?.entityVersionHashes, compiled.versionHashes[compiled.currentVersionName])
        // One .mom to one JSON model on standard output.
        let mom = try run(["import", momd + "/XcodeServer.mom"])
        XCTAssertEqual(mom.status, 0, mom.err)
        XCTAssertEqual(
            try ManagedObjectModel(json: mom.out).entityVersionHashes,
            compiled.versionHashes[compiled.currentVersionName])
        // A bundle needs a folder.
        XCTAssertEqual(try run(["import", momd]).status, 64)
    }

    func testMappingOptionTakesXcodeMappingModelsAsTheyAre() throws {
        let fixtures = TestPaths.fixtures + "/xcode/UnCloudNotes"
        let models = fixtures + "/UnCloudNotesDataModel.xcdatamodeld"
        let result = try run([
            "validate", "--json", "--source-model", models + "/UnCloudNotesDataModel_v2.xcdatamodel",
            "--destination-model", models + "/UnCloudNotesDataModel_v3.xcdatamodel",
            "--mapping", fixtures + "/UnCloudNotesMappingModel_v2_to_v3.xcmappingmodel",
        ])
        XCTAssertEqual(result.status, 0, result.err + result.out)
        XCTAssertTrue(result.out.contains("\"ok\": true") || result.out.contains("\"ok\":true"), result.out)
        // Against models it was not made for, the Xcode mapping model is refused as invalid input.
        let wrong = try run([
            "validate", "--source-model", models + "/UnCloudNotesDataModel.xcdatamodel",
            "--destination-model", models + "/UnCloudNotesDataModel_v4.xcdatamodel",
            "--mapping", fixtures + "/UnCloudNotesMappingModel_v2_to_v3.xcmappingmodel",
        ])
        XCTAssertEqual(wrong.status, 65, wrong.err)
    }

    func testImportCompilesAnXcodeMappingModelWithItsExpressionsWrittenOut() throws {
        let fixtures = TestPaths.fixtures + "/xcode/UnCloudNotes"
        let models = scratch.file("models")
        XCTAssertEqual(try run(["import", fixtures + "/UnCloudNotesDataModel.xcdatamodeld", "-o", models]).status, 0)
        let v2 = models + "/UnCloudNotesDataModel_v2.json"
        let v3 = models + "/UnCloudNotesDataModel_v3.json"
        let output = scratch.file("v2-v3.json")
        let result = try run([
            "import", fixtures + "/UnCloudNotesMappingModel_v2_to_v3.xcmappingmodel",
            "--source-model", v2, "--destination-model", v3, "-o", output,
        ])
        XCTAssertEqual(result.status, 0, result.err)
        let mapping = try MappingModel(contentsOf: output)
        let fromXcode = try MappingModel(
            contentsOf: fixtures + "/UnCloudNotesMappingModel_v2_to_v3.xcmappingmodel",
            sourceModel: try ManagedObjectModel(contentsOf: v2),
            destinationModel: try ManagedObjectModel(contentsOf: v3))
        XCTAssertEqual(mapping.entityMappings.map(\.name), fromXcode.entityMappings.map(\.name))
        for (a, b) in zip(mapping.entityMappings, fromXcode.entityMappings) {
            XCTAssertEqual(
                a.attributeMappings.map(\.valueExpressionText), b.attributeMappings.map(\.valueExpressionText), a.name)
            XCTAssertEqual(
                a.relationshipMappings.map(\.valueExpressionText), b.relationshipMappings.map(\.valueExpressionText),
                a.name)
            XCTAssertEqual(a.sourceExpressionText, b.sourceExpressionText, a.name)
        }
        // What Xcode leaves to its compiler is written out.
        let text = try String(contentsOfFile: output, encoding: .utf8)
        XCTAssertTrue(text.contains("$source."), text)
        XCTAssertTrue(text.contains("FETCH("), text)
        // It runs through validate like any mapping.
        XCTAssertEqual(
            try run(["validate", "--source-model", v2, "--destination-model", v3, "--mapping", output]).status, 0)
        // Without its models it cannot be compiled.
        XCTAssertEqual(try run(["import", fixtures + "/UnCloudNotesMappingModel_v2_to_v3.xcmappingmodel"]).status, 64)
    }

    // MARK: inspect --dot

    static let hierarchy = """
        {"name": "Notes", "entities": [
          {"name": "Attachment", "abstract": true, "attributes": [{"name": "created", "type": "date"}],
           "relationships": [{"name": "note", "destination": "Note", "inverse": "attachments"}]},
          {"name": "Image", "parent": "Attachment", "attributes": [{"name": "width", "type": "integer32", "optional": false}]},
          {"name": "Note", "attributes": [{"name": "title", "type": "string"}],
           "relationships": [{"name": "attachments", "destination": "Attachment", "inverse": "note", "toMany": true}]}
        ]}
        """

    /// Statements of a digraph as `inspect --dot` writes them: one per line between the braces.
    func assertDigraphShape(_ text: String, file: StaticString = #filePath, line: UInt = #line) {
        var lines = text.split(separator: "\n").map(String.init)
        XCTAssertTrue(
            lines.first?.hasPrefix("digraph \"") == true && lines.first?.hasSuffix("{") == true, text, file: file,
            line: line)
        XCTAssertEqual(lines.last, "}", text, file: file, line: line)
        lines = Array(lines.dropFirst().dropLast())
        let statement = try! NSRegularExpression(
            pattern: #"^  ("([^"\\]|\\.)*"( -> "([^"\\]|\\.)*")? \[.*\]|[a-z]+ \[.*\]|rankdir=LR);$"#)
        for l in lines {
            XCTAssertNotNil(
                statement.firstMatch(in: l, range: NSRange(l.startIndex..., in: l)), "not a DOT statement: \(l)",
                file: file, line: line)
        }
    }

    func testInspectDotDrawsEntitiesRelationshipsAndInheritance() throws {
        let model = try write(Self.hierarchy, "notes.json")
        let result = try run(["inspect", "--dot", "--model", model])
        XCTAssertEqual(result.status, 0, result.err)
        assertDigraphShape(result.out)
        XCTAssertTrue(result.out.contains(#""Note" -> "Attachment" [label="attachments (to-many)""#), result.out)
        XCTAssertTrue(result.out.contains(#""Attachment" -> "Note" [label="note""#), result.out)
        XCTAssertTrue(result.out.contains(#""Image" -> "Attachment" [style=dashed"#), result.out)
        XCTAssertTrue(result.out.contains(#"width: integer32 (required)\l"#), result.out)
        XCTAssertTrue(result.out.contains(#"Attachment\n(abstract)"#), result.out)
        if let dot = program("dot") {
            let file = try write(result.out, "notes.dot")
            let check = try exec(dot, ["-Tsvg", file])
            XCTAssertEqual(check.status, 0, check.err)
        }
    }

    func testInspectDotDrawsTheStoresOwnModel() throws {
        let model = try ManagedObjectModel(json: Self.hierarchy)
        let store = scratch.file("notes.sqlite")
        try makeStore(store, model) { _ in }
        let result = try run(["inspect", store, "--dot"])
        XCTAssertEqual(result.status, 0, result.err)
        assertDigraphShape(result.out)
        XCTAssertTrue(result.out.lowercased().contains("\"image\" -> \"attachment\" [style=dashed"), result.out)
        XCTAssertEqual(try run(["inspect", "--dot"]).status, 64)
        let missing = try run(["inspect", scratch.file("missing.sqlite"), "--dot"])
        XCTAssertEqual(missing.status, 74, "a missing store is an I/O failure, as python -m cdmigrate reports it")
        XCTAssertTrue(missing.err.contains("no such file"), missing.err)
    }

    // MARK: completion and help

    func testBashCompletionNamesTheSubcommands() throws {
        let result = try run(["--generate-completion-script", "bash"])
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertTrue(result.out.contains("complete "), result.out)
        for command in ["migrate", "validate", "inspect", "infer", "import"] {
            XCTAssertTrue(result.out.contains(command), "\(command) missing")
        }
        XCTAssertTrue(result.out.contains("--source-model"))
        for shell in ["zsh", "fish"] {
            XCTAssertEqual(try run(["--generate-completion-script", shell]).status, 0, shell)
        }
    }

    func testEveryCommandsHelpHasExamplesAndExitCodes() throws {
        for command in ["migrate", "validate", "inspect", "infer", "import"] {
            let help = try run(["help", command])
            XCTAssertEqual(help.status, 0, command)
            XCTAssertTrue(help.out.contains("Examples:"), "\(command): \(help.out)")
            XCTAssertTrue(help.out.contains("Exit codes"), "\(command): \(help.out)")
            XCTAssertTrue(help.out.contains("cdmigrate \(command)"), "\(command): \(help.out)")
        }
    }

    /// The exit-code table reads as written at 80 columns (the width help is laid out for when the
    /// output is no terminal): each line indented, none rewrapped.
    func testTheExitCodeTableOfEveryCommandsHelpIsNotRewrapped() throws {
        for command in ["migrate", "plan", "check", "validate", "inspect", "infer", "import", "clean", "create-store"] {
            let help = try run(["help", command])
            XCTAssertEqual(help.status, 0, command)
            let lines = help.out.split(separator: "\n", omittingEmptySubsequences: false)
            let start = try XCTUnwrap(lines.firstIndex { $0.hasSuffix("Exit codes:") }, "\(command): \(help.out)")
            let table = lines[(start + 1)...].prefix { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
            XCTAssertGreaterThanOrEqual(table.count, 8, "\(command): \(help.out)")
            for line in table {
                XCTAssertTrue(line.hasPrefix("  "), "\(command): a rewrapped line '\(line)' in\n\(help.out)")
                XCTAssertLessThanOrEqual(line.count, 80, "\(command): '\(line)'")
            }
            XCTAssertTrue(help.out.contains("the store is not at the model's version"), "\(command): \(help.out)")
        }
    }

    // MARK: --policies

    static let policySource = """
        #include "cdmigrate.h"

        /* Core Data's default, then every Swede is 99. */
        static int older_swede(cdm_context *ctx, cdm_object *source, void *user) {
            (void)user;
            cdm_object *swede = NULL;
            int rc = cdm_context_default_create_destination_instances(ctx, source, &swede);
            return rc != CDM_OK ? rc : cdm_object_set_int64(swede, "age", 99);
        }

        int cdm_register_policies(cdm_migration *migration) {
            cdm_policy hooks = {0};
            hooks.create_destination_instances = older_swede;
            return cdm_migration_register_policy(migration, "OlderSwedes", &hooks, sizeof hooks, NULL, NULL);
        }
        """

    func testPolicyLibraryRegistersCPoliciesForMigrateAndValidate() throws {
        guard let gcc = program("gcc") ?? program("cc") else { throw XCTSkip("no C compiler") }
        let source = try write(Self.policySource, "policy.c")
        let library = scratch.file("libolder.so")
        let build = try exec(gcc, ["-shared", "-fPIC", "-I", TestPaths.repository + "/include", "-o", library, source])
        XCTAssertEqual(build.status, 0, build.err)
        let empty = try write("int unrelated(void) { return 0; }\n", "empty.c")
        XCTAssertEqual(try exec(gcc, ["-shared", "-fPIC", "-o", scratch.file("libempty.so"), empty]).status, 0)

        let v1 = try write(MigrationBehaviourTests.people, "v1.json")
        let v2 = try write(MigrationBehaviourTests.split, "v2.json")
        let mapping = try write(
            """
            {"entityMappings": [
              {"name": "PersonToSwede", "sourceEntity": "Person", "destinationEntity": "Swede", "predicate": "country == 'Sweden'",
               "policy": "OlderSwedes", "attributeMappings": {"name": "$source.name", "age": "$source.age"}},
              {"name": "PersonToFinn", "sourceEntity": "Person", "destinationEntity": "Finn", "predicate": "country == 'Finland'",
               "attributeMappings": {"name": "$source.name", "age": "$source.age"}}
            ]}
            """, "map.json")
        let models = ["--source-model", v1, "--destination-model", v2, "--mapping", mapping]
        let store = scratch.file("people.sqlite")
        try makeStore(store, try ManagedObjectModel(contentsOf: v1)) { store in
            for (name, country) in [("Anna", "Sweden"), ("Matti", "Finland")] {
                try insert(store, "Person", ["name": .string(name), "country": .string(country), "age": .integer(30)])
            }
        }

        // validate: the policy must be registered by a library.
        XCTAssertEqual(try run(["validate", "--policies", library] + models).status, 0)
        let missing = try run(["validate", "--policies", scratch.file("libempty.so")] + models)
        XCTAssertEqual(missing.status, 65, "a library without cdm_register_policies")
        XCTAssertTrue(missing.err.contains("cdm_register_policies"), missing.err)
        XCTAssertEqual(try run(["validate", "--policies", scratch.file("nothing.so")] + models).status, 74)
        // The handle belongs to the command: a library that frees it is refused, not obeyed.
        let freeing = try write(
            "#include \"cdmigrate.h\"\nint cdm_register_policies(cdm_migration *m) { return cdm_migration_free(m); }\n",
            "freeing.c")
        XCTAssertEqual(
            try exec(
                gcc,
                [
                    "-shared", "-fPIC", "-I", TestPaths.repository + "/include", "-o", scratch.file("libfreeing.so"),
                    freeing,
                ]
            ).status, 0)
        let refused = try run(["validate", "--policies", scratch.file("libfreeing.so")] + models)
        XCTAssertEqual(refused.status, 65, refused.err)
        XCTAssertTrue(
            refused.err.contains("returned 101") && refused.err.contains("belongs to the program"), refused.err)

        // migrate: the C hook runs.
        let destination = scratch.file("out.sqlite")
        let result = try run(["migrate", store, "--to", destination, "--policies", library, "--quiet"] + models)
        XCTAssertEqual(result.status, 0, result.err)
        let out = try PersistentStore.open(at: destination, model: try ManagedObjectModel(contentsOf: v2))
        defer { out.close() }
        XCTAssertEqual(try fetchAll(out, "Swede").map { try $0.value(forKey: "age") }, [.integer(99)])
        XCTAssertEqual(try fetchAll(out, "Finn").map { try $0.value(forKey: "age") }, [.integer(30)])
        // Without the library the policy is missing and the migration fails, writing nothing.
        let without = try run(["migrate", store, "--to", scratch.file("x.sqlite")] + models)
        XCTAssertEqual(without.status, 1, without.err)
        XCTAssertTrue(without.err.contains("OlderSwedes"), without.err)
    }
}
