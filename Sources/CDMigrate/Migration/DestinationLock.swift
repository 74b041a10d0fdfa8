#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The claim of one migration on a destination name: an exclusive `flock` on
/// `<destination>.cdmigrate-lock` in the destination's folder, held from before the temporary
/// file is made until after the hand-over. A second migration to the same destination (another
/// process, or another manager in this one) fails at once with a "busy" error naming the
/// destination; it does not wait.
///
/// The lock file is a record of its owner and of what the owner writes beside the destination:
///
///     cdmigrate destination lock
///     owner pid=4242 boot=<kernel boot id> start=<process start, clock ticks since boot>
///     temporary Notes.sqlite.cdmigrate-Ab12Cd
///     temporary Notes.sqlite.cdmigrate-Ab12Cd.cdmigrate-Xy34Zw
///
/// Every temporary store, snapshot or work folder a run makes beside the destination is
/// recorded as soon as it exists (`noteTemporary`). A run that holds the lock knows that the
/// runs recorded before it are dead (their `flock` died with them): on taking the lock it removes
/// the temporaries they recorded (with their `-wal`/`-shm`/`-journal`), then records itself. A
/// killed run's leftovers therefore go with the next run to the same destination, or with
/// `cdmigrate clean`; `leftovers(of:)` reports them.
///
/// A lock file is cdmigrate's when it begins with the marker line (or is empty: a run killed
/// between creating and writing it). It is removed on release, while still locked. Any other
/// file under that name (a user's file, even a store) is locked but never changed or removed, and
/// nothing is removed on its account. Names recorded in a lock file are only ever removed when
/// they are `<destination>.cdmigrate-…` names in the destination's folder.
package final class DestinationLock {
    let destination: String
    let lockPath: String
    private var descriptor: Int32
    /// Whether the file is cdmigrate's record (else a user's file that is only locked).
    private let isRecord: Bool

    /// The first line of a lock file made by cdmigrate, so that it can tell its own lock files.
    static let marker = Array("cdmigrate destination lock\n".utf8)

    /// The locks this process holds, by destination, with their descriptors (for `noteTemporary`).
    private static let held = LockedValue<[String: Int32]>([:])

    private init(destination: String, lockPath: String, descriptor: Int32, isRecord: Bool) {
        self.destination = destination
        self.lockPath = lockPath
        self.descriptor = descriptor
        self.isRecord = isRecord
    }

    deinit { release() }

    static func lockPath(for destination: String) -> String { destination + ".cdmigrate-lock" }

    /// Takes the lock for a new store at `destination` and checks, under it, that neither the
    /// store nor SQLite's companion files of an earlier one are there.
    /// - Throws: `.migrationManagerDestinationStore` when another migration holds the lock, the
    ///   destination exists or is a dangling symbolic link, or its stale `-wal`/`-shm`/`-journal`
    ///   would be replayed onto the new store.
    static func acquireForNewStore(at destination: String) throws -> DestinationLock {
        let lock = try acquire(for: destination)
        var info = stat()
        if lstat(destination, &info) == 0 && (info.st_mode & S_IFMT) == S_IFLNK && !FileIO.exists(destination) {
            lock.release()
            let target = linkTarget(destination).map { " to '\($0)'" } ?? ""
            throw MigrationError(
                .migrationManagerDestinationStore,
                "the destination '\(destination)' is a symbolic link\(target), which does not exist; cdmigrate creates a new store only under a free name and never through a link — give the link's target as the destination, or remove the link"
            )
        }
        if FileIO.exists(destination) {
            lock.release()
            throw MigrationError(
                .migrationManagerDestinationStore,
                "the destination '\(destination)' already exists; cdmigrate never overwrites a store it did not make in this run"
            )
        }
        let stale = StoreFiles.presentCompanions(of: destination)
        if !stale.isEmpty {
            lock.release()
            throw MigrationError(
                .migrationManagerDestinationStore,
                "the destination '\(destination)' does not exist but SQLite's companion files of an earlier store are beside it: \(stale.map { "'\($0)'" }.joined(separator: ", ")); SQLite would replay them onto the new store — remove them (or move them away with the store they belong to) and run the migration again"
            )
        }
        return lock
    }

    /// What a symbolic link points at, as written in it.
    static func linkTarget(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: 4097)
        let n = buffer.withUnsafeMutableBufferPointer { pointer -> Int in
            guard let base = pointer.baseAddress else { return -1 }
            return readlink(path, base, 4096)
        }
        guard n > 0 else { return nil }
        return String(decoding: buffer.prefix(n).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Takes the lock for `destination`, or throws at once when another migration holds it.
    /// Removes what dead runs recorded in the lock file, then records this run as its owner.
    static func acquire(for destination: String) throws -> DestinationLock {
        let path = lockPath(for: destination)
        // A few rounds: the file can be removed by its creator between our open and our lock.
        for _ in 0..<8 {
            var fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
            if fd >= 0 {
                // The marker first, before the flock: a run that opens the file meanwhile and wins
                // the lock sees cdmigrate's file (this same text at offset 0 is harmless to it).
                let written = marker.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
                if written != marker.count {
                    let failure = errno
                    close(fd)
                    unlink(path)
                    throw MigrationError(
                        .migrationManagerDestinationStore,
                        "cannot write the lock file '\(path)' for the destination '\(destination)': \(String(cString: strerror(failure)))"
                    )
                }
            } else if errno == EEXIST {
                fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC)
                if fd < 0 && (errno == EACCES || errno == EROFS || errno == EPERM) {
                    fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
                }
                if fd < 0 && errno == ENOENT { continue }
            }
            if fd < 0 {
                throw MigrationError(
                    .migrationManagerDestinationStore,
                    "cannot create the lock file '\(path)' for the destination '\(destination)': \(String(cString: strerror(errno)))"
                )
            }
            if flock(fd, LOCK_EX | LOCK_NB) != 0 {
                let failure = errno
                let owner = ownerDescription(readAll(fd))
                close(fd)
                if failure == EWOULDBLOCK || failure == EAGAIN {
                    throw MigrationError(
                        .migrationManagerDestinationStore,
                        "the destination '\(destination)' is busy: another migration to it is running (it holds '\(path)'\(owner.map { ", \($0)" } ?? ""))"
                    )
                }
                throw MigrationError(
                    .migrationManagerDestinationStore,
                    "cannot lock '\(path)' for the destination '\(destination)': \(String(cString: strerror(failure)))")
            }
            // The lock counts only if the name still leads to the file we locked.
            var held = stat()
            var named = stat()
            if fstat(fd, &held) == 0, stat(path, &named) == 0, held.st_dev == named.st_dev, held.st_ino == named.st_ino
            {
                if (held.st_mode & S_IFMT) != S_IFREG {
                    close(fd)
                    throw MigrationError(
                        .migrationManagerDestinationStore,
                        "cannot lock the destination '\(destination)': '\(path)' is \(FileIO.fileTypeName(held.st_mode & S_IFMT)), not a lock file"
                    )
                }
                let content = readAll(fd)
                let isRecord = content.isEmpty || content.starts(with: marker)
                if isRecord, let owner = Record(content).owner, !owner.hasPrefix("pid=\(getpid()) "),
                    ProcessIdentity.isAlive(owner)
                {
                    // The flock says free, the record says its owner runs: a file system whose
                    // flock does not reach other processes (some network file systems). Busy.
                    close(fd)
                    throw MigrationError(
                        .migrationManagerDestinationStore,
                        "the destination '\(destination)' is busy: its lock file '\(path)' names a running process (\(owner))"
                    )
                }
                if isRecord {
                    // Whoever recorded anything here is dead (its flock died with it).
                    removeRecordedTemporaries(Record(content), destination: destination)
                    let record = marker + Array("owner \(ProcessIdentity.current.text)\n".utf8)
                    let written = record.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
                    if written == record.count { _ = ftruncate(fd, off_t(record.count)) }
                }
                let lock = DestinationLock(destination: destination, lockPath: path, descriptor: fd, isRecord: isRecord)
                if isRecord { DestinationLock.held.withLock { $0[destination] = fd } }
                return lock
            }
            close(fd)
        }
        throw MigrationError(
            .migrationManagerDestinationStore,
            "the destination '\(destination)' is busy: its lock file '\(path)' keeps being replaced")
    }

    /// Removes the lock file if it is cdmigrate's (see above; still holding the lock, so no other
    /// run is using it), then releases the lock. Harmless when already released.
    func release() {
        guard descriptor >= 0 else { return }
        let fd = descriptor
        DestinationLock.held.withLock { held in
            if held[destination] == fd { held[destination] = nil }
        }
        if isRecord && isStillNamed() && DestinationLock.readAll(fd).starts(with: DestinationLock.marker) {
            unlink(lockPath)
        }
        close(fd)
        descriptor = -1
    }

    /// Whether the locked file is still the one under `lockPath`.
    private func isStillNamed() -> Bool {
        var held = stat()
        var named = stat()
        return fstat(descriptor, &held) == 0 && stat(lockPath, &named) == 0 && held.st_dev == named.st_dev
            && held.st_ino == named.st_ino
    }

    // MARK: Recording temporaries

    /// Records `path`, a file or folder a run has just made beside a destination it holds the
    /// lock of (`<destination>.cdmigrate-…`), in that lock file, so that the next run to the
    /// destination can remove it should this one be killed. Nothing happens when this process
    /// holds no such lock (a caller's own scratch file).
    static func noteTemporary(_ path: String) {
        held.withLock { held in
            var best: (String, Int32)?
            for (destination, fd) in held where path.hasPrefix(destination + ".cdmigrate-") {
                if destination.count > (best?.0.count ?? -1) { best = (destination, fd) }
            }
            guard let (destination, fd) = best, FileIO.directory(of: path) == FileIO.directory(of: destination) else {
                return
            }
            let name = path.lastIndex(of: "/").map { String(path[path.index(after: $0)...]) } ?? path
            let line = Array("temporary \(name)\n".utf8)
            var info = stat()
            guard fstat(fd, &info) == 0 else { return }
            _ = line.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, info.st_size) }
        }
    }

    /// What a lock file says.
    struct Record {
        var owner: String?
        var temporaries: [String] = []

        init(_ content: [UInt8]) {
            guard content.starts(with: DestinationLock.marker) else { return }
            let text = String(decoding: content.dropFirst(DestinationLock.marker.count), as: UTF8.self)
            for line in text.split(separator: "\n") {
                if line.hasPrefix("owner ") { owner = String(line.dropFirst(6)) }
                if line.hasPrefix("temporary ") { temporaries.append(String(line.dropFirst(10))) }
            }
        }
    }

    /// The recorded names that may be removed: `<destination>.cdmigrate-…` in its folder, nothing else.
    static func removablePaths(_ record: Record, destination: String) -> [String] {
        let folder = FileIO.directory(of: destination)
        let base = String(destination.split(separator: "/", omittingEmptySubsequences: false).last ?? "")
        return record.temporaries.filter { name in
            !name.contains("/") && name.hasPrefix(base + ".cdmigrate-") && name != base + ".cdmigrate-lock"
        }.map { folder + "/" + $0 }
    }

    /// Removes the recorded temporaries of dead runs, with SQLite's companions; a recorded work
    /// folder with everything in it.
    private static func removeRecordedTemporaries(_ record: Record, destination: String) {
        for path in removablePaths(record, destination: destination) { removeLeftover(path) }
    }

    static func removeLeftover(_ path: String) {
        var info = stat()
        guard lstat(path, &info) == 0 || StoreFiles.presentCompanions(of: path).count > 0 else { return }
        if (info.st_mode & S_IFMT) == S_IFDIR {
            for entry in (try? FileIO.directoryEntries(path: path)) ?? [] { FileIO.remove(path + "/" + entry) }
            rmdir(path)
        } else {
            StoreFiles.removeTemporaryStore(path)
        }
    }

    // MARK: Reporting leftovers

    /// What killed runs left beside a destination, as `cdmigrate clean` reports it.
    package struct Leftovers {
        /// The destination (or in-place store) the files belong to.
        package var destination: String
        /// Its lock file.
        package var lockPath: String
        /// Whether a running migration holds the lock (then nothing is left over: it is in use).
        package var inUse: Bool
        /// The recorded owner ("pid=… boot=… start=…"), the dead run's or the running one's.
        package var owner: String?
        /// Recorded files and folders that still exist (with their companions), removable.
        package var files: [String]
        /// Whether the lock file is cdmigrate's (else a user's file under that name, left alone).
        package var isRecord: Bool
    }

    /// Reports (and with `remove`, removes) what dead runs left beside `destination`: its lock
    /// file and the temporaries recorded in it. A lock a running migration holds is reported as
    /// in use and left alone; so is a file under the lock's name that is not cdmigrate's.
    /// - Throws: `.io` when the lock file cannot be read.
    package static func leftovers(of destination: String, remove: Bool) throws -> Leftovers {
        let path = lockPath(for: destination)
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else {
            throw MigrationError(.io, "cannot read the lock file '\(path)': \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        let content = readAll(fd)
        let record = Record(content)
        var report = Leftovers(
            destination: destination, lockPath: path, inUse: false, owner: record.owner, files: [],
            isRecord: content.isEmpty || content.starts(with: marker))
        // A shared lock is refused while a migration holds its exclusive one.
        if flock(fd, LOCK_SH | LOCK_NB) != 0 {
            report.inUse = true
            return report
        }
        flock(fd, LOCK_UN)
        guard report.isRecord else { return report }
        report.files = removablePaths(record, destination: destination).filter { path in
            var info = stat()
            return lstat(path, &info) == 0 || !StoreFiles.presentCompanions(of: path).isEmpty
        }
        if remove {
            // Taking the lock removes what the dead runs recorded; releasing it removes the file.
            let lock = try acquire(for: destination)
            lock.release()
        }
        return report
    }

    // MARK: Helpers

    static func readAll(_ fd: Int32) -> [UInt8] {
        var content: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        var offset: off_t = 0
        while content.count < 1 << 20 {
            let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, offset) }
            if n <= 0 { break }
            content += buffer.prefix(n)
            offset += off_t(n)
        }
        return content
    }

    static func ownerDescription(_ content: [UInt8]) -> String? {
        Record(content).owner.map { "owner \($0)" }
    }
}
