#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Ctrl-C during a migration: the first SIGINT asks the migration to stop (it then removes what
/// it wrote and the command exits with 130); the progress handler reads the flag.
enum Interrupt {
    private static let flag = Atomic<Bool>(false)

    static var requested: Bool { flag.load(ordering: .relaxed) }

    static func install() {
        signal(SIGINT) { _ in Interrupt.flag.store(true, ordering: .relaxed) }
    }
}
