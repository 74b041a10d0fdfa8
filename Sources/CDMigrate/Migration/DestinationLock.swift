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
/// The lock file is removed on release only when this run created it (it is never a file the
/// run did not make). A lock file left by a killed run is harmless: `flock` locks die with their
/// process, so the next run takes the lock on the existing file.
final class DestinationLock {
    let destination: String
    let lockPath: String
    private var descriptor: Int32
    private let createdFile: Bool

    private init(destination: String, lockPath: String, descriptor: Int32, createdFile: Bool) {
        self.destination = destination
        self.lockPath = lockPath
        self.descriptor = descriptor
        self.createdFile = createdFile
    }

    deinit { release() }

    static func lockPath(for destination: String) -> String { destination + ".cdmigrate-lock" }

    /// Takes the lock for `destination`, or throws at once when another migration holds it.
    static func acquire(for destination: String) throws -> DestinationLock {
        let path = lockPath(for: destination)
        // A few rounds: the file can be removed by its creator between our open and our lock.
        for _ in 0..<8 {
            var created = true
            var fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
            if fd < 0 && errno == EEXIST {
                created = false
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
                return DestinationLock(destination: destination, lockPath: path, descriptor: fd, createdFile: created)
            }
            close(fd)
        }
        throw MigrationError(.migrationManagerDestinationStore, "the destination '\(destination)' is busy: its lock file '\(path)' keeps being replaced")
    }

    /// Removes the lock file if this run created it (still holding the lock, so no other run is
    /// using it), then releases the lock. Harmless when already released.
    func release() {
        guard descriptor >= 0 else { return }
        if createdFile { unlink(lockPath) }
        close(descriptor)
        descriptor = -1
    }
}
