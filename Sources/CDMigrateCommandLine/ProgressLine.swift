import CDMigrate

/// One line of the progress display, made from what the run reports and the time elapsed: a pure
/// function (state in, line out), so that it is tested without a terminal.
///
/// `42% [########-----------] step 2/4 v2 → v3 · relationships Recipe 1200/5000 · 1:23 left`
///
/// The time left is for the whole run — every entity mapping, stage and pass, and every step of a
/// chain — from the work the run has done over the work it has: rows weighted by what a row of
/// their stage costs (`runWork`, `runWorkTotal`: a row copied in stage 1 counts for more than one
/// validated in stage 3, so the estimate does not jump between stages; else `runProcessed` and
/// `runTotal`; the fraction of steps when no row total is known), shown once `minimumElapsed` seconds have passed
/// and `minimumFraction` of the run is done. The line never exceeds `width - 1` columns (the last
/// column is left free so that no terminal wraps): the bar goes first, then the counts, then the
/// entity mapping's name is shortened with "…".
struct ProgressLine {
    /// What the line shows.
    struct State {
        var progress: MigrationProgress
        /// Seconds since the run began.
        var elapsed: Double
        /// The chain step's name ("v2 → v3"), nil outside a chain.
        var stepName: String?
        /// The terminal's columns.
        var width: Int
    }

    /// Seconds before any time left is shown.
    static let minimumElapsed = 2.0
    /// Share of the run done before any time left is shown.
    static let minimumFraction = 0.01

    /// The whole run's share done: its work (rows weighted by what a row of their stage costs:
    /// `runWork`, `runWorkTotal`) when known, else rows when the run knows a row total, else the
    /// step fraction (over the chain's steps).
    static func runFraction(_ progress: MigrationProgress) -> Double {
        if progress.runWorkTotal > 0, progress.runWorkTotal.isFinite, progress.runWork.isFinite {
            return min(1, max(0, progress.runWork / progress.runWorkTotal))
        }
        if progress.runTotal > 0 {
            return min(1, max(0, Double(progress.runProcessed) / Double(progress.runTotal)))
        }
        let count = Double(max(1, progress.stepCount))
        return min(1, max(0, (Double(progress.step) + min(1, max(0, progress.fraction))) / count))
    }

    /// Seconds left for the whole run, nil until the estimate means something.
    static func secondsLeft(_ progress: MigrationProgress, elapsed: Double) -> Double? {
        let fraction = runFraction(progress)
        guard elapsed >= minimumElapsed, fraction >= minimumFraction, elapsed.isFinite else { return nil }
        return fraction >= 1 ? 0 : elapsed * (1 - fraction) / fraction
    }

    /// The line (without `\r` or erase-to-end-of-line), at most `width - 1` columns.
    static func format(_ state: State) -> String {
        let progress = state.progress
        let fraction = runFraction(progress)
        let percent = "\(Int((fraction * 100).rounded(.down)))%"
        var step = ""
        if progress.stepCount > 1 || state.stepName != nil {
            step = "step \(progress.step + 1)/\(max(1, progress.stepCount))"
            if let name = state.stepName, !name.isEmpty { step += " " + name }
        }
        var what = progress.entityMappingName.isEmpty ? "" : "\(progress.stage) \(progress.entityMappingName)"
        let counts = progress.total > 0 ? "\(progress.processed)/\(progress.total)" : ""
        let left = secondsLeft(progress, elapsed: state.elapsed).map { clock($0) + " left" } ?? ""
        let limit = max(1, state.width - 1)

        func join(bar: Int, counts: String, what: String) -> String {
            var parts = [percent]
            if bar > 0 {
                let filled = max(0, min(bar, Int(fraction * Double(bar))))
                parts.append(
                    "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: bar - filled) + "]")
            }
            if !step.isEmpty { parts.append(step) }
            var tail = [what, counts].filter { !$0.isEmpty }.joined(separator: " ")
            if !left.isEmpty { tail += (tail.isEmpty ? "" : " · ") + left }
            if !tail.isEmpty { parts.append((step.isEmpty ? "" : "· ") + tail) }
            return parts.joined(separator: " ")
        }
        // The widest bar that leaves the rest whole, down to no bar.
        for bar in stride(from: 20, through: 10, by: -5) {
            let line = join(bar: bar, counts: counts, what: what)
            if line.count <= limit { return line }
        }
        var line = join(bar: 0, counts: counts, what: what)
        if line.count <= limit { return line }
        line = join(bar: 0, counts: "", what: what)
        if line.count > limit, !what.isEmpty {
            // Shorten the entity mapping's name, keeping its start.
            let over = line.count - limit
            let keep = max(0, what.count - over - 1)
            what = keep > 0 ? String(what.prefix(keep)) + "…" : ""
            line = join(bar: 0, counts: "", what: what)
        }
        return line.count <= limit ? line : String(line.prefix(limit))
    }

    /// Seconds as `m:ss`, or `1h05m` from an hour on.
    static func clock(_ seconds: Double) -> String {
        guard seconds.isFinite, seconds >= 0, seconds < 1e9 else { return "?" }
        let s = Int(seconds.rounded())
        return s >= 3600 ? "\(s / 3600)h\(format2(s / 60 % 60))m" : "\(s / 60):\(format2(s % 60))"
    }

    private static func format2(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
}
