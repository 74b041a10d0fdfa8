import CDMigrate

// Progressive migration from C: plan and run a model set's version-by-version migration
// (`ModelSet`, `MigrationPlan`, `StagedMigrationManager`). Stateless calls; errors are the
// thread's last error (cdm_last_error). Host policies are not available to chains: a step whose
// mapping names a policy fails with CDM_ENTITY_MIGRATION_POLICY before anything runs. The plan's
// JSON is the engine's one encoding (MigrationPlanJSON.swift), as `cdmigrate plan --json` prints it.

/// Runs `body`, turning any error into the thread's last error and its code.
func chainCall(_ body: () throws -> Void) -> Int32 {
    do {
        try body()
        return 0
    } catch {
        return recordError(error, nil)
    }
}

@_cdecl("cdm_chain_plan")
public func cdm_chain_plan(
    _ models: UnsafePointer<CChar>?, _ store: UnsafePointer<CChar>?, _ target: UnsafePointer<CChar>?,
    _ out: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
) -> Int32 {
    cdm_chain_plan_with_mappings(models, nil, store, target, out)
}

@_cdecl("cdm_chain_plan_with_mappings")
public func cdm_chain_plan_with_mappings(
    _ models: UnsafePointer<CChar>?, _ mappingDirs: UnsafePointer<UnsafePointer<CChar>?>?,
    _ store: UnsafePointer<CChar>?, _ target: UnsafePointer<CChar>?,
    _ out: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
) -> Int32 {
    // The plan of a run that fuses steps, as runs do by default.
    cdm_chain_plan_with_options(models, mappingDirs, store, target, 1, out)
}

@_cdecl("cdm_migrate_chain")
public func cdm_migrate_chain(
    _ models: UnsafePointer<CChar>?, _ store: UnsafePointer<CChar>?, _ target: UnsafePointer<CChar>?,
    _ destination: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
) -> Int32 {
    cdm_migrate_chain_with_mappings(models, nil, store, target, destination, out)
}

@_cdecl("cdm_migrate_chain_with_mappings")
public func cdm_migrate_chain_with_mappings(
    _ models: UnsafePointer<CChar>?, _ mappingDirs: UnsafePointer<UnsafePointer<CChar>?>?,
    _ store: UnsafePointer<CChar>?, _ target: UnsafePointer<CChar>?,
    _ destination: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
) -> Int32 {
    cdm_migrate_chain_with_options(models, mappingDirs, store, target, destination, 1, out)
}
