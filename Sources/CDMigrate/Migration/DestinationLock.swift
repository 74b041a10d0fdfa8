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
/// A lock file holds exactly `marker`. It is removed on release, while still locked, when it
/// holds exactly that text: whoever created it (this run, a competitor that lost the race for the
/// lock, a run that was killed), it is a cdmigrate lock file and nobody else holds it. Any other
/// file under that name (a user's file, even a store) is locked but never removed.
final class DestinationLock {
    let destination: String
    let lockPath: String
    private var descriptor: Int32

    /// What a lock file made by cdmigrate contains, so that it can tell its own lock files.
    static let marker = Array("cdmigrate destination lock\n".utf8)

    private init(destination: String, lockPath: String, descriptor: Int32) {
        self.destination = destination
        self.lockPath = lockPath
        self.descriptor = descriptor
    }

    deinit { release() }

    static func lockPath(for destination: String) -> String { destination + ".cdmigrate-lock" }

    /// Takes the lock for a new store at `destination` and checks, under it, that neither the
    /// store nor SQLite's companion files of an earlier one are there.
    /// - Throws: `.migrationManagerDestinationStore` when another migration holds the lock, the
    ///   destination exists, or its stale `-wal`/`-shm`/`-journal` would be replayed onto the new store.
    static func acquireForNewStore(at destination: String) throws -> DestinationLock {
        let lock = try acquire(for: destination)
        if FileIO.exists(destination) {
            lock.release()
            throw MigrationError(.migrationManagerDestinationStore, "the destination '\(destination)' already exists; cdmigrate never overwrites a store it did not make in this run")
        }
        let stale = StoreFiles.presentCompanions(of: destination)
        if !stale.isEmpty {
            lock.release()
            throw MigrationError(.migrationManagerDestinationStore, "the destination '\(destination)' does not exist but SQLite's companion files of an earlier store are beside it: \(stale.map { "'\($0)'" }.joined(separator: ", ")); SQLite would replay them onto the new store — remove them (or move them away with the store they belong to) and run the migration again")
        }
        return lock
    }

    /// Takes the lock for `destination`, or throws at once when another migration holds it.
    static func acquire(for destination: String) throws -> DestinationLock {
        let path = lockPath(for: destination)
        // A few rounds: the file can be removed by its creator between our open and our lock.
        for _ in 0..<8 {
            var fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
            if fd >= 0 {
                let written = marker.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                if written != marker.count {
                    let failure = errno
                    close(fd)
                    unlink(path)
                    throw MigrationError(.migrationManagerDestinationStore, "cannot write the lock file '\(path)' for the destination '\(destination)': \(String(cString: strerror(failure)))")
                }
            } else if errno == EEXIST {
                fd = open(path, O_RDONLY | O_CLOEXEC)
                if fd < 0 && errno == ENOENT { continue }
            }
            if fd < 0 {
                throw MigrationError(.migrationManagerDestinationStore, "cannot create the lock file '\(path)' for the destination '\(destination)': \(String(cString: strerror(errno)))")
            }
            if flock(fd, LOCK_EX | LOCK_NB) != 0 {
                let failure = errno
                close(fd)
                if failure == EWOULDBLOCK || failure == EAGAIN {
                    throw MigrationError(.migrationManagerDestinationStore, "the destination '\(destination)' is busy: another migration to it is running (it holds '\(path)')")
                }
                throw MigrationError(.migrationManagerDestinationStore, "cannot lock '\(path)' for the destination '\(destination)': \(String(cString: strerror(failure)))")
            }
            // The lock counts only if the name still leads to the file we locked.
            var held = stat(), named = stat()
            if fstat(fd, &held) == 0, stat(path, &named) == 0, held.st_dev == named.st_dev, held.st_ino == named.st_ino {
                return DestinationLock(destination: destination, lockPath: path, descriptor: fd)
            }
            close(fd)
        }
        throw MigrationError(.migrationManagerDestinationStore, "the destination '\(destination)' is busy: its lock file '\(path)' keeps being replaced")
    }

    /// Removes the lock file if it is cdmigrate's (see above; still holding the lock, so no other
    /// run is using it), then releases the lock. Harmless when already released.
    func release() {
        guard descriptor >= 0 else { return }
        if holdsMarkerOnly() { unlink(lockPath) }
        close(descriptor)
        descriptor = -1
    }

    /// Whether the locked file holds exactly `marker` and is still the one under `lockPath`.
    private func holdsMarkerOnly() -> Bool {
        var held = stat(), named = stat()
        guard fstat(descriptor, &held) == 0, stat(lockPath, &named) == 0,
              held.st_dev == named.st_dev, held.st_ino == named.st_ino,
              Int(held.st_size) == DestinationLock.marker.count else { return false }
        var content = [UInt8](repeating: 0, count: DestinationLock.marker.count)
        let n = content.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        return n == content.count && content == DestinationLock.marker
    }
}
