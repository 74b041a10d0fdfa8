import Foundation
import ReferenceMigrations
import XCTest

@testable import CDMigrate

/// `cdmigrate migrate --models … --policies LIB` and `cdmigrate check … --policies LIB`: a policy
/// library registers once, on a chain handle, and its C policy serves the step that names it. The
/// library is the C policy of examples/c/uncloudnotes.c (its source, included), built with gcc.
final class ChainPolicyLibraryTests: XCTestCase {
    var scratch: ScratchDirectory!
    static let models = ReferenceMigrations.examplesDirectory + "/" + UnCloudNotes.directory
    static let policy = "AttachmentToImageAttachmentMigrationPolicyV3toV4"

    override func setUpWithError() throws {
        try CommandLineTool.requireBuilt()
        scratch = ScratchDirectory()
    }

    func run(_ arguments: [String]) throws -> (status: Int32, out: String, err: String) {
        try CommandLineTool.run(arguments)
    }

    /// The policy library: the example's source with its `main` renamed, plus cdm_register_policies.
    func policyLibrary() throws -> String {
        let gcc = ["/usr/bin/gcc", "/usr/bin/cc", "/usr/local/bin/gcc"].first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
        guard let gcc = gcc else { throw XCTSkip("no C compiler") }
        let source = scratch.file("uncloudnotes_policies.c")
        try """
        #define main uncloudnotes_example_main
        #include "\(TestPaths.repository)/examples/c/uncloudnotes.c"
        #undef main
        int cdm_register_policies(cdm_migration *migration) {
            cdm_policy hooks = {0};
            hooks.create_destination_instances = image_attachment_create;
            return cdm_migration_register_policy(migration, "\(Self.policy)", &hooks, sizeof hooks, NULL, NULL);
        }
        """.write(toFile: source, atomically: true, encoding: .utf8)
        let library = scratch.file("libuncloudnotes.so")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: gcc)
        process.arguments = ["-shared", "-fPIC", "-I", TestPaths.repository + "/include", "-o", library, source]
        let err = Pipe()
        process.standardError = err
        try process.run()
        let message = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, message)
        return library
    }

    /// What Swift's own staged migration with the Swift policy writes.
    func swiftResult(_ source: String) throws -> [String] {
        let destination = source + ".swift.sqlite"
        let manager = try StagedMigrationManager(storeAt: source, models: try ModelSet(contentsOf: Self.models))
        manager.registerPolicy(named: Self.policy) { AttachmentToImageAttachmentMigrationPolicyV3toV4() }
        try manager.migrateStore(to: destination)
        defer { try? FileManager.default.removeItem(atPath: destination) }
        return try ConcurrentMigrationTests.dump(destination)
    }

    func testMigrateWithModelsAndPoliciesBringsEveryVersionToV4AsSwiftDoes() throws {
        let library = try policyLibrary()
        for version in 1...3 {
            let source = scratch.file("v\(version).sqlite")
            _ = try UnCloudNotes.generateSource(version: version, at: source, count: 30)
            let destination = scratch.file("v\(version)-to-v4.sqlite")
            let result = try run([
                "migrate", source, "--models", Self.models, "--to", destination, "--policies", library,
            ])
            XCTAssertEqual(result.status, 0, result.err)
            XCTAssertTrue(
                result.out.contains(
                    "(UnCloudNotes_v\(version)) → \(destination) (UnCloudNotes_v4) in \(4 - version) step"), result.out)
            XCTAssertEqual(try ConcurrentMigrationTests.dump(destination), try swiftResult(source), "from v\(version)")
        }
        // In place, through the same library.
        let store = scratch.file("in-place.sqlite")
        _ = try UnCloudNotes.generateSource(version: 3, at: store, count: 10)
        let expected = try swiftResult(store)
        let inPlace = try run([
            "migrate", store, "--models", Self.models, "--in-place", "--policies", library, "--json",
        ])
        XCTAssertEqual(inPlace.status, 0, inPlace.err)
        XCTAssertEqual(try ConcurrentMigrationTests.dump(store), expected)

        // Without the library the v3 → v4 step is refused before anything runs, naming the policy.
        let source = scratch.file("v1.sqlite")
        let without = try run(["migrate", source, "--models", Self.models, "--to", scratch.file("without.sqlite")])
        XCTAssertEqual(without.status, 1, without.err)
        XCTAssertTrue(without.err.contains(Self.policy) && without.err.contains("134170"), without.err)
        XCTAssertFalse(FileManager.default.fileExists(atPath: scratch.file("without.sqlite")))
    }

    func testCheckWithPoliciesPassesEveryReleasedStore() throws {
        let library = try policyLibrary()
        let folder = scratch.file("released")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for version in 1...4 {
            _ = try UnCloudNotes.generateSource(version: version, at: folder + "/v\(version).sqlite", count: 12)
        }
        let passing = try run(["check", folder, "--models", Self.models, "--policies", library])
        XCTAssertEqual(passing.status, 0, passing.out + passing.err)
        XCTAssertTrue(passing.out.contains("4 of 4 stores reach version UnCloudNotes_v4"), passing.out)
        XCTAssertTrue(
            passing.out.contains(
                "ok    v3.sqlite: UnCloudNotes_v3: UnCloudNotes_v3 → UnCloudNotes_v4 (UnCloudNotes_v3_to_v4)"),
            passing.out)

        let failing = try run(["check", folder, "--models", Self.models])
        XCTAssertEqual(failing.status, 1, failing.out + failing.err)
        XCTAssertTrue(failing.err.contains("FAIL  v1.sqlite") && failing.err.contains(Self.policy), failing.err)
        XCTAssertTrue(failing.out.contains("1 of 4 stores reach version UnCloudNotes_v4"), failing.out)
        let missing = try run(["check", folder, "--models", Self.models, "--policies", scratch.file("nothing.so")])
        XCTAssertEqual(missing.status, 74, missing.err)
    }
    func testAFleetRunGivesItsChildrenThePolicyLibrary() throws {
        let library = try policyLibrary()
        let folder = scratch.file("fleet")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for version in 1...3 {
            _ = try UnCloudNotes.generateSource(version: version, at: folder + "/v\(version).sqlite", count: 8)
        }
        let out = scratch.file("out")
        let result = try run([
            "migrate", folder, "--models", Self.models, "--out-dir", out, "--jobs", "2", "--policies", library,
        ])
        XCTAssertEqual(result.status, 0, result.out + result.err)
        for version in 1...3 {
            XCTAssertEqual(
                try ConcurrentMigrationTests.dump(out + "/v\(version).sqlite"),
                try swiftResult(folder + "/v\(version).sqlite"),
                "from v\(version)")
        }
        // Without the library every store that needs the policy fails on its own (exit 1).
        let without = try run([
            "migrate", folder, "--models", Self.models, "--out-dir", scratch.file("without"), "--jobs", "2",
        ])
        XCTAssertEqual(without.status, 1, without.out + without.err)
        XCTAssertTrue(without.out.contains(Self.policy), without.out)
    }
}
