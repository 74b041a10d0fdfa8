import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Ctrl-C (SIGINT), SIGTERM (`kill`, `timeout`, `systemctl stop`, `docker stop`) and SIGHUP (the
/// terminal went away) during a migration: the first one asks the migration to stop (it then
/// removes what it wrote, releases its lock, and the command exits with 128 + the signal's number:
/// 130, 143, 129); the progress handler reads the flag. A fleet run passes the signal on to its
/// running children (a signal sent to the fleet process alone would not reach them).
enum Interrupt {
    private static let received = Atomic<Int32>(0)

    /// The signals handled so.
    static let signals: [Int32] = [SIGINT, SIGTERM, SIGHUP]

    static var requested: Bool { received.load(ordering: .relaxed) != 0 }

    /// The first signal received (0 when none).
    static var signal: Int32 { received.load(ordering: .relaxed) }

    /// The exit status of a run stopped by a signal: 128 + its number (130 for Ctrl-C).
    static var exitStatus: Int32 { 128 + (signal == 0 ? SIGINT : signal) }

    /// The handlers `install` replaced, put back by `restore` (a host process such as Python
    /// keeps its own handlers once the command has run).
    nonisolated(unsafe) private static var replaced: [Int32: sighandler_t?] = [:]

    static func install() {
        for number in signals {
            let previous = Glibc.signal(number) { number in
                _ = Interrupt.received.compareExchange(expected: 0, desired: number, ordering: .relaxed)
            }
            if replaced[number] == nil { replaced[number] = .some(previous) }
        }
    }

    /// Forgets a signal an earlier command received (each command starts uninterrupted).
    static func reset() {
        received.store(0, ordering: .relaxed)
    }

    /// Puts back the handlers `install` replaced.
    static func restore() {
        for (number, previous) in replaced { Glibc.signal(number, previous ?? SIG_DFL) }
        replaced = [:]
    }
}
