#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The steps that bring a store from the version it was written with to a target version, one
/// version at a time in the model set's order, each with the mapping models written for it or
/// else Core Data's inferred mapping.
///
/// Core Data counterpart: the stages of an `NSStagedMigrationManager`, and what
/// `NSPersistentStoreCoordinator` does on opening an old store: find the store's model by its
/// metadata (`mergedModel(from:forStoreMetadata:)`), then a mapping model per step
/// (`NSMappingModel(from:forSourceModel:destinationModel:)`, else
/// `inferredMappingModel(forSourceModel:destinationModel:)`).
public struct MigrationPlan {
    /// The store the plan starts from.
    public let storePath: String
    /// The version the store was written with.
    public let storeVersionName: String
    /// The version the plan ends at.
    public let targetVersionName: String
    /// Empty when the store is already at the target version.
    public private(set) var stages: [MigrationStage]
    /// The model set's warnings and the planner's (mapping models ignored, and why).
    public let warnings: [String]

    /// Whether the store is already at the target version (no stages).
    public var isAtTarget: Bool { stages.isEmpty }

    /// Plans the migration of the store at `storePath` to `targetVersion` (default: the set's
    /// current version).
    ///
    /// - Parameters:
    ///   - storePath: the store (read-only: only its metadata is read).
    ///   - models: the versions and mapping models.
    ///   - targetVersion: a version name of the set; nil for the current one.
    /// - Throws: `MigrationError` — `.migrationMissingSourceModel` (134130) when no version of the
    ///   set matches the store's entity hashes (the message lists the store's hashes and each
    ///   version's differences); `.invalidArgument` for an unknown target or a target older than
    ///   the store; `.inferredMappingModel` (134190) for a step with no mapping model whose
    ///   changes cannot be inferred (naming entity, property and rule); `.invalidMapping` for a
    ///   matching mapping model that does not fit its models; the store's read errors.
    public init(storeAt storePath: String, models: ModelSet, targetVersion: String? = nil) throws {
        let info = try StoreInfo(contentsOf: storePath, countingRows: false)
        guard let storeVersion = models.versionName(forStoreMetadata: info.metadata) else {
            throw MigrationPlan.unmatchedStore(storePath, metadata: info.metadata, models: models)
        }
        // "Becomes non-optional" in a step from the store's version is judged by its rows.
        let census = models.models[storeVersion].map { StoreRowCensus(storePath: storePath, model: $0) }
        defer { census?.close() }
        try self.init(
            storePath: storePath, storeVersion: storeVersion, models: models, targetVersion: targetVersion,
            census: census)
    }

    /// Plans from a known store version (the store is not read, so a step that makes a property
    /// non-optional with nothing to fill it is refused whatever the rows).
    public init(storePath: String, storeVersion: String, models: ModelSet, targetVersion: String? = nil) throws {
        try self.init(
            storePath: storePath, storeVersion: storeVersion, models: models, targetVersion: targetVersion, census: nil)
    }

    init(storePath: String, storeVersion: String, models: ModelSet, targetVersion: String?, census: StoreRowCensus?)
        throws
    {
        let target = targetVersion ?? models.currentVersionName
        guard let targetIndex = models.versionNames.firstIndex(of: target) else {
            throw MigrationError(
                .invalidArgument,
                "the model set '\(models.path)' has no version '\(target)' (it holds \(models.versionNames.joined(separator: ", ")))"
            )
        }
        guard let storeIndex = models.versionNames.firstIndex(of: storeVersion) else {
            throw MigrationError(.invalidArgument, "the model set '\(models.path)' has no version '\(storeVersion)'")
        }
        var warnings = models.warnings
        let rows = census.map { census -> MappingInference.RowCount in
            { entity, property in try census.rows(of: entity, lacking: property) }
        }
        self.storePath = storePath
        self.storeVersionName = storeVersion
        self.targetVersionName = target
        if storeIndex > targetIndex {
            // Core Data orders no versions: its automatic migration takes a mapping model from the
            // store's model to the current one, else infers one straight between them.
            let order =
                "the set's order (\(models.versionNames.joined(separator: ", "))) puts the store's version '\(storeVersion)' after the target '\(target)'"
            let stage: MigrationStage
            if MigrationPlan.hasMappingModel(from: storeVersion, to: target, in: models) {
                stage = try MigrationPlan.stage(from: storeVersion, to: target, in: models, warnings: &warnings)
            } else {
                do {
                    stage = try MigrationPlan.inferredStage(
                        from: storeVersion, to: target, in: models, rows: rows,
                        why:
                            "\(order); Core Data orders no versions: its automatic migration infers one mapping straight from the store's model to the current one, as here"
                    )
                } catch let error as MigrationError {
                    throw MigrationError(
                        error.code,
                        "\(order), and no mapping model records \(ModelSet.Step(storeVersion, target)); Core Data's automatic migration would infer one mapping straight between them, which it cannot: \(error.message)",
                        path: error.path, underlying: error.underlying)
                }
            }
            warnings.append(
                "\(order): the plan takes one step straight from '\(storeVersion)' to '\(target)', as Core Data's automatic migration does"
            )
            self.stages = [stage]
            self.warnings = warnings
            self.directStep = nil
            return
        }
        // A mapping model straight to the target is taken first: it is the one Core Data's
        // NSMappingModel(from:forSourceModel:destinationModel:) finds for the current model, and
        // the one apps' progressive migrations try before any other (a later mapping model written
        // to replace the steps in between). Else one version at a time, except where no mapping
        // model records the next step and one records a step from this version to a later one up
        // to the target: that step is taken, as the mapping model was written for it.
        let names = models.versionNames
        var hops: [(from: Int, to: Int, mapped: Bool)] = []
        var i = storeIndex
        while i < targetIndex {
            var next = i + 1
            var mapped = MigrationPlan.hasMappingModel(from: names[i], to: names[next], in: models)
            if next < targetIndex, MigrationPlan.hasMappingModel(from: names[i], to: names[targetIndex], in: models) {
                next = targetIndex
                mapped = true
            } else if !mapped, next < targetIndex,
                let later = (next + 1...targetIndex).first(where: {
                    MigrationPlan.hasMappingModel(from: names[i], to: names[$0], in: models)
                })
            {
                next = later
                mapped = true
            }
            hops.append((i, next, mapped))
            i = next
        }
        var stages: [MigrationStage] = []
        // Names that differ in more than their numbers ("Model_exams_v10", "Model_courselists_v21")
        // do not say which version is newer: the order between them is a guess, which Core Data
        // never makes. Where no mapping model applies on the way, its direct step is taken.
        let between = Array(names[storeIndex...targetIndex]).filter { $0 != models.currentVersionName }
        if hops.count > 1, hops.allSatisfy({ !$0.mapped }), let (a, b) = MigrationPlan.namesThatDoNotOrder(between) {
            let why =
                "one mapping is inferred straight from the store's model to the target's, as Core Data's automatic migration infers it, because the version names do not say their order ('\(a)' and '\(b)' differ in more than their numbers)"
            if let direct = try? MigrationPlan.inferredStage(
                from: storeVersion, to: target, in: models, rows: rows, why: why,
                skipping: Array(names[(storeIndex + 1)..<targetIndex]))
            {
                warnings.append(
                    "the version names do not say their order ('\(a)' and '\(b)' differ in more than their numbers): the plan takes the inferred step \(ModelSet.Step(storeVersion, target)) instead of \(hops.count) steps in the order of the names"
                )
                self.stages = [direct]
                self.warnings = warnings
                self.directStep = nil
                return
            }
            warnings.append(
                "the version names do not say their order ('\(a)' and '\(b)' differ in more than their numbers), and the step straight from '\(storeVersion)' to '\(target)' cannot be inferred: the plan goes through the versions in the order of their names"
            )
        }
        var h = 0
        while h < hops.count {
            let hop = hops[h]
            if hop.mapped {
                stages.append(
                    try MigrationPlan.stage(
                        from: names[hop.from], to: names[hop.to], in: models, warnings: &warnings,
                        skipping: Array(names[(hop.from + 1)..<hop.to])))
                h += 1
                continue
            }
            // A run of steps no mapping model records: inferred one by one, else straight across.
            var end = h
            while end + 1 < hops.count && !hops[end + 1].mapped { end += 1 }
            let start = hop.from
            let finish = hops[end].to
            var run: [MigrationStage] = []
            var failure: (step: ModelSet.Step, error: MigrationError)?
            for k in h...end {
                let step = ModelSet.Step(names[hops[k].from], names[hops[k].to])
                // From the store's version, its rows answer; further on, through the steps
                // that lead there from it.
                let stepRows = MigrationPlan.rows(after: stages + run, rows: rows, census: census)
                do {
                    run.append(
                        try MigrationPlan.inferredStage(
                            from: step.sourceVersionName, to: step.destinationVersionName, in: models,
                            rows: stepRows))
                } catch let error as MigrationError {
                    failure = (step, error)
                    break
                }
            }
            if let failure {
                guard end > h else { throw failure.error }
                let direct = ModelSet.Step(names[start], names[finish])
                let why =
                    "\(failure.step) cannot be inferred (\(MigrationPlan.problems(of: failure.error))), so one mapping is inferred straight from '\(names[start])' to '\(names[finish])', as Core Data's automatic migration infers from the store's model to the current one"
                do {
                    run = [
                        try MigrationPlan.inferredStage(
                            from: direct.sourceVersionName, to: direct.destinationVersionName, in: models,
                            rows: MigrationPlan.rows(after: stages, rows: rows, census: census), why: why,
                            skipping: Array(names[(start + 1)..<finish]))
                    ]
                } catch let error as MigrationError {
                    var chain = failure.error
                    chain.message +=
                        "; the step straight from '\(names[start])' to '\(names[finish])', which Core Data's automatic migration would infer, cannot be inferred either: \(MigrationPlan.problems(of: error))"
                    throw chain
                }
                warnings.append(
                    "\(failure.step) cannot be inferred: the plan takes the inferred step \(direct) instead")
            }
            stages += run
            h = end + 1
        }
        self.stages = stages
        self.warnings = warnings
        // Core Data's own step, offered where every step is inferred: straight from the store's
        // version to the target (nil where the plan takes it already or a mapping model applies).
        if stages.count > 1, stages.allSatisfy({ $0.isInferred }) {
            do {
                directStep = .inferable(
                    try MigrationPlan.inferredStage(
                        from: storeVersion, to: target, in: models, rows: rows,
                        why:
                            "Core Data's automatic migration infers one mapping straight from the store's model to the current one",
                        skipping: Array(names[(storeIndex + 1)..<targetIndex])))
            } catch let error as MigrationError {
                directStep = .notInferable(ModelSet.Step(storeVersion, target), MigrationPlan.problems(of: error))
            }
        } else {
            directStep = nil
        }
    }

    /// What answers "how many rows lack this property" for a step taken after `stages` (the
    /// stages from the store's version): the store's own rows for the first step, the rows traced
    /// back through `stages` for a later one (`InferredRowTrace`), nothing without a store.
    static func rows(
        after stages: [MigrationStage], rows: MappingInference.RowCount?, census: StoreRowCensus?
    ) -> MappingInference.RowCount? {
        guard !stages.isEmpty else { return rows }
        guard let census else { return nil }
        let trace = InferredRowTrace(census: census, stages: stages)
        return { entity, property in try trace.rows(of: entity, lacking: property) }
    }

    /// Core Data's own step, where every step of the plan is inferred: one mapping inferred
    /// straight from the store's version to the target, as `NSPersistentStoreCoordinator`'s
    /// automatic migration infers it (it never passes through the versions between). Nil where
    /// the plan is one step already or a mapping model applies.
    public enum DirectStep {
        /// The direct step can be inferred; `takingDirectStep()` gives the plan that takes it.
        case inferable(MigrationStage)
        /// The direct step cannot be inferred: the step and why not.
        case notInferable(ModelSet.Step, String)
    }

    /// The direct step offered beside the plan's steps (see `DirectStep`).
    public private(set) var directStep: DirectStep?

    /// This plan, or, where the direct step can be inferred, the plan that takes it instead of
    /// the version-by-version steps (Core Data's automatic migration).
    ///
    /// - Throws: `MigrationError` `.inferredMappingModel` (134190) when the direct step cannot be
    ///   inferred, saying why.
    public func takingDirectStep() throws -> MigrationPlan {
        switch directStep {
        case .none:
            return self
        case .inferable(let stage)?:
            var plan = self
            plan.stages = [stage]
            plan.directStep = nil
            return plan
        case .notInferable(let step, let why)?:
            throw MigrationError(
                .inferredMappingModel,
                "\(step): Core Data's automatic migration cannot infer a mapping straight between these versions: \(why)"
            )
        }
    }

    /// Two version names that differ in more than their numbers and separators (so natural order
    /// cannot tell which is newer), or nil when every name is the same text with other numbers
    /// ("Model", "Model 2", "Model_10"; "v1.0.0", "v2.0.0").
    static func namesThatDoNotOrder(_ names: [String]) -> (String, String)? {
        func stem(_ name: String) -> String {
            String(name.lowercased().filter { !$0.isNumber && $0 != " " && $0 != "_" && $0 != "-" && $0 != "." })
        }
        guard let first = names.first else { return nil }
        let firstStem = stem(first)
        guard let other = names.dropFirst().first(where: { stem($0) != firstStem }) else { return nil }
        return (first, other)
    }

    /// An error's problems, for messages: its underlying ones, else its message.
    static func problems(of error: MigrationError) -> String {
        error.underlying.isEmpty ? error.message : error.underlying.map { $0.message }.joined(separator: "; ")
    }

    /// Whether a mapping model (or the passes manifest) records the step.
    static func hasMappingModel(from source: String, to destination: String, in models: ModelSet) -> Bool {
        if models.passOrder[ModelSet.Step(source, destination)] != nil { return true }
        guard let sourceModel = models.models[source], let destinationModel = models.models[destination] else {
            return false
        }
        return models.mappingModels.contains {
            $0.matches(
                source: sourceModel, sourceVersionName: source, destination: destinationModel,
                destinationVersionName: destination)
        }
    }

    /// One step: the mapping models recorded for the pair (manifest order, else file-name
    /// order), else the inferred mapping. `skipping`: the versions the step passes over.
    static func stage(
        from source: String, to destination: String, in models: ModelSet, warnings: inout [String],
        skipping: [String] = []
    ) throws -> MigrationStage {
        guard let sourceModel = models.models[source], let destinationModel = models.models[destination] else {
            throw MigrationError(
                .invalidArgument, "the model set '\(models.path)' lacks version '\(source)' or '\(destination)'")
        }
        let step = ModelSet.Step(source, destination)
        let matching = models.mappingModels.filter {
            $0.matches(
                source: sourceModel, sourceVersionName: source, destination: destinationModel,
                destinationVersionName: destination)
        }
        var chosen = matching
        var reason: String
        if let listed = models.passOrder[step] {
            chosen = listed.compactMap { name in models.mappingModels.first { $0.name == name } }
            for file in chosen where !matching.contains(where: { $0.name == file.name }) {
                throw MigrationError(
                    .invalidMapping,
                    "'\(ModelSet.manifestName)' lists mapping model '\(file.name)' for \(step), but '\(file.path)' records other versions"
                )
            }
            for file in matching where !listed.contains(file.name) {
                warnings.append(
                    "\(step): mapping model '\(file.name)' matches but '\(ModelSet.manifestName)' does not list it; it is not run"
                )
            }
            reason = chosen.isEmpty ? "" : "passes in the order '\(ModelSet.manifestName)' lists"
        } else {
            reason = chosen.count > 1 ? "passes in file-name order" : ""
        }
        if !chosen.isEmpty {
            // A look-up by name of another pass's entity mapping (JSON and compiled files, read already): said as such.
            let unbound = chosen.compactMap { file in
                file.mapping.map { PassDependencies.Pass(name: file.name, model: $0) }
            }
            if unbound.count == chosen.count,
                let error = MigrationError.collecting(
                    PassDependencies.lookUpsAcrossPasses(unbound).map {
                        MigrationError($0.code, "\(step): " + $0.message, path: $0.path)
                    },
                    code: .invalidMapping, summary: "\(step): passes look up entity mappings of other passes")
            {
                throw error
            }
            var bound: [MappingModel] = []
            for file in chosen {
                do {
                    bound.append(try file.mappingModel(source: sourceModel, destination: destinationModel))
                } catch let error as MigrationError {
                    throw MigrationError(
                        error.code,
                        "mapping model '\(file.name)' (\(file.path)) records \(step) but does not fit those models: \(error.message)",
                        path: error.path, offset: error.offset, byteOffset: error.byteOffset,
                        underlying: error.underlying)
                }
            }
            // A pass that needs instances only another pass makes: said before the run.
            let passes = zip(chosen, bound).map { PassDependencies.Pass(name: $0.name, model: $1) }
            for warning in PassDependencies.warnings(passes) where !warnings.contains("\(step): " + warning) {
                warnings.append("\(step): " + warning)
            }
            let how = chosen.map { "'\($0.name)' (\(describeMatch($0)))" }.joined(separator: ", ")
            reason = "mapping model\(chosen.count == 1 ? "" : "s") \(how)" + (reason.isEmpty ? "" : "; " + reason)
            if !skipping.isEmpty {
                reason +=
                    "; it passes over \(skipping.map { "'\($0)'" }.joined(separator: ", ")), as the mapping model records this step"
            }
            return MigrationStage(
                sourceVersionName: source, destinationVersionName: destination, kind: .custom,
                mappingModelNames: chosen.map { $0.name }, mappingModels: bound, reason: reason,
                sourceModel: sourceModel, destinationModel: destinationModel)
        }
        return try inferredStage(from: source, to: destination, in: models, rows: nil)
    }

    /// A step no mapping model records: Core Data's inferred mapping, "becomes non-optional"
    /// judged by the store's rows where `rows` is given. `why` replaces the usual reason;
    /// `skipping` names the versions a direct step passes over.
    static func inferredStage(
        from source: String, to destination: String, in models: ModelSet, rows: MappingInference.RowCount?,
        why: String? = nil, skipping: [String] = []
    ) throws -> MigrationStage {
        guard let sourceModel = models.models[source], let destinationModel = models.models[destination] else {
            throw MigrationError(
                .invalidArgument, "the model set '\(models.path)' lacks version '\(source)' or '\(destination)'")
        }
        let step = ModelSet.Step(source, destination)
        let inferred: (model: MappingModel, notes: [String])
        do {
            inferred = try MappingModel.inferred(from: sourceModel, to: destinationModel, rows: rows)
        } catch let error as MigrationError {
            let problems = error.underlying.isEmpty ? [error.message] : error.underlying.map { $0.message }
            throw MigrationError(
                error.code,
                "\(step): no mapping model records these versions (\(models.mappingSearchDescription)) and Core Data's inferred mapping cannot be used: \(problems.joined(separator: "; "))",
                path: error.path, underlying: error.underlying)
        }
        var reason =
            "no mapping model records these versions (\(models.mappingSearchDescription)), so "
            + (why ?? "Core Data's inferred mapping is used")
        if !skipping.isEmpty { reason += "; it passes over \(skipping.map { "'\($0)'" }.joined(separator: ", "))" }
        if !inferred.notes.isEmpty { reason += "; " + inferred.notes.joined(separator: "; ") }
        return MigrationStage(
            sourceVersionName: source, destinationVersionName: destination, kind: .lightweight,
            mappingModelNames: ["inferred"], mappingModels: [inferred.model],
            reason: reason, sourceModel: sourceModel, destinationModel: destinationModel,
            isDirect: why != nil)
    }

    static func describeMatch(_ file: MappingModelFile) -> String { file.matchDescription }

    /// Core Data's 134130 for a store no version matches, with the store's hashes and, per
    /// version, the entities that differ.
    static func unmatchedStore(_ path: String, metadata: StoreMetadata, models: ModelSet) -> MigrationError {
        let hashes = metadata.versionHashes.keys.sorted(by: VersionHash.nameOrder).map {
            "\($0) \(Base64.encode(metadata.versionHashes[$0] ?? []))"
        }
        var underlying: [MigrationError] = []
        // Without hashes no version can match: said once (below), not every entity per version.
        for name in models.versionNames where !metadata.versionHashes.isEmpty {
            guard let model = models.models[name] else { continue }
            let differences = model.versionDifferences(fromStoreMetadata: metadata)
            let shown = differences.prefix(5).map { $0.description }.joined(separator: "; ")
            underlying.append(
                MigrationError(
                    .migrationMissingSourceModel,
                    "version '\(name)' differs in \(differences.count) entit\(differences.count == 1 ? "y" : "ies"): \(shown)\(differences.count > 5 ? "; …" : "")"
                ))
        }
        let what =
            metadata.versionHashes.isEmpty
            ? "records no entity version hashes" : "has entity version hashes \(hashes.joined(separator: ", "))"
        return MigrationError(
            .migrationMissingSourceModel,
            "no version of '\(models.path)' matches the store '\(path)', which \(what) (versions: \(models.versionNames.joined(separator: ", ")))",
            underlying: underlying)
    }
}
