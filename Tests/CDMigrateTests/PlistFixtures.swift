import CSQLite
import Foundation
import XCTest

/// Reads `Z_METADATA` from copies of the Apple-written fixture stores.
enum PlistFixtures {
    static let renamesDirectory = TestPaths.fixtures + "/apple-stores/renames"
    static let storeNames = ["Example_v1.0.0", "Example_v1.1.0", "Example_v1.1.2", "Example_v1.2.0", "Example_v2.0.0"]

    /// `(Z_UUID, Z_PLIST)` of a fixture store, read from a copy in a temporary directory.
    static func metadata(of store: String) throws -> (uuid: String, plist: [UInt8]) {
        let fm = FileManager.default
        let directory = fm.temporaryDirectory.appendingPathComponent("cdmigrate-plist-\(UUID().uuidString)")
        try fm.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? fm.removeItem(at: directory) }
        let copy = directory.appendingPathComponent(store + ".sqlite").path
        for suffix in ["", "-wal", "-shm"] {
            let source = renamesDirectory + "/" + store + ".sqlite" + suffix
            if fm.fileExists(atPath: source) { try fm.copyItem(atPath: source, toPath: copy + suffix) }
        }
        var db: OpaquePointer?
        guard sqlite3_open_v2(copy, &db, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK else {
            sqlite3_close(db)
            throw NSError(
                domain: "PlistFixtures", code: 2,
                userInfo: [NSLocalizedDescriptionKey: "cannot open \(copy): is Tests/Fixtures complete?"])
        }
        defer { sqlite3_close(db) }
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, "SELECT Z_UUID, Z_PLIST FROM Z_METADATA", -1, &statement, nil) == SQLITE_OK else {
            throw NSError(domain: "PlistFixtures", code: 1)
        }
        defer { sqlite3_finalize(statement) }
        guard sqlite3_step(statement) == SQLITE_ROW else { throw NSError(domain: "PlistFixtures", code: 2) }
        let uuid = sqlite3_column_text(statement, 0).map { String(cString: $0) } ?? ""
        let count = Int(sqlite3_column_bytes(statement, 1))
        var bytes: [UInt8] = []
        if count > 0, let blob = sqlite3_column_blob(statement, 1) {
            bytes = Array(UnsafeBufferPointer(start: blob.assumingMemoryBound(to: UInt8.self), count: count))
        }
        return (uuid, bytes)
    }
}
