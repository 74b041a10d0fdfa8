/// The whole run's rows for progress: estimated from the source counts before the first pass
/// (`RunRows`), only when a progress handler listens.
extension MigrationManager {
    /// Estimates every step of the run (passes × stages × entity mappings, in run order) at its
    /// entity mapping's source count, one `COUNT(*)` each (kept for stage 1 where `countSource`
    /// keeps it; a predicate translated to SQL is counted again there); a request that SQL cannot
    /// count (a predicate evaluated per row, a limit, an offset) counts 0 until stage 1 counts it.
    func estimateRunRows(source: PersistentStore) throws {
        guard progressHandler != nil else {
            run.runRows = RunRows()
            return
        }
        var estimates: [Int] = []
        var follows: [Int: [Int]] = [:]
        let stages = RunRows.stages(mappingsPerPass: mappingModels.map { $0.entityMappings.count })
        for model in mappingModels {
            let mappings = model.entityMappings
            let plans = SourceFetchPlan.plans(for: mappings, sourceStore: source)
            var counts: [Int] = []
            for plan in plans {
                guard let request = plan, request.filter == nil, request.fetchLimit == nil, request.fetchOffset == 0
                else {
                    counts.append(0)
                    continue
                }
                counts.append(try countSource(request, in: source))
            }
            let first = estimates.count
            for index in counts.indices {
                follows[first + index] = [first + mappings.count + index, first + 2 * mappings.count + index]
            }
            estimates += counts + counts + counts
        }
        run.runRows = RunRows(estimates: estimates, follows: follows, stages: stages)
    }
}
