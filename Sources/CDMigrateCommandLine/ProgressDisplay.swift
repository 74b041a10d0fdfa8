import CDMigrate

#if canImport(Glibc)
    import Glibc
#endif

/// Progress on standard error when it is a terminal (nothing otherwise): one line
/// (`ProgressLine`) redrawn in place with `\r` and erase-to-end-of-line, clamped to the terminal's
/// width so that it never wraps. A message printed while the line stands (a warning, an error, the
/// summary) starts on a line of its own (`endPartialLine`).
final class ProgressDisplay {
    private let enabled: Bool
    private let terminal: Bool
    private let width: () -> Int
    private let now: () -> Double
    private let write: (String) -> Void
    /// Names of a chain's steps ("v2 → v3"), by step index.
    private let stepNames: [String]
    private var start: Double?
    private var lastDraw = -Double.infinity

    /// The display whose line stands unfinished on the terminal, if any.
    nonisolated(unsafe) private static var partial: ProgressDisplay?

    /// - Parameters:
    ///   - enabled: false with `--quiet` or `--json`.
    ///   - stepNames: a chain's steps by index (`plan`'s "v1 → v2"), empty for one step.
    ///   - terminal, width, now, write: where the display draws (standard error, its width, the
    ///     monotonic clock) unless a test gives its own.
    init(
        enabled: Bool, stepNames: [String] = [], terminal: Bool = isatty(STDERR_FILENO) != 0,
        width: @escaping () -> Int = { ProgressDisplay.terminalWidth(STDERR_FILENO) },
        now: @escaping () -> Double = ProgressDisplay.seconds,
        write: @escaping (String) -> Void = { fputs($0, stderr) }
    ) {
        self.enabled = enabled
        self.stepNames = stepNames
        self.terminal = terminal
        self.width = width
        self.now = now
        self.write = write
    }

    func show(_ progress: MigrationProgress) {
        guard enabled, terminal else { return }
        let time = now()
        if start == nil { start = time }
        let finished = progress.entityMappingName.isEmpty && progress.step + 1 >= progress.stepCount
        guard time - lastDraw >= 0.1 || finished else { return }
        lastDraw = time
        let name = stepNames.indices.contains(progress.step) ? stepNames[progress.step] : nil
        let line = ProgressLine.format(
            .init(progress: progress, elapsed: time - (start ?? time), stepName: name, width: width()))
        write("\r" + line + "\u{1B}[K")
        ProgressDisplay.partial = self
    }

    /// Ends the line the display drew (at the end of the run).
    func finish() {
        if ProgressDisplay.partial === self { ProgressDisplay.endPartialLine() }
    }

    /// Writes the newline that ends a progress line standing on the terminal, if one does: called
    /// before any message (warning, error, summary) is printed.
    static func endPartialLine() {
        guard let display = partial else { return }
        partial = nil
        display.write("\n")
    }

    /// The terminal's columns: TIOCGWINSZ on `fd`, else `COLUMNS`, else 80.
    static func terminalWidth(_ fd: Int32) -> Int {
        var size = winsize()
        if ioctl(fd, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        return columns(getenv("COLUMNS").map { String(cString: $0) })
    }

    /// `COLUMNS` as a width: its value when a positive number, else 80.
    static func columns(_ value: String?) -> Int {
        guard let value = value, let n = Int(value), n > 0 else { return 80 }
        return n
    }

    static func seconds() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
    }
}
