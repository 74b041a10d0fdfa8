import CSQLite
import Foundation
import XCTest

@testable import CDMigrate

/// The `cdmigrate` command with hostile files and signals: SIGTERM and SIGHUP, FIFOs, links,
/// store names that look like options, leftovers of killed runs (`cdmigrate clean`).
final class CommandLineFilesAndSignalsTests: XCTestCase {
    var scratch: ScratchDirectory!

    override func setUpWithError() throws {
        try CommandLineTool.requireBuilt()
        scratch = ScratchDirectory()
        try CommandLineTool.writePeopleSplit(into: scratch)
    }

    var models: [String] {
        [
            "--source-model", scratch.file("v1.json"), "--destination-model", scratch.file("v2.json"), "--mapping",
            scratch.file("map.json"),
        ]
    }
    var v2: ManagedObjectModel { get throws { try ManagedObjectModel(contentsOf: scratch.file("v2.json")) } }

    /// A v1 store of three people, plus `extra` more Swedes written by SQL (fast at any size).
    @discardableResult
    func makePeople(_ path: String, extra: Int = 0) throws -> String {
        try makeStore(path, try ManagedObjectModel(contentsOf: scratch.file("v1.json"))) { store in
            for (name, country) in [("Anna", "Sweden"), ("Matti", "Finland"), ("Ebba", "Sweden")] {
                try insert(store, "Person", ["name": .string(name), "country": .string(country), "age": .integer(30)])
            }
        }
        if extra > 0 {
            var db: OpaquePointer?
            guard sqlite3_open(path, &db) == SQLITE_OK, let handle = db else {
                throw MigrationError(.sqlite, "cannot open \(path)")
            }
            defer { sqlite3_close(handle) }
            let sql = """
                WITH RECURSIVE n(i) AS (SELECT 100 UNION ALL SELECT i + 1 FROM n WHERE i < \(99 + extra))
                INSERT INTO ZPERSON (Z_PK, Z_ENT, Z_OPT, ZNAME, ZCOUNTRY, ZAGE) SELECT i, (SELECT Z_ENT FROM ZPERSON LIMIT 1), 1, 'P' || i, 'Sweden', 30 FROM n;
                UPDATE Z_PRIMARYKEY SET Z_MAX = \(99 + extra) WHERE Z_NAME = 'Person';
                PRAGMA wal_checkpoint(TRUNCATE);
                """
            XCTAssertEqual(sqlite3_exec(handle, sql, nil, nil, nil), SQLITE_OK, String(cString: sqlite3_errmsg(handle)))
        }
        return path
    }

    func names(_ folder: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
    }

    /// Runs the command in `folder`.
    func run(_ arguments: [String], in folder: String) throws -> (status: Int32, out: String, err: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLineTool.executable)
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: folder)
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        let errData = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (
            process.terminationStatus, String(decoding: outData, as: UTF8.self),
            String(decoding: errData, as: UTF8.self)
        )
    }

    // MARK: Signals

    /// SIGTERM and SIGHUP, sent once the run holds its lock, stop it as Ctrl-C does: exit
    /// 128 + the signal, the lock and the temporary store removed, the destination absent.
    func testSIGTERMAndSIGHUPStopAMigrationAndCleanUp() throws {
        for (signal, status) in [(SIGTERM, Int32(143)), (SIGHUP, Int32(129))] {
            var extra = 100_000
            var stopped = false
            for _ in 0..<3 where !stopped {
                let folder = scratch.file("signal-\(signal)-\(extra)")
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
                let source = try makePeople(folder + "/people.sqlite", extra: extra)
                let destination = folder + "/out.sqlite"
                let process = Process()
                process.executableURL = URL(fileURLWithPath: CommandLineTool.executable)
                process.arguments = ["migrate", source, "--to", destination, "--quiet"] + models
                process.standardOutput = FileHandle.nullDevice
                process.standardError = FileHandle.nullDevice
                try process.run()
                // Once the lock is there, the run has begun.
                while process.isRunning && !FileIO.exists(destination + ".cdmigrate-lock") { usleep(500) }
                kill(process.processIdentifier, signal)
                process.waitUntilExit()
                if process.terminationStatus == 0 {
                    extra *= 4  // it finished first: again with a larger store
                    continue
                }
                stopped = true
                XCTAssertEqual(process.terminationReason, .exit, "handled, not killed by signal \(signal)")
                XCTAssertEqual(process.terminationStatus, status, "signal \(signal)")
                XCTAssertEqual(
                    try names(folder), ["people.sqlite"], "signal \(signal): lock and temporary store removed")
            }
            XCTAssertTrue(stopped, "signal \(signal) never arrived during a run")
        }
    }

    /// SIGTERM to a fleet run's own process reaches its running child: the child cancels and
    /// cleans up, the stores not started are skipped, the fleet exits 143.
    func testSIGTERMToAFleetStopsItsRunningChildAndSkipsTheRest() throws {
        var extra = 100_000
        var stopped = false
        for attempt in 0..<3 where !stopped {
            let folder = scratch.file("fleet-\(attempt)")
            let out = folder + "-out"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            for name in ["a", "b"] { try makePeople(folder + "/\(name).sqlite", extra: extra) }
            let process = Process()
            process.executableURL = URL(fileURLWithPath: CommandLineTool.executable)
            process.arguments = ["migrate", folder, "--out-dir", out, "--jobs", "1", "--json"] + models
            let pipe = Pipe()
            process.standardOutput = pipe
            process.standardError = FileHandle.nullDevice
            try process.run()
            while process.isRunning && !FileIO.exists(out + "/a.sqlite.cdmigrate-lock") { usleep(500) }
            kill(process.processIdentifier, SIGTERM)
            let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            if process.terminationStatus == 0 || output.contains("\"status\":\"migrated\"") {
                extra *= 4
                continue
            }
            stopped = true
            XCTAssertEqual(process.terminationStatus, 143, output)
            XCTAssertTrue(output.contains("\"skipped\":1"), output)
            XCTAssertTrue(output.contains("\"name\":\"migrationCancelled\"") || output.contains("134120"), output)
            XCTAssertEqual(try names(out), [], "the child removed its lock and temporary store")
        }
        XCTAssertTrue(stopped, "the signal never arrived during a run")
    }

    // MARK: Files that are not what they seem

    func testAFIFOAsPolicyLibraryOrModelIsRefusedAndADanglingDestinationLinkNamed() throws {
        let source = try makePeople(scratch.file("people.sqlite"))
        let fifo = scratch.file("policies.so")
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        let policies = try run(
            ["migrate", source, "--to", scratch.file("out.sqlite"), "--policies", fifo] + models, in: scratch.path)
        XCTAssertEqual(policies.status, 74, policies.err)
        XCTAssertTrue(
            policies.err.contains("the policy library '\(fifo)' is a FIFO (named pipe), not a regular file"),
            policies.err)
        let model = try run(
            [
                "migrate", source, "--to", scratch.file("out.sqlite"), "--source-model", fifo,
                "--destination-model", scratch.file("v2.json"), "--mapping", scratch.file("map.json"),
            ], in: scratch.path)
        XCTAssertNotEqual(model.status, 0)
        XCTAssertTrue(model.err.contains("FIFO"), model.err)
        let store = try run(["migrate", fifo, "--to", scratch.file("out.sqlite")] + models, in: scratch.path)
        XCTAssertEqual(store.status, 74, store.err)
        XCTAssertTrue(store.err.contains("is a FIFO (named pipe), not a regular file"), store.err)

        try FileManager.default.createSymbolicLink(
            atPath: scratch.file("dangling.sqlite"), withDestinationPath: "missing/dir/x.sqlite")
        let dangling = try run(["migrate", source, "--to", scratch.file("dangling.sqlite")] + models, in: scratch.path)
        XCTAssertEqual(dangling.status, 74, dangling.err)
        XCTAssertTrue(
            dangling.err.contains("is a symbolic link to 'missing/dir/x.sqlite', which does not exist"), dangling.err)
    }

    func testInspectDotAndDryRunReadAWALStoreWithoutAFileBesideIt() throws {
        let folder = scratch.file("ro")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let store = try makePeople(folder + "/people.sqlite")
        XCTAssertEqual(try names(folder), ["people.sqlite"])
        let result = try run(["inspect", "--dot", store], in: scratch.path)
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertTrue(result.out.hasPrefix("digraph"), result.out)
        XCTAssertEqual(try names(folder), ["people.sqlite"], "no -wal or -shm left beside it")
        let dry = try run(
            ["migrate", store, "--to", scratch.file("out.sqlite"), "--dry-run", "--json"] + models, in: scratch.path)
        XCTAssertEqual(dry.status, 0, dry.err)
        XCTAssertTrue(dry.out.contains("\"Person\": 3"), dry.out)
        XCTAssertEqual(try names(folder), ["people.sqlite"], "the dry run leaves nothing beside it either")
    }

    // MARK: Fleets

    func testFleetListLinesStartingWithADashAreStorePaths() throws {
        let folder = scratch.file("dash")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try makePeople(folder + "/-dash.sqlite")
        try makePeople(folder + "/--policies=x.so")
        try "-dash.sqlite\n--policies=x.so\n".write(toFile: folder + "/list.txt", atomically: true, encoding: .utf8)
        let result = try run(["migrate", "@list.txt", "--in-place", "--json"] + models, in: folder)
        XCTAssertEqual(result.status, 0, result.out + result.err)
        let statuses = result.out.split(separator: "\n").dropLast().compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["status"] as? String
        }
        XCTAssertEqual(statuses, ["migrated", "migrated"], result.out)
        for name in ["-dash.sqlite", "--policies=x.so"] {
            let store = try PersistentStore.open(at: folder + "/" + name, model: try v2)
            XCTAssertEqual(try fetchAll(store, "Swede").count, 2, name)
            store.close()
        }
    }

    func testAFleetInPlaceMigratesAStoreReachedThroughLinksOnce() throws {
        let folder = scratch.file("links")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try makePeople(folder + "/a.sqlite")
        try FileManager.default.createSymbolicLink(atPath: folder + "/link.sqlite", withDestinationPath: "a.sqlite")
        // Named on the command line, the store and its link are one store, migrated once.
        let result = try run(
            ["migrate", folder + "/a.sqlite", folder + "/link.sqlite", "--in-place", "--jobs", "2"] + models,
            in: scratch.path)
        XCTAssertEqual(result.status, 0, result.out + result.err)
        XCTAssertTrue(result.out.contains("(the same store as \(folder)/a.sqlite, migrated once)"), result.out)
        XCTAssertTrue(result.out.contains("2 of 2 stores migrated"), result.out)
        // In a folder given, links are not followed: the link is listed as skipped.
        let other = scratch.file("links-in-folder")
        try FileManager.default.createDirectory(atPath: other, withIntermediateDirectories: true)
        try makePeople(other + "/b.sqlite")
        try FileManager.default.createSymbolicLink(atPath: other + "/link.sqlite", withDestinationPath: "b.sqlite")
        let inFolder = try run(["migrate", other, "--in-place", "--jobs", "2"] + models, in: scratch.path)
        XCTAssertEqual(inFolder.status, 0, inFolder.out + inFolder.err)
        XCTAssertTrue(
            inFolder.out.contains("skipped  \(other)/link.sqlite: a symbolic link to 'b.sqlite' (links in a folder"),
            inFolder.out)
        XCTAssertTrue(inFolder.out.contains("1 of 1 stores migrated, 0 failed, 0 crashed, 0 skipped, 1 not stores"))
        XCTAssertEqual(
            try FileManager.default.destinationOfSymbolicLink(atPath: folder + "/link.sqlite"), "a.sqlite",
            "the link stays a link")
        XCTAssertEqual(try names(folder), ["a.sqlite", "link.sqlite"])
        let store = try PersistentStore.open(at: folder + "/a.sqlite", model: try v2)
        XCTAssertEqual(try fetchAll(store, "Swede").count, 2)
        store.close()

        // A store with two hard links is refused (replacing one name would split them), once.
        let hard = scratch.file("hard")
        try FileManager.default.createDirectory(atPath: hard, withIntermediateDirectories: true)
        try makePeople(hard + "/b.sqlite")
        XCTAssertEqual(link(hard + "/b.sqlite", hard + "/c.sqlite"), 0)
        let before = fileBytes(hard + "/b.sqlite")
        // A FIFO in the folder is skipped, with its reason (and blocks nothing).
        XCTAssertEqual(mkfifo(hard + "/pipe.sqlite", 0o600), 0)
        let refused = try run(["migrate", hard, "--in-place"] + models, in: scratch.path)
        XCTAssertTrue(
            refused.out.contains("skipped  \(hard)/pipe.sqlite: a FIFO (named pipe), not a regular file"), refused.out)
        XCTAssertEqual(refused.status, 1, refused.out + refused.err)
        XCTAssertTrue(refused.out.contains("2 names (hard links)"), refused.out)
        XCTAssertTrue(refused.out.contains("(the same store as \(hard)/b.sqlite, migrated once)"), refused.out)
        XCTAssertEqual(fileBytes(hard + "/b.sqlite"), before)
        XCTAssertEqual(fileBytes(hard + "/c.sqlite"), before)
        XCTAssertEqual(try names(hard), ["b.sqlite", "c.sqlite", "pipe.sqlite"])
    }

    // MARK: Leftovers

    func testCleanReportsThenRemovesWhatAKilledRunLeft() throws {
        let folder = scratch.file("left")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let record =
            "cdmigrate destination lock\nowner pid=2147483000 boot=- start=0\ntemporary out.sqlite.cdmigrate-Dead01\n"
        _ = FileManager.default.createFile(atPath: folder + "/out.sqlite.cdmigrate-lock", contents: Data(record.utf8))
        _ = FileManager.default.createFile(atPath: folder + "/out.sqlite.cdmigrate-Dead01", contents: Data("x".utf8))
        _ = FileManager.default.createFile(
            atPath: folder + "/out.sqlite.cdmigrate-Dead01-wal", contents: Data("x".utf8))
        _ = FileManager.default.createFile(atPath: folder + "/out.sqlite.cdmigrate-Other1", contents: Data("x".utf8))
        let report = try run(["clean", folder], in: scratch.path)
        XCTAssertEqual(report.status, 0, report.err)
        XCTAssertTrue(
            report.out.contains(
                "\(folder)/out.sqlite: a killed run (pid=2147483000 boot=- start=0) left its lock file and 1 temporary: \(folder)/out.sqlite.cdmigrate-Dead01"
            ), report.out)
        XCTAssertTrue(
            report.out.contains(
                "not recognised (no lock file records them), left alone: \(folder)/out.sqlite.cdmigrate-Other1"),
            report.out)
        XCTAssertEqual(try names(folder).count, 4, "only reported")
        let removed = try run(["clean", folder + "/out.sqlite", "--remove", "--json"], in: scratch.path)
        XCTAssertEqual(removed.status, 0, removed.err)
        let document = try XCTUnwrap(
            JSONSerialization.jsonObject(with: Data(removed.out.utf8)) as? [String: Any], removed.out)
        let result = try XCTUnwrap((document["results"] as? [[String: Any]])?.first, removed.out)
        XCTAssertEqual(result["removed"] as? Bool, true)
        XCTAssertEqual(
            try names(folder), ["out.sqlite.cdmigrate-Other1"],
            "the recorded files and the lock are gone; an unrecorded name stays")
    }
}
