import CDMigrate
import FoundationEssentials

/// How one store of a fleet run ended, read from its child process: its exit status and the JSON
/// document it printed (`cdmigrate migrate STORE --json`).
struct FleetStoreResult {
    enum Status: String {
        /// Migrated.
        case migrated
        /// With --dry-run: the models, the mappings and the store's version check out.
        case checked
        /// The migration failed: `error` says why; the child removed what it wrote.
        case failed
        /// The child process died (a signal) or printed no report.
        case crashed
        /// Not started: the run was interrupted first; or, with `notAStore`, a file of a folder
        /// given that is not a Core Data store.
        case skipped
    }

    var store: String
    var destination: String
    var status: Status
    /// The child's exit status (nil when it died of a signal or never ran).
    var exitStatus: Int32?
    /// The store's version and the version reached, when the child named them (model sets).
    var version: String?
    var targetVersion: String?
    /// Instances per destination entity.
    var counts: [String: Int] = [:]
    var errorCode: Int?
    var errorName: String?
    var errorMessage: String?
    /// Seconds from the child's start to its end.
    var duration: Double
    /// In place, the earlier name of the same file (a link) whose migration this result is.
    var sameStoreAs: String?
    /// The warnings of the child's report (a step's named by the step, as `migrate --models` prints them).
    var warnings: [String] = []
    /// A file of a folder given that is not a store (`reason` says what it is): listed, never migrated.
    var notAStore = false
    /// Why a skipped entry was skipped.
    var reason: String?

    /// Reads a child's result: `document` is what it printed on standard output, `errorText`
    /// what it printed on standard error (kept for crashes, which print no JSON).
    init(
        store: String, destination: String, exitStatus: Int32?, signal: Int32?, document: Data, errorText: String,
        duration: Double
    ) {
        self.store = store
        self.destination = destination
        self.exitStatus = exitStatus
        self.duration = duration
        let object = (try? JSON.parse(String(decoding: document, as: UTF8.self)))?.anyValue as? [String: Any]
        if let object = object {
            version = object["storeVersion"] as? String
            targetVersion = object["targetVersion"] as? String
            counts = Self.counts(object)
            warnings = Self.warnings(object)
            if let error = object["error"] as? [String: Any] {
                errorCode = error["code"] as? Int
                errorName = error["name"] as? String
                errorMessage = error["message"] as? String
            }
        }
        if let signal = signal {
            status = .crashed
            errorMessage = "the process migrating it was killed by signal \(signal)" + Self.lastLine(errorText)
        } else if exitStatus == 0, object?["ok"] as? Bool == true {
            status = object?["dryRun"] as? Bool == true ? .checked : .migrated
        } else if object?["ok"] as? Bool == false {
            status = .failed
        } else {
            status = .crashed
            errorMessage =
                "the process migrating it exited with \(exitStatus ?? -1) and no report" + Self.lastLine(errorText)
        }
    }

    /// A store the run never started.
    init(skipped store: String, destination: String) {
        self.store = store
        self.destination = destination
        status = .skipped
        duration = 0
        errorMessage = "not started: the run was interrupted"
        reason = errorMessage
    }

    /// A file of a folder given that is not a Core Data store.
    init(notAStore entry: StoreFolder.Entry) {
        store = entry.path
        destination = ""
        status = .skipped
        duration = 0
        notAStore = true
        reason = entry.skipReason ?? "not a Core Data store"
    }

    /// The destination counts of a one-step report, or of a model set's last step.
    private static func counts(_ object: [String: Any]) -> [String: Int] {
        if let report = object["report"] as? [String: Any], let counts = report["destinationCounts"] as? [String: Int] {
            return counts
        }
        if let steps = object["steps"] as? [[String: Any]], let last = steps.last,
            let report = last["report"] as? [String: Any], let counts = report["destinationCounts"] as? [String: Int]
        {
            return counts
        }
        return [:]
    }

    /// A one-step report's warnings, or a model set's plan warnings then each step's.
    private static func warnings(_ object: [String: Any]) -> [String] {
        var lines: [String] = []
        if let report = object["report"] as? [String: Any] { lines += report["warnings"] as? [String] ?? [] }
        lines += object["warnings"] as? [String] ?? []
        for step in object["steps"] as? [[String: Any]] ?? [] {
            let label = "\(step["from"] as? String ?? "?") → \(step["to"] as? String ?? "?"): "
            lines += ((step["report"] as? [String: Any])?["warnings"] as? [String] ?? []).map { label + $0 }
        }
        var seen = Set<String>()
        return lines.filter { seen.insert($0).inserted }
    }

    /// The result as a JUnit test case (named by the store's path as given).
    var junitCase: JUnitReport.TestCase {
        let outcome: JUnitReport.Outcome
        let code = errorCode.map { "error \($0): " } ?? ""
        switch status {
        case .migrated, .checked:
            outcome = .passed
        case .failed:
            outcome = .failure(
                message: code + (errorMessage ?? ""), type: errorName ?? "failed", detail: code + (errorMessage ?? ""))
        case .crashed:
            outcome = .error(message: errorMessage ?? "", type: "crashed", detail: errorMessage ?? "")
        case .skipped:
            outcome = .skipped(message: reason ?? errorMessage ?? "")
        }
        return JUnitReport.TestCase(
            name: store, file: store, time: duration, outcome: outcome,
            output: status == .migrated || status == .checked ? line : "")
    }

    private static func lastLine(_ text: String) -> String {
        guard let line = text.split(whereSeparator: \.isNewline).last else { return "" }
        return ": " + line
    }

    /// One line of JSON (keys sorted).
    var jsonObject: [String: Any] {
        var object: [String: Any] = [
            "store": store, "destination": destination, "status": status.rawValue,
            "duration": (duration * 1000).rounded() / 1000, "counts": counts,
        ]
        if let exitStatus = exitStatus { object["exitStatus"] = Int(exitStatus) }
        if let version = version { object["version"] = version }
        if let targetVersion = targetVersion { object["targetVersion"] = targetVersion }
        if let first = sameStoreAs { object["sameStoreAs"] = first }
        if !warnings.isEmpty { object["warnings"] = warnings }
        if notAStore {
            return ["store": store, "status": status.rawValue, "notAStore": true, "reason": reason ?? ""]
        }
        if let reason = reason { object["reason"] = reason }
        if status != .migrated && status != .checked {
            var error: [String: Any] = ["message": errorMessage ?? ""]
            if let code = errorCode { error["code"] = code }
            if let name = errorName { error["name"] = name }
            object["error"] = error
        }
        return object
    }

    /// One line for people.
    var line: String {
        guard let first = sameStoreAs else { return ownLine }
        return ownLine + "  (the same store as \(first), migrated once)"
    }

    private var ownLine: String {
        let seconds = Output.seconds(duration) + " s"
        let versions = version.map { v in " (\(v) → \(targetVersion ?? "?"))" } ?? ""
        switch status {
        case .migrated:
            return "migrated \(store)\(versions) → \(destination)  \(seconds)"
        case .checked:
            return "checked  \(store): nothing written  \(seconds)"
        case .failed:
            let code = errorCode.map { " \($0)" + (errorName.map { " \($0)" } ?? "") } ?? ""
            return "failed   \(store):\(code) \(errorMessage ?? "")  \(seconds)"
        case .crashed:
            return "crashed  \(store): \(errorMessage ?? "")  \(seconds)"
        case .skipped:
            return "skipped  \(store): \(reason ?? errorMessage ?? "")"
        }
    }
}
