/// The one JSON form of a migration's report, used by every surface: `cdmigrate migrate --json`
/// (its `report`, and each step's under `steps`), the C API's `cdm_migration_report_json` and
/// `cdm_migrate_chain`, and through them Python's `MigrationReport` and `StagedMigrationReport`.
/// The keys are documented in docs/cli.md ("The report's JSON").
extension MigrationReport {
    /// `{"mappings": [{"pass", "entityMapping", "sourceInstances", "associations", "instancesBySQL",
    /// "relationshipsBySQL"}…], "destinationCounts": {entity: count}, "untakenSourceInstances":
    /// {entity: count}, "warnings": [text], "missingExternalDataFiles": n, "losses": [loss], "bySchemaChanges": bool,
    /// "schemaChanges": [text], "schemaChangesNotDone": text or null}`.
    package var json: JSON {
        .object([
            (
                "mappings",
                .array(
                    mappings.map { mapping in
                        .object([
                            ("pass", .integer(Int64(mapping.pass))),
                            ("entityMapping", .string(mapping.entityMappingName)),
                            ("sourceInstances", .integer(Int64(mapping.sourceInstances))),
                            ("associations", .integer(Int64(mapping.associations))),
                            ("instancesBySQL", .bool(mapping.instancesBySQL)),
                            ("relationshipsBySQL", .bool(mapping.relationshipsBySQL)),
                        ])
                    })
            ),
            ("destinationCounts", Self.counts(destinationCounts)),
            ("untakenSourceInstances", Self.counts(untakenSourceInstances)),
            ("warnings", .array(warnings.map { .string($0) })),
            ("missingExternalDataFiles", .integer(Int64(missingExternalDataFiles))),
            ("losses", losses.json),
            ("bySchemaChanges", .bool(bySchemaChanges)),
            ("schemaChanges", .array(schemaChanges.map { .string($0) })),
            ("schemaChangesNotDone", schemaChangesNotDone.map { .string($0) } ?? .null),
        ])
    }

    /// Counts by entity name, in the report's order (an entity named twice is summed).
    private static func counts(_ counts: [(entityName: String, count: Int)]) -> JSON {
        var members: [(key: String, value: JSON)] = []
        var index: [String: Int] = [:]
        for (name, count) in counts {
            if let at = index[name], case .integer(let sum) = members[at].value {
                members[at].value = .integer(sum &+ Int64(count))
            } else {
                index[name] = members.count
                members.append((name, .integer(Int64(count))))
            }
        }
        return .object(members)
    }
}

extension StagedMigrationReport {
    /// `{"storeVersion", "targetVersion", "alreadyAtTarget", "copied", "steps": [{"from", "to",
    /// "inferred", "mappingModels": [name], "direct", "fusedSteps", "report": <the step's MigrationReport>}…]}`;
    /// `direct` says the step is Core Data's inferred step straight from the store's version;
    /// `fusedSteps` lists the steps a fused pass ran (`{"from", "to", "inferred", "mappingModels"}`),
    /// empty for a step run on its own.
    package var json: JSON {
        .object([
            ("storeVersion", .string(storeVersionName)), ("targetVersion", .string(targetVersionName)),
            ("alreadyAtTarget", .bool(wasAtTarget)), ("copied", .bool(copied)),
            (
                "steps",
                .array(
                    stages.map { step in
                        .object([
                            ("from", .string(step.stage.sourceVersionName)),
                            ("to", .string(step.stage.destinationVersionName)),
                            ("inferred", .bool(step.stage.isInferred)),
                            ("mappingModels", .array(step.stage.mappingModelNames.map { .string($0) })),
                            ("direct", .bool(step.stage.isDirect)),
                            (
                                "fusedSteps",
                                .array(
                                    step.stage.fusedStages.map { fused in
                                        .object([
                                            ("from", .string(fused.sourceVersionName)),
                                            ("to", .string(fused.destinationVersionName)),
                                            ("inferred", .bool(fused.isInferred)),
                                            ("mappingModels", .array(fused.mappingModelNames.map { .string($0) })),
                                        ])
                                    })
                            ),
                            ("report", step.report.json),
                        ])
                    })
            ),
        ])
    }
}
