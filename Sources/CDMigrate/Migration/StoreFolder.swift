#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The stores of a folder, told by their content: what `cdmigrate check FOLDER` checks and what a
/// folder given to `cdmigrate migrate` (with `--out-dir` or `--in-place`) migrates.
///
/// A file of the folder is a store when it is an SQLite database holding Core Data's own tables,
/// `Z_METADATA` (the store's metadata) and `Z_PRIMARYKEY` (its entities), whatever its name.
/// SQLite's companions (`NAME-wal`, `NAME-shm`, `NAME-journal`) and Core Data's external data
/// folder (`.BASE_SUPPORT`, BASE being the file name without its extension) belong to the file
/// beside them. Everything else is skipped with the reason: a file that is not an SQLite
/// database, an SQLite database without Core Data's tables, one that cannot be read, a folder
/// (folders inside are not searched), a symbolic link (not followed: a link could lead out of
/// the folder, or to a store the folder holds already), a FIFO or device, a hidden file, the
/// lock and temporary files of cdmigrate's own migrations, a companion whose file is missing.
///
/// The files are only read: the probe opens each database without creating or changing any file
/// beside it (the main file alone first, as SQLite's `immutable` opening does; where Core Data's
/// tables are not there yet but a write-ahead log holds transactions, the store is read as a
/// migration reads its source, `SourceAccess`).
///
/// Core Data counterpart: none — Core Data opens the stores an app names. The tables are those
/// every Core Data SQLite store has ("How Core Data Saves Data in SQLite",
/// https://fatbobman.com/en/posts/tables_and_fields_of_coredata/).
package enum StoreFolder {
    /// One name of the folder: a store (with its companions) or a file skipped, and why.
    package struct Entry: Equatable {
        package enum Kind: Equatable {
            /// A Core Data store; `companions` are the names of the folder that belong to it
            /// (`-wal`, `-shm`, `-journal`, the `.BASE_SUPPORT` folder).
            case store(companions: [String])
            /// Not a store: `reason` says what it is instead.
            case skipped(reason: String)
        }

        /// The name in the folder.
        package var name: String
        /// The folder's path and the name.
        package var path: String
        package var kind: Kind

        /// Whether the entry is a store.
        package var isStore: Bool {
            if case .store = kind { return true }
            return false
        }

        /// Why the entry is skipped; nil for a store.
        package var skipReason: String? {
            if case .skipped(let reason) = kind { return reason }
            return nil
        }
    }

    /// SQLite's files beside a database, by the suffix of their names.
    package static let companionSuffixes = ["-wal", "-shm", "-journal"]

    /// Every name directly in `folder` (hidden ones included), in name order, each a store or
    /// skipped with the reason; companions appear with their store, not as entries of their own.
    /// - Parameter folder: the folder (a symbolic link to a folder is followed: it is the folder given).
    /// - Throws: `MigrationError` `.io` when `folder` is not a folder or cannot be read.
    package static func entries(in folder: String) throws -> [Entry] {
        guard FileIO.isDirectory(folder) else { throw MigrationError(.io, "'\(folder)' is not a folder") }
        let names = try FileIO.directoryEntries(path: folder)
        let present = Set(names)
        let prefix = folder.hasSuffix("/") ? folder : folder + "/"
        // The external data folder of each file whose base name it carries.
        var supportFolders: [String: String] = [:]
        for name in names where !name.hasPrefix(".") && companionOwner(name) == nil {
            let folderPath = ExternalBinaryData.supportFolder(forStore: prefix + name)
            let support = folderPath.lastIndex(of: "/").map { String(folderPath[folderPath.index(after: $0)...]) } ?? ""
            if present.contains(support) && supportFolders[name] == nil && FileIO.isDirectory(prefix + support) {
                supportFolders[name] = support
            }
        }
        let claimedSupport = Set(supportFolders.values)
        var entries: [Entry] = []
        for name in names {
            if let owner = companionOwner(name), present.contains(owner) { continue }
            if claimedSupport.contains(name) { continue }
            let path = prefix + name
            if let reason = reasonSkipped(name: name, path: path, present: present) {
                entries.append(Entry(name: name, path: path, kind: .skipped(reason: reason)))
                continue
            }
            var companions = companionSuffixes.map { name + $0 }.filter(present.contains)
            if let support = supportFolders[name] { companions.append(support) }
            if let reason = reasonNotAStore(path) {
                entries.append(Entry(name: name, path: path, kind: .skipped(reason: reason)))
            } else {
                entries.append(Entry(name: name, path: path, kind: .store(companions: companions)))
            }
        }
        return entries
    }

    /// Why the regular file at `path` is not a Core Data store; nil when it is one. The file is
    /// only read (see the type's comment); a store at another model's version, or one whose
    /// metadata is damaged, is still a store (its migration says what is wrong with it).
    package static func reasonNotAStore(_ path: String) -> String? {
        let header = headerBytes(path, count: sqliteHeader.count)
        let log = FileIO.size(path + "-wal") ?? 0
        if header.isEmpty && log == 0 { return "an empty file" }
        if !header.isEmpty && header != sqliteHeader { return "not an SQLite database" }
        var firstError: MigrationError?
        if !header.isEmpty {
            do {
                if try hasCoreDataTables(path, uri: "file:" + StoreFiles.uriEscaped(path) + "?immutable=1") {
                    return nil
                }
            } catch {
                firstError = asMigrationError(error)
            }
        }
        // Tables created since the last checkpoint are in the write-ahead log: read it as a source.
        if log > 0 {
            do {
                let access = try SourceAccess.prepare(source: path, scratchBeside: SourceAccess.temporaryScratch)
                defer { access.removeSnapshot() }
                if try hasCoreDataTables(path, uri: access.uri) { return nil }
                firstError = nil
            } catch {
                firstError = firstError ?? asMigrationError(error)
            }
        }
        if let error = firstError { return "an SQLite database that cannot be read: \(error.message)" }
        return "an SQLite database without Core Data's tables (Z_METADATA, Z_PRIMARYKEY)"
    }

    /// The 16 bytes every SQLite database file starts with.
    static let sqliteHeader = Array("SQLite format 3\0".utf8)

    /// Why a name is skipped before its content is read; nil for a regular file to probe.
    private static func reasonSkipped(name: String, path: String, present: Set<String>) -> String? {
        if let owner = companionOwner(name) {
            return "SQLite's companion file of '\(owner)', which is not in the folder"
        }
        var info = stat()
        guard lstat(path, &info) == 0 else {
            return "cannot be read: \(String(cString: strerror(errno)))"
        }
        let type = info.st_mode & S_IFMT
        if name.hasSuffix("_SUPPORT") && name.hasPrefix(".") && type == S_IFDIR {
            return "Core Data's external data folder of a store that is not in the folder"
        }
        if name.contains(".cdmigrate-") {
            return "a file cdmigrate's migrations make (a lock or a temporary store; cdmigrate clean lists leftovers)"
        }
        if name.hasPrefix(".") { return type == S_IFDIR ? "a hidden folder" : "a hidden file" }
        switch type {
        case S_IFREG:
            return nil
        case S_IFDIR:
            return "a folder (folders inside are not searched)"
        case S_IFLNK:
            let target = linkTarget(path).map { " to '\($0)'" } ?? ""
            return "a symbolic link\(target) (links in a folder are not followed; name the store itself)"
        default:
            return FileIO.fileTypeName(type) + ", not a regular file"
        }
    }

    /// The name a companion's name belongs to (`a.sqlite-wal` → `a.sqlite`), nil for other names.
    private static func companionOwner(_ name: String) -> String? {
        for suffix in companionSuffixes where name.hasSuffix(suffix) && name.count > suffix.count {
            return String(name.dropLast(suffix.count))
        }
        return nil
    }

    /// Up to `count` bytes from the start of the file (fewer for a shorter file; none when it
    /// cannot be read). Opened without blocking, so that a FIFO swapped in cannot hang the scan.
    private static func headerBytes(_ path: String, count: Int) -> [UInt8] {
        guard let fd = try? FileIO.openRegularFile(path) else { return [] }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: count)
        let n = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress, count) }
        return n > 0 ? Array(bytes[0..<n]) : []
    }

    private static func hasCoreDataTables(_ path: String, uri: String) throws -> Bool {
        let database = try SQLiteDatabase(path: path, mode: .readOnly, uri: uri)
        defer { database.close() }
        return try database.tableExists("Z_METADATA") && database.tableExists("Z_PRIMARYKEY")
    }

    private static func asMigrationError(_ error: Error) -> MigrationError {
        (error as? MigrationError) ?? MigrationError(.io, "\(error)")
    }

    private static func linkTarget(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlink(path, &buffer, buffer.count - 1)
        guard n > 0 else { return nil }
        return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
