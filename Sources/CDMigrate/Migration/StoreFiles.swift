#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// File handling around a store: its companion files, the private files a migration writes
/// beside its destination, and the hand-over that puts a new store in place.
///
/// Every file a run writes is named after the destination and created with `O_EXCL` under a
/// unique name (`<destination>.cdmigrate-XXXXXX`), so a run never opens, overwrites or deletes a
/// file it did not create — not even a source named like one of its temporaries.
package enum StoreFiles {
    /// SQLite's companion files: a store is these and the main file, as one.
    static let companionSuffixes = ["-wal", "-shm", "-journal"]

    /// The companion files beside `path` that exist now.
    static func presentCompanions(of path: String) -> [String] {
        companionSuffixes.map { path + $0 }.filter { FileIO.exists($0) }
    }

    /// Creates a new empty file with a unique name beside `destination` (same folder, so that
    /// renaming it onto the destination is atomic) and returns its path. `mkstemp` opens it with
    /// `O_CREAT | O_EXCL`: the name belongs to this run alone.
    static func makeTemporaryFile(beside destination: String) throws -> String {
        var template = Array((destination + ".cdmigrate-XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { buffer -> Int32 in
            guard let base = buffer.baseAddress else { return -1 }
            return mkstemp(base)
        }
        if fd < 0 {
            throw MigrationError(
                .migrationManagerDestinationStore,
                "cannot create a temporary file beside '\(destination)' (in '\(FileIO.directory(of: destination))'): \(String(cString: strerror(errno)))"
            )
        }
        close(fd)
        let path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        DestinationLock.noteTemporary(path)  // the next run removes it, should this one be killed
        return path
    }

    /// Creates `path` with `O_EXCL` (it must not exist) and copies `source`'s bytes into it.
    static func copyExclusively(_ source: String, to path: String) throws {
        try copy(source, to: path, flags: O_CREAT | O_EXCL, creating: true)
    }

    /// Copies `source`'s bytes over the existing file at `path` (emptied first).
    static func copyOver(_ source: String, to path: String) throws {
        try copy(source, to: path, flags: O_TRUNC, creating: false)
    }

    private static func copy(_ source: String, to path: String, flags: Int32, creating: Bool) throws {
        let input = open(source, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else {
            throw MigrationError(.io, "cannot read '\(source)': \(String(cString: strerror(errno)))")
        }
        defer { close(input) }
        let output = open(path, O_WRONLY | O_CLOEXEC | flags, 0o600)
        guard output >= 0 else {
            throw MigrationError(
                .io, "cannot \(creating ? "create" : "write") '\(path)': \(String(cString: strerror(errno)))")
        }
        defer { close(output) }
        if try copyInKernel(input, to: output, source: source, path: path) { return }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw MigrationError(.io, "cannot read '\(source)': \(String(cString: strerror(errno)))")
            }
            if n == 0 { break }
            var written = 0
            while written < n {
                let w = buffer.withUnsafeBytes { bytes -> Int in
                    guard let base = bytes.baseAddress else { return -1 }
                    return write(output, base + written, n - written)
                }
                if w < 0 {
                    if errno == EINTR { continue }
                    throw MigrationError(.io, "cannot write '\(path)': \(String(cString: strerror(errno)))")
                }
                written += w
            }
        }
    }

    /// Copies the rest of `input` to `output` inside the kernel (`sendfile(2)`: the page cache's
    /// pages are copied once, not read into this process and written back), as `cp` does. False,
    /// with nothing written, where the kernel cannot do it for these files (then the caller reads
    /// and writes); an error once some bytes were written. `useKernelCopy` false (tests) always
    /// declines.
    static func copyInKernel(_ input: Int32, to output: Int32, source: String, path: String) throws -> Bool {
        guard useKernelCopy.withLock({ $0 }) else { return false }
        var copied = 0
        while true {
            // At most 1 GiB a call (the kernel takes up to 0x7ffff000 bytes).
            let n = sendfile(output, input, nil, 1 << 30)
            if n < 0 {
                if errno == EINTR { continue }
                if copied == 0, errno == EINVAL || errno == ENOSYS || errno == EOPNOTSUPP || errno == EXDEV {
                    return false
                }
                throw MigrationError(
                    .io, "cannot copy '\(source)' to '\(path)': \(String(cString: strerror(errno)))")
            }
            if n == 0 { return true }
            copied += n
        }
    }

    /// Whether `copy` copies in the kernel where it can (tests turn it off to check the fallback).
    package static let useKernelCopy = LockedValue(true)

    /// Removes a temporary store this run created: the file and the companions SQLite made
    /// beside it (their names derive from a name unique to this run).
    static func removeTemporaryStore(_ path: String) {
        FileIO.remove(path)
        for suffix in companionSuffixes { FileIO.remove(path + suffix) }
    }

    /// Moves the finished temporary store onto `destination` in one step. With `replacing` false
    /// the move refuses, atomically, a destination that exists by then (`renameat2` with
    /// `RENAME_NOREPLACE`; where the kernel or C library lacks it, `link` then `unlink`, which
    /// fails the same way). With `replacing` true it is a plain `rename(2)`.
    /// The new store gets its final permissions first (`applyPermissions`).
    static func handOver(_ temporary: String, to destination: String, replacing: Bool) throws {
        applyPermissions(to: temporary, replacing: replacing ? destination : nil)
        handOverWindow?(.beforeMove)
        if replacing {
            try FileIO.rename(temporary, to: destination)
        } else if !renameWithoutReplacing(temporary, to: destination) {
            if errno == EEXIST {
                throw MigrationError(
                    .migrationManagerDestinationStore,
                    "the destination '\(destination)' appeared while the migration ran; cdmigrate never overwrites a store it did not make in this run (the migrated store was discarded)"
                )
            }
            throw MigrationError(
                .io, "cannot move the migrated store to '\(destination)': \(String(cString: strerror(errno)))")
        }
        handOverWindow?(.afterMove)
        FileIO.syncFolder(path: FileIO.directory(of: destination))
    }

    /// The moments of the hand-over the crash harness kills in (`Tests/CrashHarness`).
    package enum HandOverMoment { case beforeMove, betweenLinkAndUnlink, afterMove }

    /// Called at each moment of the hand-over; nil (nothing) but in the crash harness's children,
    /// which pause there so that a kill lands in that window. A test seam, not a feature.
    package nonisolated(unsafe) static var handOverWindow: ((HandOverMoment) -> Void)?

    /// Makes new-file hand-overs take the `link` + `unlink` path that systems without
    /// `renameat2` take (the crash harness kills between the two). A test seam, not a feature.
    package nonisolated(unsafe) static var handOverByLink = false

    /// Gives a finished temporary store (created 0600 by `mkstemp`) the permissions of its final
    /// place: replacing a store, that store's mode, owner and group (owner and group as far as
    /// this process may set them: any for root, else its own user and a group it belongs to);
    /// a new store, the mode a new file gets from the process's umask (0666 masked, 0644 under
    /// the usual 022). SQLite gives the `-wal` and `-shm` it creates later the main file's mode
    /// and owner. Best effort: a store that keeps 0600 is still a whole store. A folder beside a
    /// store (external data) takes the same call: a new one gets 0777 masked by the umask, one
    /// that replaces another that one's mode, owner and group.
    static func applyPermissions(to path: String, replacing original: String?) {
        if let original = original {
            var info = stat()
            guard stat(original, &info) == 0 else { return }
            if chown(path, info.st_uid, info.st_gid) != 0 { _ = chown(path, uid_t.max, info.st_gid) }
            _ = chmod(path, info.st_mode & 0o7777)
        } else {
            var info = stat()
            let isFolder = lstat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR
            _ = chmod(path, (isFolder ? 0o777 : 0o666) & ~currentUmask())
        }
    }

    /// The process's file mode creation mask, read without changing it (`/proc/self/status`,
    /// Linux 4.7 and later); elsewhere set and restored at once.
    static func currentUmask() -> mode_t {
        if let text = try? FileIO.readText(path: "/proc/self/status") {
            for line in text.split(separator: "\n") where line.hasPrefix("Umask:") {
                if let mask = mode_t(String(line.dropFirst(6)).trimmingWhitespace, radix: 8) { return mask & 0o777 }
            }
        }
        let mask = umask(0o022)
        umask(mask)
        return mask
    }

    /// In place, a store with several names (hard links) cannot be replaced: the rename gives only
    /// this name the new store, and the other names keep the old one.
    /// - Throws: `.migrationManagerDestinationStore` naming the number of links.
    static func refuseHardLinkedStore(_ path: String) throws {
        var info = stat()
        guard stat(path, &info) == 0, info.st_nlink > 1 else { return }
        throw MigrationError(
            .migrationManagerDestinationStore,
            "the store '\(path)' has \(info.st_nlink) names (hard links); replacing it in place would give only this name the migrated store while the others keep the old one — migrate it to a new file, or remove its other names first"
        )
    }

    private typealias RenameAt2 =
        @convention(c) (Int32, UnsafePointer<CChar>, Int32, UnsafePointer<CChar>, UInt32) -> Int32

    /// glibc's `renameat2`, looked up at run time (glibc ≥ 2.28 has it; older ones and musl do not).
    private static let renameat2Function: RenameAt2? = {
        guard let symbol = dlsym(nil, "renameat2") else { return nil }
        return unsafeBitCast(symbol, to: RenameAt2.self)
    }()

    /// renameat2's `RENAME_NOREPLACE` flag (linux/fs.h).
    private static let renameNoReplace: UInt32 = 1

    /// `rename` that fails with `EEXIST` instead of replacing; false with `errno` set on failure.
    static func renameWithoutReplacing(_ source: String, to destination: String) -> Bool {
        if let renameat2 = renameat2Function, !handOverByLink {
            if renameat2(AT_FDCWD, source, AT_FDCWD, destination, renameNoReplace) == 0 { return true }
            // Kernels or file systems without the flag: fall back below; any other error is final.
            if errno != EINVAL && errno != ENOSYS && errno != ENOTSUP { return false }
        }
        guard link(source, destination) == 0 else { return false }
        handOverWindow?(.betweenLinkAndUnlink)
        unlink(source)
        return true
    }

    /// `path` with every symbolic link resolved (`realpath`), so that a store reached through a
    /// link is handled where it really is: its `-wal`/`-shm` are beside the target, and an
    /// in-place migration replaces the target (keeping the link). `path` itself when it cannot be
    /// resolved (it does not exist, or a link dangles).
    static func resolvedPath(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// The file an in-place migration of `path` replaces: a symbolic link's target (the link is
    /// kept and leads to the migrated store), refusing anything but a regular file with one name.
    /// - Throws: `.migrationManagerSourceStore` for a FIFO, device or folder;
    ///   `.migrationManagerDestinationStore` for a store with several hard links.
    static func inPlaceTarget(_ path: String) throws -> String {
        if FileIO.exists(path) { try SourceAccess.requireRegularStoreFiles(path) }
        let target = resolvedPath(path)
        try refuseHardLinkedStore(target)
        return target
    }

    /// Whether two paths name the same file (by device and inode when both exist).
    static func sameFile(_ a: String, _ b: String) -> Bool {
        if a == b { return true }
        var sa = stat()
        var sb = stat()
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

    /// Folds a WAL store's write-ahead log into its main file (same contents, other bytes) and
    /// leaves the log empty, so that renaming another file over the main file cannot leave
    /// committed transactions in a `-wal` to be replayed onto the new store. The store stays in
    /// WAL mode; SQLite removes the emptied `-wal` and the `-shm` when this last connection closes.
    static func checkpointLog(_ path: String) throws {
        let database: SQLiteDatabase
        do {
            database = try SQLiteDatabase(path: path, mode: .readWrite)
        } catch let error as MigrationError {
            throw MigrationError(.sqlite, "cannot open '\(path)' to fold in its write-ahead log: \(error.message)")
        }
        defer { database.close() }
        let rows = try database.rows("PRAGMA wal_checkpoint(TRUNCATE)")
        // (busy, log frames, checkpointed frames): busy means a reader kept part of the log.
        if let row = rows.first, row.first?.integer != 0 {
            throw MigrationError(
                .migrationManagerDestinationStore,
                "cannot fold in the write-ahead log of '\(path)': the store is busy (another connection is reading it)")
        }
    }

    /// A file's identity and last change, to tell whether another process wrote it meanwhile.
    struct Fingerprint: Equatable {
        var exists = false
        var device: UInt64 = 0, inode: UInt64 = 0, size: Int64 = 0
        var modified: Int = 0, modifiedNanoseconds: Int = 0, changed: Int = 0, changedNanoseconds: Int = 0

        init(_ path: String) {
            var info = stat()
            guard stat(path, &info) == 0 else { return }
            exists = true
            device = UInt64(info.st_dev)
            inode = UInt64(info.st_ino)
            size = Int64(info.st_size)
            modified = Int(info.st_mtim.tv_sec)
            modifiedNanoseconds = Int(info.st_mtim.tv_nsec)
            changed = Int(info.st_ctim.tv_sec)
            changedNanoseconds = Int(info.st_ctim.tv_nsec)
        }
    }
}
