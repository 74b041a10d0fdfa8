import CDMigrate

#if canImport(Glibc)
    import Glibc
#endif

/// Progress on standard error: a bar with rows per second and time remaining when it is a
/// terminal, one plain line per step otherwise.
final class ProgressDisplay {
    private let enabled: Bool
    private let terminal: Bool
    private var lastStep = ""
    private var stepStart = 0.0
    private var lastDraw = 0.0
    private var drewBar = false

    init(enabled: Bool) {
        self.enabled = enabled
        self.terminal = isatty(STDERR_FILENO) != 0
    }

    func show(_ progress: MigrationProgress) {
        guard enabled else { return }
        let now = Self.seconds()
        let step =
            "pass \(progress.pass + 1), stage \(progress.stage.rawValue) (\(progress.stage)), \(progress.entityMappingName)"
        if step != lastStep {
            lastStep = step
            stepStart = now
            if !terminal && !progress.entityMappingName.isEmpty { write("\(step)\n") }
        }
        guard terminal, now - lastDraw >= 0.1 || progress.fraction >= 1 else { return }
        lastDraw = now
        let width = 30
        let filled = max(0, min(width, Int(progress.fraction * Double(width))))
        var line = "\r[" + String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled) + "] "
        line += "\(Int(progress.fraction * 100))%  \(step)"
        if progress.total > 0 {
            line += "  \(progress.processed)/\(progress.total)"
            let elapsed = now - stepStart
            if elapsed > 0.5, progress.processed > 0 {
                let rate = Double(progress.processed) / elapsed
                let remaining = Double(progress.total - progress.processed) / rate
                line += "  \(Int(rate)) rows/s  \(Self.clock(remaining)) left"
            }
        }
        write(line + "\u{1B}[K")
        drewBar = true
    }

    func finish() {
        if drewBar { write("\n") }
    }

    private func write(_ text: String) { fputs(text, stderr) }

    private static func seconds() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
    }

    private static func clock(_ seconds: Double) -> String {
        guard seconds.isFinite else { return "?" }
        let s = Int(seconds.rounded())
        return s >= 3600 ? "\(s / 3600)h\(format2(s / 60 % 60))m" : "\(s / 60):\(format2(s % 60))"
    }

    private static func format2(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
}
