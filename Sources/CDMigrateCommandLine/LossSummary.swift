import CDMigrate

/// The loss report on the command line: a short summary on standard error (each loss the mapping
/// does not declare, one line; the intended ones counted), the full report under `--json` with
/// the keys of docs/loss-report.md (the engine's own JSON, so the C API and Python agree).
enum LossSummary {
    /// Summary lines: "lost: <prefix>Post.color: 1001 values that no property mapping reads (…)", and
    /// "<n> intended losses (see --json)".
    static func lines(_ losses: LossReport, prefix: String = "") -> [String] {
        var lines = losses.unintended.map { "lost: \(prefix)\($0.summary)" }
        let intended = losses.losses.count - losses.unintended.count
        if intended > 0 {
            lines.append(
                "\(prefix)\(intended) loss\(intended == 1 ? "" : "es") the mapping declares as intended (details with --json)"
            )
        }
        return lines
    }

    static func warn(_ losses: LossReport, prefix: String = "", _ output: Output) {
        for line in lines(losses, prefix: prefix) { output.warning(line) }
    }
}
