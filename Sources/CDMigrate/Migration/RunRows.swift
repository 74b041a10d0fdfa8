/// The rows a whole run handles, for progress (`MigrationProgress.runProcessed`, `runTotal`): one
/// entry per step of the run (entity mapping × stage, over every pass, in the order the run takes
/// them), each an estimate until the step names its own total.
///
/// Before the first pass, every entity mapping's three stages are estimated at its source count
/// (the instances stage 1 fetches, which stages 2 and 3 then visit as destination instances);
/// a request that cannot be counted cheaply is estimated at 0. A step that reports its total
/// replaces its estimate, and a stage 1 total also becomes the estimate of the mapping's stages 2
/// and 3 until they report theirs: the run's total may grow (or shrink) as the run learns.
///
/// Beside the rows, the run's work: each step's rows weighted by what a row of its stage costs
/// (`stageWeights`), for a time-remaining estimate that does not jump as the run moves from
/// stage 1, which copies, to the cheaper relationships and validation.
struct RunRows {
    /// The cost of a row in each stage, relative to the others (shares of the run's time per row
    /// measured on reference-1's migrations at 200,000 rows: the declarative copy 0.88 / 0.00 /
    /// 0.12, the whole migration in SQL 0.82 / 0.00 / 0.18, the Python policy 0.91 / 0.04 / 0.06,
    /// an inferred step by the general path 0.88 / 0.00 / 0.12; see BENCHMARKS.md). Stage 2
    /// keeps a small weight of its own, as a policy setting relationships per row spends more there.
    static let stageWeights: [MigrationProgress.Stage: Double] = [
        .createDestinationInstances: 0.85, .createRelationships: 0.05, .validate: 0.10,
    ]

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
    /// Each step's weight per row (`stageWeights` of its stage; 1 when the stages are not known).
    private var weights: [Double] = []
    /// Work of the finished steps, and of every step as far as known (rows × weight).
    private(set) var finishedWork = 0.0
    private(set) var totalWork = 0.0

    /// Starts a run whose steps have these estimates; `follows` maps a stage 1 step to the
    /// steps (stages 2 and 3 of the same entity mapping) whose estimate its total becomes.
    /// `stages` names each step's stage (as many as `estimates`; otherwise every row weighs 1).
    init(estimates: [Int] = [], follows: [Int: [Int]] = [:], stages: [MigrationProgress.Stage] = []) {
        rows = estimates.map { max(0, $0) }
        reported = Array(repeating: false, count: rows.count)
        self.follows = follows
        total = rows.reduce(0) { $0.addingReportingOverflow($1).overflow ? Int.max : $0 + $1 }
        weights =
            stages.count == rows.count
            ? stages.map { Self.stageWeights[$0] ?? 1 } : Array(repeating: 1, count: rows.count)
        totalWork = zip(rows, weights).reduce(0) { $0 + Double($1.0) * $1.1 }
    }

    /// The stages of a run's steps as the run takes them: per pass, every entity mapping's stage 1,
    /// then every one's stage 2, then stage 3 (`mappingsPerPass`: the entity mappings of each pass).
    static func stages(mappingsPerPass: [Int]) -> [MigrationProgress.Stage] {
        mappingsPerPass.flatMap { count in
            [MigrationProgress.Stage.createDestinationInstances, .createRelationships, .validate].flatMap {
                Array(repeating: $0, count: max(0, count))
            }
        }
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
        finishedWork += Double(rows[step]) * weights[step]
    }

    /// Rows done: the finished steps' and `processed` of the step running (at most its rows).
    func processed(step: Int, within processed: Int) -> Int {
        guard rows.indices.contains(step) else { return finished }
        return Self.add(finished, min(max(0, processed), rows[step]))
    }

    /// Work done: the finished steps' and that of `processed` rows of the step running.
    func processedWork(step: Int, within processed: Int) -> Double {
        guard rows.indices.contains(step) else { return finishedWork }
        return finishedWork + Double(min(max(0, processed), rows[step])) * weights[step]
    }

    private mutating func set(_ step: Int, _ value: Int) {
        total = Self.add(total - rows[step], value)
        totalWork += Double(value - rows[step]) * weights[step]
        rows[step] = value
    }

    private static func add(_ a: Int, _ b: Int) -> Int {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? Int.max : sum
    }
}
