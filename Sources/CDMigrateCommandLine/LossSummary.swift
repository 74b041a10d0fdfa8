import CDMigrate
import Foundation

/// The loss report on the command line: a short summary on standard error (each loss the mapping
/// does not declare, one line; the intended ones counted), the full report under `--json` with
/// the keys of docs/loss-report.md (the engine's own JSON, so the C API and Python agree).
enum LossSummary {
    /// The report as JSON objects, key for key the engine's.
    static func object(_ losses: LossReport) -> [Any] {
        let text = losses.json.serialized()
        return (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [Any] ?? []
    }

    /// Summary lines: "lost: <prefix>Post.color: 1001 values that no property mapping reads (…)", and
    /// "<n> intended losses (see --json)".
    static func lines(_ losses: LossReport, prefix: String = "") -> [String] {
        var lines = losses.unintended.map { "lost: \(prefix)\($0.summary)" }
        let intended = losses.losses.count - losses.unintended.count
        if intended > 0 {
            lines.append("\(prefix)\(intended) loss\(intended == 1 ? "" : "es") the mapping declares as intended (details with --json)")
        }
        return lines
    }

    static func warn(_ losses: LossReport, prefix: String = "", _ output: Output) {
        for line in lines(losses, prefix: prefix) { output.warning(line) }
    }
}
