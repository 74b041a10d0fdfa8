import CSQLite
import XCTest

@testable import CDMigrate

/// The files around a migration: the locked destination name, the atomic hand-over, stale
/// companion files, sources named like temporaries, and a source left exactly as it was.
final class StoreFilesTests: XCTestCase {
    static let v1 = """
        {"name": "Items", "versionIdentifier": "1", "entities": [
          {"name": "Item", "attributes": [{"name": "name", "type": "string"}, {"name": "rank", "type": "integer32"}]}]}
        """
    static let v2 = """
        {"name": "Items", "versionIdentifier": "2", "entities": [
          {"name": "Item", "attributes": [{"name": "title", "type": "string"}, {"name": "rank", "type": "integer32"}]}]}
        """
    static let mapping = """
        {"entityMappings": [{"name": "ItemToItem", "sourceEntity": "Item", "destinationEntity": "Item", "predicate": "TRUEPREDICATE",
          "attributeMappings": {"title": "$source.name", "rank": "$source.rank"}}]}
        """

    var scratch: ScratchDirectory!
    var sourceFolder: String { scratch.path + "/source" }
    var destinationFolder: String { scratch.path + "/destination" }

    override func setUpWithError() throws {
        scratch = ScratchDirectory()
        for folder in [sourceFolder, destinationFolder] {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        }
    }

    func manager() throws -> MigrationManager {
        try MigrationManager(
            sourceModel: try ManagedObjectModel(json: Self.v1),
            destinationModel: try ManagedObjectModel(json: Self.v2),
            mappingModel: try MappingModel(json: Self.mapping))
    }

    /// A v1 store of `count` items (Core Data's shape: WAL mode, log folded in on close).
    @discardableResult
    func makeSource(_ path: String, count: Int = 40) throws -> String {
        try makeStore(path, try ManagedObjectModel(json: Self.v1)) { store in
            for i in 0..<count {
                try insert(store, "Item", ["name": .string("item \(i)"), "rank": .integer(Int64(i))])
            }
        }
        return path
    }

    func titles(_ path: String) throws -> [String] {
        let store = try PersistentStore.open(at: path, model: try ManagedObjectModel(json: Self.v2))
        defer { store.close() }
        return try fetchAll(store, "Item").compactMap { try $0.value(forKey: "title").stringValue }.sorted()
    }

    /// Every file of a folder with its bytes.
    func listing(_ folder: String) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: folder) {
            files[name] = try Data(contentsOf: URL(fileURLWithPath: folder + "/" + name))
        }
        return files
    }

    /// A raw SQLite connection, as another program holding the store would have.
    func connect(_ path: String) throws -> OpaquePointer {
        var db: OpaquePointer?
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK, let handle = db else {
            sqlite3_close(db)
            throw MigrationError(.sqlite, "cannot open \(path)")
        }
        // Reading once makes it hold SQLite's locks (and, in WAL mode, the -wal and -shm) from now on.
        exec(handle, "SELECT COUNT(*) FROM sqlite_master")
        return handle
    }

    func exec(_ db: OpaquePointer, _ sql: String) {
        XCTAssertEqual(sqlite3_exec(db, sql, nil, nil, nil), SQLITE_OK, String(cString: sqlite3_errmsg(db)))
    }

    /// A WAL store whose `-wal` holds committed transactions (5 more items), as a writer killed
    /// before its checkpoint leaves it; the copy is made while the writer is still open.
    func makeSourceWithCommittedLog(_ path: String) throws {
        let original = try makeSource(scratch.file("original.sqlite"))
        let db = try connect(original)
        exec(db, "PRAGMA wal_autocheckpoint = 0")
        exec(
            db,
            "INSERT INTO ZITEM (Z_PK, Z_ENT, Z_OPT, ZNAME, ZRANK) SELECT Z_PK + 1000, Z_ENT, 1, 'logged ' || Z_PK, ZRANK FROM ZITEM WHERE Z_PK <= 5"
        )
        exec(db, "UPDATE Z_PRIMARYKEY SET Z_MAX = Z_MAX + 1000")
        try FileManager.default.copyItem(atPath: original, toPath: path)
        try FileManager.default.copyItem(atPath: original + "-wal", toPath: path + "-wal")
        sqlite3_close(db)
        XCTAssertGreaterThan(FileIO.size(path + "-wal") ?? 0, 0)
    }

    // MARK: The destination name

    func testASecondMigrationToALockedDestinationFailsAtOnceAsBusy() throws {
        let source = try makeSource(sourceFolder + "/a.sqlite")
        let destination = destinationFolder + "/b.sqlite"
        let first = try manager()
        let second = try manager()
        final class Outcome: @unchecked Sendable { var error: Error? }
        let outcome = Outcome()
        var started = false
        first.progressHandler = { _ in
            guard !started else { return true }
            started = true
            // Another manager on another thread, while the first is half-way.
            let done = DispatchSemaphore(value: 0)
            Thread {
                do { try second.migrateStore(from: source, to: destination) } catch { outcome.error = error }
                done.signal()
            }.start()
            done.wait()
            return true
        }
        try first.migrateStore(from: source, to: destination)
        guard let error = outcome.error as? MigrationError else {
            return XCTFail("the second migration must fail: \(String(describing: outcome.error))")
        }
        XCTAssertEqual(error.code, .migrationManagerDestinationStore)
        XCTAssertTrue(error.message.contains("busy") && error.message.contains(destination), error.message)
        XCTAssertEqual(try titles(destination).count, 40, "the first migration's store is whole")
        XCTAssertEqual(
            try FileManager.default.contentsOfDirectory(atPath: destinationFolder), ["b.sqlite"],
            "no lock or temporary file is left")
        // Once the first is done, the name is free again.
        try second.migrateStore(from: source, to: destinationFolder + "/c.sqlite")
    }

    func testALockFileLeftByAKilledRunNeitherBlocksNorStays() throws {
        let source = try makeSource(sourceFolder + "/a.sqlite")
        let destination = destinationFolder + "/b.sqlite"
        _ = FileManager.default.createFile(
            atPath: destination + ".cdmigrate-lock", contents: Data(DestinationLock.marker))
        try manager().migrateStore(from: source, to: destination)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: destinationFolder), ["b.sqlite"])
        // Any other file under the lock's name is locked, never removed.
        let other = Data("not a lock".utf8)
        _ = FileManager.default.createFile(atPath: destinationFolder + "/c.sqlite.cdmigrate-lock", contents: other)
        try manager().migrateStore(from: source, to: destinationFolder + "/c.sqlite")
        XCTAssertEqual(FileManager.default.contents(atPath: destinationFolder + "/c.sqlite.cdmigrate-lock"), other)
    }

    func testADestinationCreatedDuringTheRunIsNeverOverwritten() throws {
        let source = try makeSource(sourceFolder + "/a.sqlite")
        let destination = destinationFolder + "/b.sqlite"
        let precious = Data("somebody else's file".utf8)
        let m = try manager()
        m.progressHandler = { progress in
            if !FileIO.exists(destination) {
                _ = FileManager.default.createFile(atPath: destination, contents: precious)
            }
            return true
        }
        XCTAssertThrowsError(try m.migrateStore(from: source, to: destination)) { error in
            let error = error as? MigrationError
            XCTAssertEqual(error?.code, .migrationManagerDestinationStore)
            XCTAssertTrue(
                error?.message.contains("appeared") == true && error?.message.contains(destination) == true,
                error?.message ?? "")
        }
        XCTAssertEqual(
            try listing(destinationFolder), ["b.sqlite": precious],
            "the other file is untouched and nothing else is left")
    }

    func testStaleCompanionFilesBesideAnAbsentDestinationAreRefused() throws {
        let source = try makeSource(sourceFolder + "/a.sqlite")
        let destination = destinationFolder + "/b.sqlite"
        // The log of another store, which SQLite would replay onto the new one.
        try makeSourceWithCommittedLog(scratch.file("other.sqlite"))
        try FileManager.default.copyItem(atPath: scratch.file("other.sqlite-wal"), toPath: destination + "-wal")
        let before = try listing(destinationFolder)
        XCTAssertThrowsError(try manager().migrateStore(from: source, to: destination)) { error in
            let error = error as? MigrationError
            XCTAssertEqual(error?.code, .migrationManagerDestinationStore)
            XCTAssertTrue(error?.message.contains(destination + "-wal") == true, error?.message ?? "")
        }
        XCTAssertEqual(try listing(destinationFolder), before)
    }

    // MARK: Never deleting what the run did not create

    func testASourceNamedLikeATemporaryFileIsNeverDeleted() throws {
        let destination = sourceFolder + "/a.sqlite"
        for name in ["a.sqlite.cdmigrate-partial", "a.sqlite.cdmigrate-lock"] {
            let source = try makeSource(sourceFolder + "/" + name)
            let before = try listing(sourceFolder)
            // A failed run first, then a successful one.
            let failing = try manager()
            failing.progressHandler = { _ in false }
            XCTAssertThrowsError(try failing.migrateStore(from: source, to: destination))
            XCTAssertEqual(try listing(sourceFolder), before, name)
            try manager().migrateStore(from: source, to: destination)
            XCTAssertEqual(try listing(sourceFolder).filter { $0.key != "a.sqlite" }, before, name)
            XCTAssertEqual(try titles(destination).count, 40)
            try FileManager.default.removeItem(atPath: destination)
            try FileManager.default.removeItem(atPath: source)
        }
    }

    // MARK: The source left as it was

    func testTheSourceFolderIsByteIdenticalAfterASuccessAndAFailure() throws {
        let source = try makeSource(sourceFolder + "/a.sqlite")
        // A stale -shm beside it too: SQLite must not rewrite it.
        _ = FileManager.default.createFile(atPath: source + "-shm", contents: Data(repeating: 7, count: 32768))
        let before = try listing(sourceFolder)
        try manager().migrateStore(from: source, to: destinationFolder + "/ok.sqlite")
        XCTAssertEqual(try listing(sourceFolder), before, "after a success")
        XCTAssertEqual(try titles(destinationFolder + "/ok.sqlite").count, 40)
        let failing = try manager()
        failing.progressHandler = { $0.stage == .createDestinationInstances }
        XCTAssertThrowsError(try failing.migrateStore(from: source, to: destinationFolder + "/failed.sqlite"))
        XCTAssertEqual(try listing(sourceFolder), before, "after a failure")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: destinationFolder), ["ok.sqlite"])
    }

    func testCommittedTransactionsInTheSourceLogAreMigratedWithoutTouchingIt() throws {
        let source = sourceFolder + "/a.sqlite"
        try makeSourceWithCommittedLog(source)
        let before = try listing(sourceFolder)
        for pushDown in [true, false] {
            let m = try manager()
            m.pushDownSQL = pushDown
            let destination = destinationFolder + "/b\(pushDown).sqlite"
            try m.migrateStore(from: source, to: destination)
            XCTAssertEqual(
                try titles(destination).filter { $0.hasPrefix("logged") }.count, 5, "the log's transactions are read")
            XCTAssertEqual(try titles(destination).count, 45)
        }
        XCTAssertEqual(try listing(sourceFolder), before)
        XCTAssertEqual(
            Set(try FileManager.default.contentsOfDirectory(atPath: destinationFolder)),
            ["btrue.sqlite", "bfalse.sqlite"], "the private snapshot is gone")
    }

    func testASourceOpenInAnotherConnectionIsReadAtItsCommittedState() throws {
        let source = try makeSource(sourceFolder + "/a.sqlite")
        let other = try connect(source)
        defer { sqlite3_close(other) }
        exec(other, "PRAGMA wal_autocheckpoint = 0")
        exec(other, "INSERT INTO ZITEM (Z_PK, Z_ENT, Z_OPT, ZNAME, ZRANK) VALUES (500, 1, 1, 'committed', 1)")
        exec(other, "UPDATE Z_PRIMARYKEY SET Z_MAX = 500")
        exec(other, "BEGIN; INSERT INTO ZITEM (Z_PK, Z_ENT, Z_OPT, ZNAME, ZRANK) VALUES (501, 1, 1, 'uncommitted', 1)")
        let names = Set(try FileManager.default.contentsOfDirectory(atPath: sourceFolder))
        try manager().migrateStore(from: source, to: destinationFolder + "/b.sqlite")
        let migrated = try titles(destinationFolder + "/b.sqlite")
        XCTAssertTrue(migrated.contains("committed"))
        XCTAssertFalse(migrated.contains("uncommitted"))
        XCTAssertEqual(migrated.count, 41)
        XCTAssertEqual(Set(try FileManager.default.contentsOfDirectory(atPath: sourceFolder)), names)
        exec(other, "ROLLBACK")
    }

    func testASourceChangedByAnotherWriterDuringAnUnlockedReadFailsAsBusy() throws {
        let source = try makeSource(sourceFolder + "/a.sqlite")
        let destination = destinationFolder + "/b.sqlite"
        let m = try manager()
        var wrote = false
        m.progressHandler = { progress in
            // Another program writes and checkpoints into the main file while the run reads it.
            if progress.fraction >= 1, !wrote, let other = try? self.connect(source) {
                wrote = true
                self.exec(other, "UPDATE ZITEM SET ZNAME = 'changed' WHERE Z_PK = 1")
                self.exec(other, "PRAGMA wal_checkpoint(TRUNCATE)")
                sqlite3_close(other)
            }
            return true
        }
        XCTAssertThrowsError(try m.migrateStore(from: source, to: destination)) { error in
            let error = error as? MigrationError
            XCTAssertEqual(error?.code, .migrationManagerSourceStore)
            XCTAssertTrue(
                error?.message.contains("busy") == true && error?.message.contains(source) == true, error?.message ?? ""
            )
        }
        XCTAssertTrue(wrote)
        XCTAssertEqual(
            try FileManager.default.contentsOfDirectory(atPath: destinationFolder), [], "nothing is handed over")
    }

    /// Another process (python3's sqlite3) commits transactions into the WAL source the whole
    /// time: every run either migrates one committed state (each transaction adds item
    /// "written k" and sets the first item's rank to k, so a torn read would break the pairing) or
    /// fails as busy; nothing else is left beside the destinations.
    func testASourceAnotherProcessIsWritingMigratesACommittedStateOrFailsAsBusy() throws {
        let source = try makeSource(sourceFolder + "/a.sqlite")
        let script = """
            import sqlite3, sys, time
            db = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=30)
            k = 0
            while True:
                k += 1
                db.execute("BEGIN IMMEDIATE")
                db.execute("INSERT INTO ZITEM (Z_PK, Z_ENT, Z_OPT, ZNAME, ZRANK) VALUES (?, 1, 1, ?, ?)", (1000 + k, "written %d" % k, k))
                db.execute("UPDATE ZITEM SET ZRANK = ? WHERE ZNAME = 'item 0'", (k,))
                db.execute("UPDATE Z_PRIMARYKEY SET Z_MAX = ?", (1000 + k,))
                db.execute("COMMIT")
                if k == 1:
                    print("ready", flush=True)
                if k % 100 == 0:
                    db.execute("PRAGMA wal_checkpoint(PASSIVE)")
                time.sleep(0.001)
            """
        let writer = Process()
        writer.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        writer.arguments = ["python3", "-c", script, source]
        let output = Pipe()
        writer.standardOutput = output
        try writer.run()
        defer {
            writer.terminate()
            writer.waitUntilExit()
        }
        var started = ""
        while !started.contains("\n") {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            started += String(decoding: chunk, as: UTF8.self)
        }
        XCTAssertEqual(started, "ready\n", "the writer started after its first commit")

        var migrated: [Int] = []
        var busy = 0
        for run in 0..<6 {
            let destination = destinationFolder + "/b\(run).sqlite"
            do {
                try manager().migrateStore(from: source, to: destination)
            } catch let error as MigrationError {
                XCTAssertEqual(error.code, .migrationManagerSourceStore, error.message)
                XCTAssertTrue(error.message.contains("busy") && error.message.contains(source), error.message)
                XCTAssertFalse(FileManager.default.fileExists(atPath: destination))
                busy += 1
                continue
            }
            let store = try PersistentStore.open(at: destination, model: try ManagedObjectModel(json: Self.v2))
            defer { store.close() }
            var written: [Int] = []
            var firstRank: Int64?
            for item in try fetchAll(store, "Item") {
                let title = try item.value(forKey: "title").stringValue ?? ""
                if title.hasPrefix("written "), let k = Int(title.dropFirst("written ".count)) { written.append(k) }
                if title == "item 0", case .integer(let rank) = try item.value(forKey: "rank") { firstRank = rank }
            }
            XCTAssertEqual(
                written.sorted(), Array(1..<(written.count + 1)), "run \(run): a prefix of the writer's transactions")
            XCTAssertEqual(
                firstRank, Int64(written.count),
                "run \(run): the first item's rank belongs to the same transaction as the last written item")
            XCTAssertGreaterThanOrEqual(written.count, 1)
            migrated.append(written.count)
        }
        XCTAssertTrue(writer.isRunning, "the writer kept writing the whole time")
        XCTAssertGreaterThan(
            migrated.count, 0, "a store open in another process is read at its committed state (\(busy) busy)")
        XCTAssertEqual(migrated, migrated.sorted(), "each run sees at least what the run before it saw")
        let left = try FileManager.default.contentsOfDirectory(atPath: destinationFolder).filter {
            $0.contains(".cdmigrate-")
        }
        XCTAssertEqual(left, [], "no lock, temporary store or snapshot is left")
    }

    func testAHotRollbackJournalIsExplained() throws {
        let source = try makeSource(sourceFolder + "/a.sqlite")
        let db = try connect(source)
        exec(db, "PRAGMA journal_mode = DELETE")
        sqlite3_close(db)
        // A journal whose header is valid makes it hot; a writer killed mid-transaction leaves one.
        var header = [UInt8](repeating: 0, count: 512)
        header.replaceSubrange(0..<8, with: [0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7])
        _ = FileManager.default.createFile(atPath: source + "-journal", contents: Data(header))
        let before = try listing(sourceFolder)
        XCTAssertThrowsError(try manager().migrateStore(from: source, to: destinationFolder + "/b.sqlite")) { error in
            let message = (error as? MigrationError)?.message ?? ""
            XCTAssertTrue(message.contains("hot rollback journal"), message)
        }
        XCTAssertEqual(try listing(sourceFolder), before)
    }

    func testARollbackJournalSourceGetsNoFileBesideIt() throws {
        let source = try makeSource(sourceFolder + "/a.sqlite")
        let db = try connect(source)
        exec(db, "PRAGMA journal_mode = DELETE")
        sqlite3_close(db)
        let before = try listing(sourceFolder)
        try manager().migrateStore(from: source, to: destinationFolder + "/b.sqlite")
        XCTAssertEqual(try listing(sourceFolder), before)
        XCTAssertEqual(try titles(destinationFolder + "/b.sqlite").count, 40)
    }

    // MARK: In place

    func testInPlaceMigrationFoldsTheSourceLogIntoTheNewStore() throws {
        let path = sourceFolder + "/a.sqlite"
        try makeSourceWithCommittedLog(path)
        try manager().migrateStoreInPlace(at: path)
        XCTAssertEqual(try titles(path).count, 45)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: sourceFolder), ["a.sqlite"])
    }

    func testAFailedInPlaceReplacementLeavesTheStoreByteIdenticalAndSaysSo() throws {
        let path = sourceFolder + "/a.sqlite"
        try makeSourceWithCommittedLog(path)
        let before = try listing(sourceFolder)
        var other: OpaquePointer?
        let m = try manager()
        m.progressHandler = { progress in
            // Another program opens the store just before the swap.
            if progress.fraction >= 1, other == nil { other = try? self.connect(path) }
            return true
        }
        XCTAssertThrowsError(try m.migrateStoreInPlace(at: path)) { error in
            let message = (error as? MigrationError)?.message ?? "\(error)"
            XCTAssertTrue(
                message.contains("could not be replaced") && message.contains("the store is unchanged")
                    && message.contains("busy"), message)
        }
        XCTAssertNotNil(other)
        XCTAssertEqual(
            try listing(sourceFolder).filter { !$0.key.hasSuffix("-shm") }, before.filter { !$0.key.hasSuffix("-shm") },
            "main file and log byte-identical (only the other program's own -shm is new)")
        if let other = other { sqlite3_close(other) }
    }
}
