#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CSQLite

/// File handling around a store: its companion files, the private file a migration writes, and
/// the hand-over that replaces a store.
enum StorePaths {
    /// SQLite's companion files: a store is these and the main file, as one.
    static let companionSuffixes = ["-wal", "-shm", "-journal"]

    /// The private file a migration builds before it is renamed into place (same directory, so the
    /// rename is atomic).
    static func partialPath(for destination: String) -> String { destination + ".cdmigrate-partial" }

    static func removeStoreFiles(_ path: String) {
        FileIO.remove(path)
        for suffix in companionSuffixes { FileIO.remove(path + suffix) }
    }

    /// Whether two paths name the same file (by device and inode when both exist).
    static func sameFile(_ a: String, _ b: String) -> Bool {
        if a == b { return true }
        var sa = stat(), sb = stat()
        guard stat(a, &sa) == 0, stat(b, &sb) == 0 else { return false }
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino
    }

    /// A path as the path part of a `file:` URI: `%`, `?` and `#` percent-escaped.
    static func uriEscaped(_ path: String) -> String {
        var text = ""
        for c in path.unicodeScalars {
            switch c {
            case "%": text += "%25"
            case "?": text += "%3f"
            case "#": text += "%23"
            default: text.unicodeScalars.append(c)
            }
        }
        return text
    }

    /// Folds a store's write-ahead log into its main file and removes the log, so that renaming
    /// another file over it cannot leave a stale -wal to be replayed onto the new store.
    static func checkpointAndRemoveLog(_ path: String) throws {
        var db: OpaquePointer?
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK, let handle = db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close(db)
            throw MigrationError(.sqlite, "cannot open '\(path)' to fold in its write-ahead log: \(message)")
        }
        defer { sqlite3_close(handle) }
        for sql in ["PRAGMA wal_checkpoint(TRUNCATE)", "PRAGMA journal_mode=DELETE"] {
            if sqlite3_exec(handle, sql, nil, nil, nil) != SQLITE_OK {
                throw MigrationError(.sqlite, "cannot fold in the write-ahead log of '\(path)': \(String(cString: sqlite3_errmsg(handle)))")
            }
        }
    }
}
