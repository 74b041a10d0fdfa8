#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Who a process is, beyond its pid (which the kernel reuses): the boot it runs in and its start
/// time since that boot. A lock file records its owner so (`DestinationLock`).
struct ProcessIdentity: Equatable {
    var pid: Int32
    /// `/proc/sys/kernel/random/boot_id`: a new value at every boot ("" where unknown).
    var boot: String
    /// Field 22 of `/proc/<pid>/stat`: the start time in clock ticks since boot (0 where unknown).
    var start: UInt64

    static var current: ProcessIdentity { identity(of: getpid()) }

    static func identity(of pid: Int32) -> ProcessIdentity {
        let boot = ((try? FileIO.readText(path: "/proc/sys/kernel/random/boot_id")) ?? "").trimmingWhitespace
        var start: UInt64 = 0
        if let text = try? FileIO.readText(path: "/proc/\(pid)/stat"), let close = text.lastIndex(of: ")") {
            let fields = text[text.index(after: close)...].split(separator: " ")
            if fields.count > 19 { start = UInt64(fields[19]) ?? 0 }
        }
        return ProcessIdentity(pid: pid, boot: boot, start: start)
    }

    /// "pid=4242 boot=… start=…", as a lock file records it.
    var text: String { "pid=\(pid) boot=\(boot.isEmpty ? "-" : boot) start=\(start)" }

    /// Whether the process a lock file recorded (`text`) still runs: same boot, the pid alive
    /// with the same start time.
    static func isAlive(_ text: String) -> Bool {
        var fields: [String: String] = [:]
        for part in text.split(separator: " ") {
            let pair = part.split(separator: "=", maxSplits: 1)
            if pair.count == 2 { fields[String(pair[0])] = String(pair[1]) }
        }
        guard let pid = fields["pid"].flatMap({ Int32($0) }), pid > 0 else { return false }
        let now = identity(of: pid)
        if let boot = fields["boot"], boot != "-", !now.boot.isEmpty, boot != now.boot { return false }
        guard kill(pid, 0) == 0 || errno == EPERM else { return false }
        if let start = fields["start"].flatMap({ UInt64($0) }), start != 0, now.start != 0 { return start == now.start }
        return true
    }
}
