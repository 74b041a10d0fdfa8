import Foundation
import XCTest

@testable import CDMigrate

/// `StoreFolder.entries(in:)`: which files of a folder are Core Data stores, told by content, and
/// why the others are skipped — what `check` and folder `migrate` both use.
final class StoreFolderTests: XCTestCase {
    var scratch: ScratchDirectory!
    var folder: String!

    override func setUpWithError() throws {
        scratch = ScratchDirectory()
        folder = scratch.file("stores")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }

    static let model = """
        {"entities": [{"name": "Person", "attributes": [{"name": "name", "type": "string", "optional": true}]}]}
        """

    func path(_ name: String) -> String { folder + "/" + name }

    func kinds() throws -> [String: StoreFolder.Entry.Kind] {
        Dictionary(uniqueKeysWithValues: try StoreFolder.entries(in: folder).map { ($0.name, $0.kind) })
    }

    func reason(_ name: String, _ kinds: [String: StoreFolder.Entry.Kind]) -> String {
        if case .skipped(let reason)? = kinds[name] { return reason }
        return "not skipped: \(String(describing: kinds[name]))"
    }

    func testStoresAreToldByContentWithTheirCompanions() throws {
        // An Apple store with its -wal and -shm, under a name without a store extension.
        let apple = try copyFixtureStore("apple-stores/renames/Example_v1.0.0.sqlite", into: scratch.path)
        for suffix in ["", "-wal", "-shm"] {
            try FileManager.default.copyItem(atPath: apple + suffix, toPath: path("Example") + suffix)
        }
        // A store of ours, with an external data folder (named after the name without extension).
        try makeStore(path("Notes.data"), try ManagedObjectModel(json: Self.model)) { _ in }
        try FileManager.default.createDirectory(
            atPath: path(".Notes_SUPPORT/_EXTERNAL_DATA"), withIntermediateDirectories: true)
        // An SQLite database that is not a Core Data store, a text file named like a store, an empty file.
        let other = try SQLiteDatabase(path: path("other.sqlite"), mode: .create)
        try other.exec("CREATE TABLE t (x); INSERT INTO t VALUES (1)")
        other.close()
        try "not a database\n".write(toFile: path("notes.sqlite"), atomically: true, encoding: .utf8)
        XCTAssertTrue(FileManager.default.createFile(atPath: path("empty.db"), contents: Data()))

        let entries = try StoreFolder.entries(in: folder)
        XCTAssertEqual(entries.map(\.name), ["Example", "Notes.data", "empty.db", "notes.sqlite", "other.sqlite"])
        let kinds = try self.kinds()
        XCTAssertEqual(kinds["Example"], .store(companions: ["Example-wal", "Example-shm"]))
        XCTAssertEqual(kinds["Notes.data"], .store(companions: [".Notes_SUPPORT"]))
        XCTAssertEqual(reason("empty.db", kinds), "an empty file")
        XCTAssertEqual(reason("notes.sqlite", kinds), "not an SQLite database")
        XCTAssertTrue(
            reason("other.sqlite", kinds).contains("without Core Data's tables"), reason("other.sqlite", kinds))
        XCTAssertEqual(entries.filter(\.isStore).map(\.path), [path("Example"), path("Notes.data")])
        // Only read: nothing was created beside the stores.
        XCTAssertEqual(
            try FileManager.default.contentsOfDirectory(atPath: folder).sorted(),
            [
                ".Notes_SUPPORT", "Example", "Example-shm", "Example-wal", "Notes.data", "empty.db", "notes.sqlite",
                "other.sqlite",
            ])
    }

    /// A store whose tables were created after the last checkpoint has them only in its -wal:
    /// still a store (read as a migration reads its source).
    func testAStoreWhoseTablesAreInItsWriteAheadLogOnlyIsAStore() throws {
        let live = scratch.file("live.sqlite")
        let database = try SQLiteDatabase(path: live, mode: .create)
        try database.exec("PRAGMA journal_mode=WAL")
        try database.exec("PRAGMA wal_autocheckpoint=0")
        try database.exec("CREATE TABLE early (x)")
        try database.exec("PRAGMA wal_checkpoint(TRUNCATE)")
        try database.exec(
            "CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER)")
        try database.exec("CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB)")
        // Copied while the connection is open: the log is not folded into the main file.
        try FileManager.default.copyItem(atPath: live, toPath: path("young.sqlite"))
        try FileManager.default.copyItem(atPath: live + "-wal", toPath: path("young.sqlite-wal"))
        database.close()
        XCTAssertGreaterThan(FileIO.size(path("young.sqlite-wal")) ?? 0, 0)
        XCTAssertEqual(try kinds()["young.sqlite"], .store(companions: ["young.sqlite-wal"]))
        XCTAssertFalse(FileIO.exists(path("young.sqlite-shm")), "nothing created beside it")
    }

    /// Folders inside are not searched and symbolic links are not followed (a link could lead out
    /// of the folder, or to a store the folder holds under its own name); hidden files, cdmigrate's
    /// own lock and temporary files, companions without their file and FIFOs are skipped too.
    func testFoldersLinksAndOtherFilesAreSkippedWithTheReason() throws {
        try makeStore(path("a.sqlite"), try ManagedObjectModel(json: Self.model)) { _ in }
        try makeStore(scratch.file("outside.sqlite"), try ManagedObjectModel(json: Self.model)) { _ in }
        try FileManager.default.createDirectory(atPath: path("nested"), withIntermediateDirectories: true)
        try makeStore(path("nested/inner.sqlite"), try ManagedObjectModel(json: Self.model)) { _ in }
        try FileManager.default.createSymbolicLink(atPath: path("inside-link"), withDestinationPath: "a.sqlite")
        try FileManager.default.createSymbolicLink(
            atPath: path("outside-link"), withDestinationPath: scratch.file("outside.sqlite"))
        try FileManager.default.createSymbolicLink(atPath: path("dangling"), withDestinationPath: "nowhere")
        try FileManager.default.createSymbolicLink(atPath: path("folder-link"), withDestinationPath: "nested")
        try FileManager.default.copyItem(atPath: path("a.sqlite"), toPath: path(".hidden.sqlite"))
        try FileManager.default.copyItem(atPath: path("a.sqlite"), toPath: path("a.sqlite.cdmigrate-tmp-1234"))
        XCTAssertTrue(FileManager.default.createFile(atPath: path("a.sqlite.cdmigrate-lock"), contents: Data()))
        XCTAssertTrue(FileManager.default.createFile(atPath: path("gone.sqlite-wal"), contents: Data("x".utf8)))
        try FileManager.default.createDirectory(atPath: path(".gone_SUPPORT"), withIntermediateDirectories: true)
        XCTAssertEqual(mkfifo(path("pipe.sqlite"), 0o600), 0)

        let kinds = try self.kinds()
        XCTAssertEqual(kinds["a.sqlite"], .store(companions: []))
        XCTAssertEqual(try StoreFolder.entries(in: folder).filter(\.isStore).map(\.name), ["a.sqlite"])
        XCTAssertEqual(reason("nested", kinds), "a folder (folders inside are not searched)")
        XCTAssertTrue(
            reason("inside-link", kinds).hasPrefix("a symbolic link to 'a.sqlite'"), reason("inside-link", kinds))
        XCTAssertTrue(reason("outside-link", kinds).contains("links in a folder are not followed"))
        XCTAssertTrue(reason("dangling", kinds).hasPrefix("a symbolic link to 'nowhere'"))
        XCTAssertTrue(reason("folder-link", kinds).hasPrefix("a symbolic link"))
        XCTAssertEqual(reason(".hidden.sqlite", kinds), "a hidden file")
        XCTAssertTrue(reason("a.sqlite.cdmigrate-tmp-1234", kinds).contains("cdmigrate's migrations make"))
        XCTAssertTrue(reason("a.sqlite.cdmigrate-lock", kinds).contains("cdmigrate's migrations make"))
        XCTAssertEqual(
            reason("gone.sqlite-wal", kinds), "SQLite's companion file of 'gone.sqlite', which is not in the folder")
        XCTAssertTrue(reason(".gone_SUPPORT", kinds).contains("external data folder"), reason(".gone_SUPPORT", kinds))
        XCTAssertEqual(reason("pipe.sqlite", kinds), "a FIFO (named pipe), not a regular file")
        XCTAssertNil(kinds["nested/inner.sqlite"])
        XCTAssertNil(kinds["inner.sqlite"])
    }

    func testAFileIsNotAFolder() throws {
        XCTAssertTrue(FileManager.default.createFile(atPath: path("file"), contents: Data()))
        XCTAssertThrowsError(try StoreFolder.entries(in: path("file"))) { error in
            XCTAssertEqual((error as? MigrationError)?.code, .io)
        }
        XCTAssertEqual(try StoreFolder.entries(in: path("")).count, 1, "a trailing slash names the same folder")
    }
}
