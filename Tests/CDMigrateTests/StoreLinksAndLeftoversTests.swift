import CSQLite
import XCTest

@testable import CDMigrate

/// Stores reached through symbolic and hard links, files that are not regular files, the
/// permissions of migrated stores, a dangling link as destination, and what killed runs leave.
final class StoreLinksAndLeftoversTests: XCTestCase {
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
            sourceModel: try ManagedObjectModel(json: StoreFilesTests.v1),
            destinationModel: try ManagedObjectModel(json: StoreFilesTests.v2),
            mappingModel: try MappingModel(json: StoreFilesTests.mapping))
    }

    /// The helpers of StoreFilesTests: a v1 store of `count` items in Core Data's shape, one with
    /// committed transactions in its -wal, the titles of a v2 store, a folder's bytes.
    struct Files {
        let scratch: ScratchDirectory

        @discardableResult
        func makeSource(_ path: String, count: Int = 40) throws -> String {
            try makeStore(path, try ManagedObjectModel(json: StoreFilesTests.v1)) { store in
                for i in 0..<count {
                    try insert(store, "Item", ["name": .string("item \(i)"), "rank": .integer(Int64(i))])
                }
            }
            return path
        }

        func makeSourceWithCommittedLog(_ path: String) throws {
            let original = try makeSource(scratch.file("original-\(UInt32.random(in: 0...UInt32.max)).sqlite"))
            var db: OpaquePointer?
            guard sqlite3_open_v2(original, &db, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK, let handle = db else {
                throw MigrationError(.sqlite, "cannot open")
            }
            for sql in [
                "SELECT COUNT(*) FROM sqlite_master", "PRAGMA wal_autocheckpoint = 0",
                "INSERT INTO ZITEM (Z_PK, Z_ENT, Z_OPT, ZNAME, ZRANK) SELECT Z_PK + 1000, Z_ENT, 1, 'logged ' || Z_PK, ZRANK FROM ZITEM WHERE Z_PK <= 5",
                "UPDATE Z_PRIMARYKEY SET Z_MAX = Z_MAX + 1000",
            ] {
                XCTAssertEqual(sqlite3_exec(handle, sql, nil, nil, nil), SQLITE_OK)
            }
            try FileManager.default.copyItem(atPath: original, toPath: path)
            try FileManager.default.copyItem(atPath: original + "-wal", toPath: path + "-wal")
            sqlite3_close(handle)
            XCTAssertGreaterThan(FileIO.size(path + "-wal") ?? 0, 0)
        }

        func titles(_ path: String) throws -> [String] {
            let store = try PersistentStore.open(at: path, model: try ManagedObjectModel(json: StoreFilesTests.v2))
            defer { store.close() }
            return try fetchAll(store, "Item").compactMap { try $0.value(forKey: "title").stringValue }.sorted()
        }

        func listing(_ folder: String) throws -> [String: Data] {
            var files: [String: Data] = [:]
            for name in try FileManager.default.contentsOfDirectory(atPath: folder) {
                var info = stat()
                if lstat(folder + "/" + name, &info) == 0, (info.st_mode & S_IFMT) != S_IFREG {
                    files[name] = Data()
                    continue
                }
                files[name] = try Data(contentsOf: URL(fileURLWithPath: folder + "/" + name))
            }
            return files
        }
    }
    var files: Files { Files(scratch: scratch) }

    func names(_ folder: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
    }
    func mode(_ path: String) -> mode_t {
        var info = stat()
        stat(path, &info)
        return info.st_mode & 0o7777
    }

    /// Opens `path` for writing from another thread after a while, should the code under test
    /// block opening a FIFO for reading: the test then fails on its assertions instead of hanging.
    func unblockIfStuck(_ fifo: String) -> () -> Void {
        let done = DispatchSemaphore(value: 0)
        Thread {
            if done.wait(timeout: .now() + 30) == .timedOut {
                let fd = open(fifo, O_WRONLY | O_NONBLOCK)
                if fd >= 0 { close(fd) }
            }
        }.start()
        return { done.signal() }
    }

    // MARK: Symbolic links

    func testASymlinkedSourceIsReadWithItsTargetsLog() throws {
        let real = sourceFolder + "/real"
        try FileManager.default.createDirectory(atPath: real, withIntermediateDirectories: true)
        try files.makeSourceWithCommittedLog(real + "/store.sqlite")
        try FileManager.default.createSymbolicLink(
            atPath: sourceFolder + "/link.sqlite", withDestinationPath: "real/store.sqlite")
        let before = try files.listing(real)
        for pushDown in [true, false] {
            let m = try manager()
            m.pushDownSQL = pushDown
            let destination = destinationFolder + "/b\(pushDown).sqlite"
            try m.migrateStore(from: sourceFolder + "/link.sqlite", to: destination)
            XCTAssertEqual(
                try files.titles(destination).count, 45, "the committed transactions of the target's -wal are migrated")
        }
        XCTAssertEqual(try files.listing(real), before)
        XCTAssertEqual(try names(sourceFolder), ["link.sqlite", "real"], "nothing appears beside the link")
        // Reading metadata and the store's own model through the link sees the log too.
        XCTAssertEqual(try StoreInfo(contentsOf: sourceFolder + "/link.sqlite").entities.first?.rowCount, 45)
    }

    func testInPlaceThroughASymlinkMigratesTheTargetAndKeepsTheLink() throws {
        let real = sourceFolder + "/real"
        try FileManager.default.createDirectory(atPath: real, withIntermediateDirectories: true)
        try files.makeSourceWithCommittedLog(real + "/store.sqlite")
        let link = sourceFolder + "/link.sqlite"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "real/store.sqlite")
        try manager().migrateStoreInPlace(at: link)
        XCTAssertEqual(
            try FileManager.default.destinationOfSymbolicLink(atPath: link), "real/store.sqlite", "the link is kept")
        XCTAssertEqual(
            try files.titles(real + "/store.sqlite").count, 45,
            "the target is the migrated store, its log's rows included")
        XCTAssertEqual(try names(real), ["store.sqlite"], "no -wal is left beside the new store")
        XCTAssertEqual(try names(sourceFolder), ["link.sqlite", "real"])
    }

    func testInPlaceRefusesAStoreWithSeveralHardLinksAndChangesNothing() throws {
        let path = try files.makeSource(sourceFolder + "/a.sqlite")
        XCTAssertEqual(link(path, sourceFolder + "/b.sqlite"), 0)
        let before = try files.listing(sourceFolder)
        XCTAssertThrowsError(try manager().migrateStoreInPlace(at: path)) { error in
            let message = (error as? MigrationError)?.message ?? "\(error)"
            XCTAssertTrue(message.contains("2 names (hard links)"), message)
        }
        XCTAssertEqual(try files.listing(sourceFolder), before)
    }

    func testADanglingSymlinkAsDestinationIsRefusedBeforeTheRun() throws {
        let source = try files.makeSource(sourceFolder + "/a.sqlite")
        let destination = destinationFolder + "/b.sqlite"
        try FileManager.default.createSymbolicLink(atPath: destination, withDestinationPath: "nowhere/b.sqlite")
        let m = try manager()
        var ran = false
        m.progressHandler = { _ in
            ran = true
            return true
        }
        XCTAssertThrowsError(try m.migrateStore(from: source, to: destination)) { error in
            XCTAssertEqual((error as? MigrationError)?.code, .migrationManagerDestinationStore)
            let message = (error as? MigrationError)?.message ?? "\(error)"
            XCTAssertTrue(message.contains("symbolic link to 'nowhere/b.sqlite', which does not exist"), message)
            XCTAssertFalse(message.contains("appeared while the migration ran"), message)
        }
        XCTAssertFalse(ran, "refused before anything is read")
        XCTAssertEqual(try names(destinationFolder), ["b.sqlite"], "the link alone, no lock or temporary left")
    }

    // MARK: Files that are not regular files

    func testAFIFOIsRefusedAsSourceCompanionModelAndStoreBeforeItIsOpened() throws {
        let fifo = sourceFolder + "/pipe.sqlite"
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        let release = unblockIfStuck(fifo)
        defer { release() }
        func expectFIFO(_ what: String, _ body: () throws -> Void) {
            XCTAssertThrowsError(try body(), what) { error in
                let message = (error as? MigrationError)?.message ?? "\(error)"
                XCTAssertTrue(message.contains("is a FIFO (named pipe), not a regular file"), "\(what): \(message)")
            }
        }
        expectFIFO("source") { try manager().migrateStore(from: fifo, to: destinationFolder + "/b.sqlite") }
        expectFIFO("in place") { try manager().migrateStoreInPlace(at: fifo) }
        expectFIFO("metadata") { _ = try StoreInfo(contentsOf: fifo) }
        expectFIFO("store model") { _ = try ManagedObjectModel(ofStoreAt: fifo) }
        XCTAssertThrowsError(
            try PersistentStore.open(at: fifo, model: try ManagedObjectModel(json: StoreFilesTests.v1))
        ) { error in
            let message = (error as? MigrationError)?.message ?? "\(error)"
            XCTAssertTrue(message.contains("it is a FIFO (named pipe), not a regular file"), message)
        }
        let jsonFIFO = sourceFolder + "/model.json"
        XCTAssertEqual(mkfifo(jsonFIFO, 0o600), 0)
        let releaseJSON = unblockIfStuck(jsonFIFO)
        defer { releaseJSON() }
        expectFIFO("model file") { _ = try ManagedObjectModel(contentsOf: jsonFIFO) }
        expectFIFO("JSON file") { _ = try JSON.load(path: jsonFIFO) }
        // A FIFO in place of a store's -wal.
        let store = try files.makeSource(sourceFolder + "/a.sqlite")
        XCTAssertEqual(mkfifo(store + "-wal", 0o600), 0)
        let releaseLog = unblockIfStuck(store + "-wal")
        defer { releaseLog() }
        expectFIFO("-wal") { try manager().migrateStore(from: store, to: destinationFolder + "/c.sqlite") }
        XCTAssertEqual(try names(destinationFolder), [], "nothing written")
    }

    // MARK: Reads beside the store

    func testReadingAStoresModelAndMetadataCreatesNoFileBesideIt() throws {
        let path = try files.makeSource(sourceFolder + "/a.sqlite")
        XCTAssertTrue(SourceAccess.isWALHeader(path))
        let before = try files.listing(sourceFolder)
        _ = try ManagedObjectModel(ofStoreAt: path)
        _ = try StoreInfo(contentsOf: path)
        XCTAssertEqual(try files.listing(sourceFolder), before, "no -wal or -shm appears beside a WAL store")
        // With committed transactions in its -wal, they are read, and the log stays as it was.
        let logged = sourceFolder + "/logged.sqlite"
        try files.makeSourceWithCommittedLog(logged)
        let withLog = try files.listing(sourceFolder)
        let model = try ManagedObjectModel(ofStoreAt: logged)
        XCTAssertNotNil(model.entitiesByName["Item"])
        XCTAssertEqual(try files.listing(sourceFolder), withLog)
    }

    // MARK: Permissions

    func testNewStoresFollowTheUmaskAndInPlaceKeepsTheStoresMode() throws {
        let source = try files.makeSource(sourceFolder + "/a.sqlite")
        let previous = umask(0o022)
        defer { umask(previous) }
        try manager().migrateStore(from: source, to: destinationFolder + "/b.sqlite")
        XCTAssertEqual(mode(destinationFolder + "/b.sqlite"), 0o644)
        umask(0o027)
        try manager().migrateStore(from: source, to: destinationFolder + "/c.sqlite")
        XCTAssertEqual(mode(destinationFolder + "/c.sqlite"), 0o640)
        // In place: the store's own mode, owner and group.
        XCTAssertEqual(chmod(source, 0o664), 0)
        XCTAssertEqual(chown(source, getuid(), 12345), 0, "the tests run as root, so the group can be any")
        try manager().migrateStoreInPlace(at: source)
        XCTAssertEqual(mode(source), 0o664)
        var info = stat()
        stat(source, &info)
        XCTAssertEqual(info.st_gid, 12345)
        XCTAssertEqual(try files.titles(source).count, 40)
        // A folder beside a store (external data) takes the same call: 0777 masked, or the one it replaces.
        let folder = destinationFolder + "/support"
        XCTAssertEqual(mkdir(folder, 0o700), 0)
        StoreFiles.applyPermissions(to: folder, replacing: nil)
        XCTAssertEqual(mode(folder), 0o750)
        let old = destinationFolder + "/old-support"
        XCTAssertEqual(mkdir(old, 0o775), 0)
        XCTAssertEqual(chmod(old, 0o775), 0)
        StoreFiles.applyPermissions(to: folder, replacing: old)
        XCTAssertEqual(mode(folder), 0o775)
    }

    // MARK: Leftovers of killed runs

    func testTheLockRecordsItsOwnerAndTemporariesWhileTheRunHoldsIt() throws {
        let source = try files.makeSource(sourceFolder + "/a.sqlite")
        let destination = destinationFolder + "/b.sqlite"
        let m = try manager()
        var seen = ""
        m.progressHandler = { _ in
            if seen.isEmpty { seen = String(decoding: fileBytes(destination + ".cdmigrate-lock") ?? [], as: UTF8.self) }
            return true
        }
        try m.migrateStore(from: source, to: destination)
        let lines = seen.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.first, "cdmigrate destination lock", seen)
        XCTAssertTrue(
            lines.count > 2 && lines[1].hasPrefix("owner pid=\(getpid()) boot=") && lines[1].contains(" start="), seen)
        XCTAssertTrue(lines.contains { $0.hasPrefix("temporary b.sqlite.cdmigrate-") }, seen)
        XCTAssertEqual(try names(destinationFolder), ["b.sqlite"])
    }

    func testTheNextRunRemovesWhatADeadRunRecordedAndNothingElse() throws {
        let source = try files.makeSource(sourceFolder + "/a.sqlite")
        let destination = destinationFolder + "/b.sqlite"
        let lock = destination + ".cdmigrate-lock"
        let record = """
            cdmigrate destination lock
            owner pid=2147483000 boot=00000000-0000-0000-0000-000000000000 start=1
            temporary b.sqlite.cdmigrate-Dead01
            temporary b.sqlite.cdmigrate-Dead01.cdmigrate-Snap01
            temporary b.sqlite.cdmigrate-stages-Dead02
            temporary ../source/a.sqlite
            temporary other.sqlite

            """
        _ = FileManager.default.createFile(atPath: lock, contents: Data(record.utf8))
        for name in [
            "b.sqlite.cdmigrate-Dead01", "b.sqlite.cdmigrate-Dead01-wal", "b.sqlite.cdmigrate-Dead01.cdmigrate-Snap01",
            "b.sqlite.cdmigrate-Dead01.cdmigrate-Snap01-shm", "b.sqlite.cdmigrate-User01", "other.sqlite",
        ] {
            _ = FileManager.default.createFile(atPath: destinationFolder + "/" + name, contents: Data("x".utf8))
        }
        try FileManager.default.createDirectory(
            atPath: destinationFolder + "/b.sqlite.cdmigrate-stages-Dead02", withIntermediateDirectories: false)
        _ = FileManager.default.createFile(
            atPath: destinationFolder + "/b.sqlite.cdmigrate-stages-Dead02/stage-1.sqlite", contents: Data("x".utf8))

        // Reported first, nothing removed.
        let found = try DestinationLock.leftovers(of: destination, remove: false)
        XCTAssertFalse(found.inUse)
        XCTAssertTrue(found.isRecord)
        XCTAssertEqual(found.owner, "pid=2147483000 boot=00000000-0000-0000-0000-000000000000 start=1")
        XCTAssertEqual(
            found.files.map { URL(fileURLWithPath: $0).lastPathComponent },
            [
                "b.sqlite.cdmigrate-Dead01", "b.sqlite.cdmigrate-Dead01.cdmigrate-Snap01",
                "b.sqlite.cdmigrate-stages-Dead02",
            ])
        XCTAssertTrue(FileIO.exists(destinationFolder + "/b.sqlite.cdmigrate-Dead01"))

        try manager().migrateStore(from: source, to: destination)
        XCTAssertEqual(
            try names(destinationFolder), ["b.sqlite", "b.sqlite.cdmigrate-User01", "other.sqlite"],
            "the dead run's recorded files are gone; an unrecorded name and names outside the pattern stay")
        XCTAssertEqual(try files.titles(destination).count, 40)
    }

    func testCleanRemovesADeadRunsLeftoversAndLeavesALiveLockAlone() throws {
        let destination = destinationFolder + "/b.sqlite"
        let lock = destination + ".cdmigrate-lock"
        _ = FileManager.default.createFile(
            atPath: lock,
            contents: Data(
                "cdmigrate destination lock\nowner pid=2147483000 boot=- start=0\ntemporary b.sqlite.cdmigrate-Dead01\n"
                    .utf8))
        _ = FileManager.default.createFile(
            atPath: destinationFolder + "/b.sqlite.cdmigrate-Dead01", contents: Data("x".utf8))
        // While a live run holds it: in use, untouched.
        let held = try DestinationLock.acquire(for: destinationFolder + "/c.sqlite")
        let live = try DestinationLock.leftovers(of: destinationFolder + "/c.sqlite", remove: true)
        XCTAssertTrue(live.inUse)
        XCTAssertTrue(FileIO.exists(destinationFolder + "/c.sqlite.cdmigrate-lock"))
        held.release()
        let removed = try DestinationLock.leftovers(of: destination, remove: true)
        XCTAssertEqual(removed.files.count, 1)
        XCTAssertEqual(try names(destinationFolder), [])
    }
}
