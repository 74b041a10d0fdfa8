/// The rows a whole run handles, for progress (`MigrationProgress.runProcessed`, `runTotal`): one
/// entry per step of the run (entity mapping × stage, over every pass, in the order the run takes
/// them), each an estimate until the step names its own total.
///
/// Before the first pass, every entity mapping's three stages are estimated at its source count
/// (the instances stage 1 fetches, which stages 2 and 3 then visit as destination instances);
/// a request that cannot be counted cheaply is estimated at 0. A step that reports its total
/// replaces its estimate, and a stage 1 total also becomes the estimate of the mapping's stages 2
/// and 3 until they report theirs: the run's total may grow (or shrink) as the run learns.
struct RunRows {
    /// Rows of each step: its reported total, or the estimate until it reports.
    private var rows: [Int] = []
    /// Whether a step has reported its own total.
    private var reported: [Bool] = []
    /// Steps whose estimate follows a stage 1 step's total: (stage 1 step, later step).
    private var follows: [Int: [Int]] = [:]
    /// Rows of the finished steps.
    private(set) var finished = 0
    /// Rows of every step, as far as known.
    private(set) var total = 0

    /// Starts a run whose steps have these estimates; `follows` maps a stage 1 step to the
    /// steps (stages 2 and 3 of the same entity mapping) whose estimate its total becomes.
    init(estimates: [Int] = [], follows: [Int: [Int]] = [:]) {
        rows = estimates.map { max(0, $0) }
        reported = Array(repeating: false, count: rows.count)
        self.follows = follows
        total = rows.reduce(0) { $0.addingReportingOverflow($1).overflow ? Int.max : $0 + $1 }
    }

    /// A step names its total: it replaces the step's estimate (and its followers' estimates).
    mutating func report(step: Int, total stepTotal: Int) {
        guard rows.indices.contains(step), stepTotal > 0 else { return }
        set(step, max(0, stepTotal))
        reported[step] = true
        for later in follows[step] ?? [] where rows.indices.contains(later) && !reported[later] {
            set(later, stepTotal)
        }
    }

    /// The step has finished: its rows count as done.
    mutating func finish(step: Int) {
        guard rows.indices.contains(step) else { return }
        finished = Self.add(finished, rows[step])
    }

    /// Rows done: the finished steps' and `processed` of the step running (at most its rows).
    func processed(step: Int, within processed: Int) -> Int {
        guard rows.indices.contains(step) else { return finished }
        return Self.add(finished, min(max(0, processed), rows[step]))
    }

    private mutating func set(_ step: Int, _ value: Int) {
        total = Self.add(total - rows[step], value)
        rows[step] = value
    }

    private static func add(_ a: Int, _ b: Int) -> Int {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? Int.max : sum
    }
}
