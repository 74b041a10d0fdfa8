/// One pass of a chain: a single step, or consecutive steps fused into one mapping model from the
/// first step's model to the last one's (`MappingComposition`), so the store is copied once for
/// them all. docs/chains.md ("Fused steps") lists what fuses.
///
/// Core Data counterpart: none (`NSStagedMigrationManager` runs every stage on its own).
public struct ChainPass {
    /// The indices in `MigrationPlan.stages` of the steps the pass runs (one, or several fused).
    public let steps: Range<Int>
    /// What runs: the step itself, or the fused step (its `fusedStages` are the steps it replaces).
    public let stage: MigrationStage
    /// Why the pass ends where it does: why its last step is not fused with the next one, or
    /// nil when it is the chain's last pass.
    public let notFusedWithNext: String?

    /// Whether the pass runs several steps as one.
    public var isFused: Bool { steps.count > 1 }
}

extension MigrationPlan {
    /// The passes that run the plan's steps: consecutive steps without policies fused where
    /// `MappingComposition` shows that one mapping gives the identical store, every other step
    /// on its own.
    ///
    /// - parameter fusing: false gives one pass per step (the step-by-step run).
    public func passes(fusing: Bool = true) -> [ChainPass] {
        var passes: [ChainPass] = []
        var start = 0
        while start < stages.count {
            let first = stages[start]
            var end = start + 1
            var composed: MappingModel?
            var notFused: String? = nil
            if fusing {
                switch MigrationPlan.fusable(first) {
                case .some(let why):
                    notFused = why
                case .none:
                    composed = first.mappingModels.first
                    while end < stages.count, let current = composed {
                        let next = stages[end]
                        if let why = MigrationPlan.fusable(next) {
                            notFused = why
                            break
                        }
                        do {
                            composed = try MappingComposition.compose(
                                current, next.mappingModels[0], a: first.sourceModel, b: next.sourceModel,
                                c: next.destinationModel)
                            end += 1
                        } catch let error as MappingComposition.NotComposable {
                            notFused = "\(next.warningLabel)\(error.reason)"
                            composed = current
                            break
                        } catch {
                            let message = (error as? MigrationError)?.message ?? "\(error)"
                            notFused = "\(next.warningLabel)the composed mapping does not validate: \(message)"
                            composed = current
                            break
                        }
                    }
                }
            }
            if end == start + 1 {
                passes.append(
                    ChainPass(
                        steps: start..<end, stage: first,
                        notFusedWithNext: end < stages.count ? (notFused ?? "the step-by-step run was asked for") : nil)
                )
            } else if let model = composed, let last = stages.element(at: end - 1) {
                let fused = Array(stages[start..<end])
                let labels = fused.map { "\($0.sourceVersionName) → \($0.destinationVersionName)" }
                var stage = MigrationStage(
                    sourceVersionName: first.sourceVersionName, destinationVersionName: last.destinationVersionName,
                    kind: fused.allSatisfy { $0.isInferred } ? .lightweight : .custom,
                    mappingModelNames: [model.name ?? "fused"], mappingModels: [model],
                    reason:
                        "steps \(labels.joined(separator: ", ")) fused into one pass (mapping models \(fused.flatMap { $0.mappingModelNames }.joined(separator: ", ")) composed)",
                    sourceModel: first.sourceModel, destinationModel: last.destinationModel)
                stage.fusedStages = fused
                passes.append(
                    ChainPass(
                        steps: start..<end, stage: stage, notFusedWithNext: end < stages.count ? notFused : nil))
            }
            start = end
        }
        return passes
    }

    /// Nil when the step may be fused with its neighbours; else why not.
    static func fusable(_ stage: MigrationStage) -> String? {
        if stage.mappingModels.count != 1 {
            return "\(stage.warningLabel)the step runs \(stage.mappingModels.count) mapping models as passes"
        }
        if let policy = stage.policyNames.first { return "\(stage.warningLabel)the step runs policy '\(policy)'" }
        return nil
    }
}
