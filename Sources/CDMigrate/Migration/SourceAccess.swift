#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// How a migration reads its source store: the committed state, consistently for the whole run,
/// without creating, changing or removing any file beside the source.
///
/// A plain read-only SQLite open is not enough: for a store in WAL mode SQLite creates `-wal` and
/// `-shm` beside it (and writes into an existing `-shm`), and they stay after a crash. So:
///
/// - The store is open in another process (SQLite's locks on it or its `-shm` show in
///   `/proc/locks`): read it through SQLite's own locking (`mode=ro`). Its `-wal` and `-shm`
///   exist already (the other process made them), nothing is created; SQLite's read transaction
///   gives a committed snapshot while the other process writes. SQL push-down is off, since a
///   second connection could see a later snapshot.
/// - Nobody has it open, rollback-journal mode: `mode=ro`. A read-only connection creates no
///   file; its read transaction (a shared lock) keeps writers out for the whole run.
/// - Nobody has it open, WAL mode with no or an empty `-wal`: `immutable=1` — no lock, no file.
///   Should another process open the store and checkpoint into the main file meanwhile, the
///   main file's change time moves and the run fails with a "busy" error before the hand-over.
/// - Nobody has it open, WAL mode with committed transactions in `-wal`: the main file and
///   `-wal` are copied into a private snapshot beside the destination (unique names, `O_EXCL`),
///   checked unchanged across the copy, and the snapshot is read; it is removed at the end.
///
/// Where `/proc/locks` cannot be read, the store is treated as open elsewhere (consistency
/// first; SQLite may then create `-wal`/`-shm` beside a WAL store).
final class SourceAccess {
    enum Kind: Equatable { case shared, readOnly, immutable, snapshot }

    let path: String
    let kind: Kind
    /// What SQLite opens (a `file:` URI).
    let uri: String
    /// Whether a second connection (ATTACH for SQL push-down) reads the same state.
    var allowsAttach: Bool { kind != .shared }
    /// Whether the source's main file, copied byte for byte, is the committed state this run
    /// reads: a WAL store with an empty log whose file is watched for changes until the end, or a
    /// rollback-journal store without a journal, which this run's read lock keeps writers out of.
    var copiesAsFile: Bool {
        kind == .immutable || (kind == .readOnly && !FileIO.exists(path + "-journal") && !FileIO.exists(path + "-wal"))
    }
    private let watched: [(String, StoreFiles.Fingerprint)]
    private var snapshotFiles: [String]

    private init(
        path: String, kind: Kind, uri: String, watched: [(String, StoreFiles.Fingerprint)], snapshotFiles: [String] = []
    ) {
        self.path = path
        self.kind = kind
        self.uri = uri
        self.watched = watched
        self.snapshotFiles = snapshotFiles
    }

    deinit { removeSnapshot() }

    /// Chooses how to read the store at `path`; a snapshot, when one is needed, is made beside `scratchBeside`.
    ///
    /// A symbolic link is followed first: the store is its target, and the target's `-wal` and
    /// `-shm` are its companions (not files beside the link). Anything that is not a regular
    /// file — a FIFO, a socket, a device, a folder — is refused before it is opened.
    static func prepare(source given: String, scratchBeside: String) throws -> SourceAccess {
        guard FileIO.exists(given) else {
            throw MigrationError(.migrationManagerSourceStore, "cannot open the source store '\(given)': no such file")
        }
        try requireRegularStoreFiles(given)
        let path = StoreFiles.resolvedPath(given)
        if isOpenElsewhere(path) != false {
            return SourceAccess(path: path, kind: .shared, uri: uri(path, "mode=ro"), watched: [])
        }
        let main = StoreFiles.Fingerprint(path)
        let wal = StoreFiles.Fingerprint(path + "-wal")
        guard isWALHeader(path) else {
            return SourceAccess(path: path, kind: .readOnly, uri: uri(path, "mode=ro"), watched: [])
        }
        if !wal.exists || wal.size == 0 {
            return SourceAccess(path: path, kind: .immutable, uri: uri(path, "immutable=1"), watched: [(path, main)])
        }
        // Committed transactions wait in the log: read a private copy of main file and log.
        for _ in 0..<3 {
            let copy = try StoreFiles.makeTemporaryFile(beside: scratchBeside)
            var files = [copy]
            do {
                FileIO.remove(copy)  // ours (mkstemp); recreated with O_EXCL by the copy
                try StoreFiles.copyExclusively(path, to: copy)
                files.append(copy + "-wal")
                try StoreFiles.copyExclusively(path + "-wal", to: copy + "-wal")
            } catch {
                for file in files { FileIO.remove(file) }
                throw MigrationError(
                    .migrationManagerSourceStore,
                    "cannot make a private snapshot of the source store '\(path)' (its write-ahead log holds committed transactions): \(error)"
                )
            }
            let unchanged = StoreFiles.Fingerprint(path) == main && StoreFiles.Fingerprint(path + "-wal") == wal
            if unchanged && isOpenElsewhere(path) == false {
                // SQLite makes the snapshot's -shm (a name derived from this run's unique one).
                files.append(copy + "-shm")
                return SourceAccess(
                    path: path, kind: .snapshot, uri: uri(copy, "mode=ro"), watched: [], snapshotFiles: files)
            }
            for file in files { FileIO.remove(file) }
        }
        throw busy(path)
    }

    /// Where reads that write no store (metadata, a store's own model) put a private snapshot:
    /// the temporary folder (`TMPDIR`, else `/tmp`).
    static var temporaryScratch: String {
        (getenv("TMPDIR").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp") + "/cdmigrate-read"
    }

    /// Refuses a store whose main file, `-wal` or `-shm` is not a regular file: SQLite (or the
    /// snapshot's copy) would block opening a FIFO, and read nonsense from a device. Told by
    /// `stat`, without opening the store: closing a descriptor on it would drop the POSIX locks
    /// this process's own SQLite connections may hold on it (see `isOpenElsewhere`).
    /// - Throws: `.migrationManagerSourceStore` naming the file and what it is.
    static func requireRegularStoreFiles(_ given: String) throws {
        let path = StoreFiles.resolvedPath(given)
        for (file, what) in [
            (given, "the store"), (path + "-wal", "the store's companion file"),
            (path + "-shm", "the store's companion file"),
        ] {
            var info = stat()
            guard stat(file, &info) == 0 else { continue }
            let type = info.st_mode & S_IFMT
            if type != S_IFREG {
                throw MigrationError(
                    .migrationManagerSourceStore,
                    "\(what) '\(file)' is \(FileIO.fileTypeName(type)), not a regular file; cdmigrate reads only regular files"
                )
            }
        }
    }

    /// Throws a "busy" error when another process changed the source while it was read without locks.
    func checkUnchanged() throws {
        for (file, fingerprint) in watched where StoreFiles.Fingerprint(file) != fingerprint {
            throw SourceAccess.busy(path, detail: "'\(file)' changed while the migration read it")
        }
    }

    /// Removes the private snapshot, if one was made.
    func removeSnapshot() {
        for file in snapshotFiles { FileIO.remove(file) }
        snapshotFiles = []
    }

    static func busy(_ path: String, detail: String = "it kept changing while cdmigrate copied it") -> MigrationError {
        MigrationError(
            .migrationManagerSourceStore,
            "the source store '\(path)' is busy: another process is writing it (\(detail)); nothing was migrated — run the migration again when the store is not in use"
        )
    }

    private static func uri(_ path: String, _ query: String) -> String {
        "file:" + StoreFiles.uriEscaped(path) + "?" + query
    }

    /// Header bytes 18–19 are 2, 2 in WAL mode.
    static func isWALHeader(_ path: String) -> Bool {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var header = [UInt8](repeating: 0, count: 20)
        let n = header.withUnsafeMutableBytes { read(fd, $0.baseAddress, 20) }
        return n == 20 && header[18] == 2 && header[19] == 2
    }

    /// Whether any process holds a lock on the store's main file or its `-shm` (SQLite takes
    /// POSIX locks on both while a connection is open in WAL mode, and on the main file during
    /// every transaction otherwise). Read from `/proc/locks`, which needs no file descriptor on
    /// the store: closing one would drop this process's own SQLite locks on it. Nil when
    /// `/proc/locks` cannot be read.
    static func isOpenElsewhere(_ path: String) -> Bool? {
        var identities: [String] = []
        for file in [path, path + "-shm"] {
            var info = stat()
            guard stat(file, &info) == 0 else { continue }
            identities.append(lockIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino)))
        }
        guard let text = try? FileIO.readText(path: "/proc/locks") else { return nil }
        for line in text.split(separator: "\n") {
            // "1: POSIX  ADVISORY  READ 15252 fe:00:16228765 128 128"
            // (waiters read "1: -> POSIX ..."). SQLite's locks are POSIX (fcntl) ones; flock
            // locks — such as DestinationLock's, should a source be named like its lock file — are not.
            var fields = line.split(separator: " ").dropFirst()
            if fields.first == "->" { fields = fields.dropFirst() }
            let values = Array(fields)
            if values.count >= 5, values[0] != "FLOCK", identities.contains(String(values[4])) { return true }
        }
        return false
    }

    /// `/proc/locks`' "major:minor:inode" (two hex digits at least, inode in decimal).
    private static func lockIdentity(device: UInt64, inode: UInt64) -> String {
        let major = ((device >> 8) & 0xfff) | ((device >> 32) & ~UInt64(0xfff))
        let minor = (device & 0xff) | ((device >> 12) & ~UInt64(0xff))
        func hex(_ n: UInt64) -> String {
            let digits = String(n, radix: 16)
            return digits.count < 2 ? "0" + digits : digits
        }
        return "\(hex(major)):\(hex(minor)):\(inode)"
    }
}
