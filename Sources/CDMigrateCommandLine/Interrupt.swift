import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Ctrl-C (SIGINT), SIGTERM (`kill`, `timeout`, `systemctl stop`, `docker stop`) and SIGHUP (the
/// terminal went away) during a migration: the first one asks the migration to stop (it then
/// removes what it wrote, releases its lock, and the command exits with 128 + the signal's number:
/// 130, 143, 129); the progress handler reads the flag. A fleet run passes the signal on to its
/// running children (a signal sent to the fleet process alone would not reach them).
///
/// A host process (Python's `python -m cdmigrate` entry, a C program calling
/// `cdm_command_line_run`) may run several commands at once on several threads: the handlers are
/// installed once for all of them and put back, whole (`sigaction`: handler, flags and mask, such
/// as the SA_ONSTACK Python installs its own with), when the last running command ends.
enum Interrupt {
    private static let received = Atomic<Int32>(0)

    /// The commands running (`begin` without its `end`), and the actions `install` replaced.
    private struct Handlers {
        var running = 0
        var replaced: [Int32: sigaction] = [:]
    }

    private static let handlers = Mutex(Handlers())

    /// The signals handled so.
    static let signals: [Int32] = [SIGINT, SIGTERM, SIGHUP]

    static var requested: Bool { received.load(ordering: .relaxed) != 0 }

    /// The first signal received (0 when none).
    static var signal: Int32 { received.load(ordering: .relaxed) }

    /// The exit status of a run stopped by a signal: 128 + its number (130 for Ctrl-C).
    static var exitStatus: Int32 { 128 + (signal == 0 ? SIGINT : signal) }

    /// A command starts: when no other command is running, it starts uninterrupted (a signal an
    /// earlier command received is forgotten; one received while another command runs stops
    /// both, as Ctrl-C stops a whole process).
    static func begin() {
        handlers.withLock { handlers in
            if handlers.running == 0 { received.store(0, ordering: .relaxed) }
            handlers.running += 1
        }
    }

    /// Handles the signals from now until the last running command ends (idempotent).
    static func install() {
        handlers.withLock { handlers in
            guard handlers.replaced.isEmpty else { return }
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { number in
                _ = Interrupt.received.compareExchange(expected: 0, desired: number, ordering: .relaxed)
            }
            // SA_RESTART: waitpid and reads go on after the handler (the flag is polled).
            action.sa_flags = SA_RESTART
            sigemptyset(&action.sa_mask)
            for number in signals {
                var previous = sigaction()
                if sigaction(number, &action, &previous) == 0 { handlers.replaced[number] = previous }
            }
        }
    }

    /// A command ends: when it was the last one running, the actions `install` replaced are put
    /// back (a host process such as Python keeps its own handlers once the commands have run).
    static func end() {
        handlers.withLock { handlers in
            handlers.running = max(0, handlers.running - 1)
            guard handlers.running == 0 else { return }
            for (number, previous) in handlers.replaced {
                var action = previous
                _ = sigaction(number, &action, nil)
            }
            handlers.replaced = [:]
        }
    }
}
