/// The one JSON form of a migration plan, used by every surface: `cdmigrate plan --json` (with
/// `"ok": true` beside it) and the C API's `cdm_chain_plan`, and through it Python's `plan`. The
/// keys are documented in docs/cli.md ("plan --json").
extension MigrationPlan {
    /// `{"store", "storeVersion", "targetVersion", "currentVersion", "versions": [name],
    /// "warnings": [text], "steps": [{"from", "to", "inferred", "mappingModels", "reason",
    /// "policies", "entityMappings", "direct"}], "directStep": {"from", "to", "inferable",
    /// "reason"} or null}`.
    ///
    /// `warnings` are the plan's and its steps' (`allWarnings()`).
    ///
    /// `passes`: how a run makes them (`passes(fusing:)`): `[{"from", "to", "steps": [index in
    /// steps], "fused", "notFusedWithNext": text or null}]`.
    ///
    /// - Parameter set: The model set the plan was made from (its current version and versions).
    /// - Parameter fusing: Whether the run fuses steps (false: the step-by-step run).
    /// - Throws: `MigrationError` from `allWarnings()`.
    package func json(in set: ModelSet, fusing: Bool = true) throws -> JSON {
        .object([
            ("store", .string(storePath)), ("storeVersion", .string(storeVersionName)),
            ("targetVersion", .string(targetVersionName)), ("currentVersion", .string(set.currentVersionName)),
            ("versions", .array(set.versionNames.map { .string($0) })),
            ("steps", .array(stages.map(Self.json))),
            ("warnings", .array(try allWarnings().map { .string($0) })),
            ("directStep", Self.json(directStep)),
            ("passes", .array(passes(fusing: fusing).map(Self.json))),
        ])
    }

    private static func json(_ pass: ChainPass) -> JSON {
        .object([
            ("from", .string(pass.stage.sourceVersionName)), ("to", .string(pass.stage.destinationVersionName)),
            ("steps", .array(pass.steps.map { .integer(Int64($0)) })), ("fused", .bool(pass.isFused)),
            ("notFusedWithNext", pass.notFusedWithNext.map { .string($0) } ?? .null),
        ])
    }

    private static func json(_ stage: MigrationStage) -> JSON {
        .object([
            ("from", .string(stage.sourceVersionName)), ("to", .string(stage.destinationVersionName)),
            ("inferred", .bool(stage.isInferred)),
            ("mappingModels", .array(stage.mappingModelNames.map { .string($0) })), ("reason", .string(stage.reason)),
            ("policies", .array(stage.policyNames.map { .string($0) })),
            ("entityMappings", .array(stage.mappingModels.flatMap { $0.entityMappings.map { .string($0.name) } })),
            ("direct", .bool(stage.isDirect)),
        ])
    }

    /// The direct step offered beside the plan (Core Data's automatic migration), or null.
    private static func json(_ direct: DirectStep?) -> JSON {
        switch direct {
        case .inferable(let stage)?:
            return .object([
                ("from", .string(stage.sourceVersionName)), ("to", .string(stage.destinationVersionName)),
                ("inferable", .bool(true)), ("reason", .string(stage.reason)),
            ])
        case .notInferable(let step, let why)?:
            return .object([
                ("from", .string(step.sourceVersionName)), ("to", .string(step.destinationVersionName)),
                ("inferable", .bool(false)), ("reason", .string(why)),
            ])
        case nil:
            return .null
        }
    }
}
