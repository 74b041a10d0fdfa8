import CDMigrate

/// cdm_migration_set_fuse_steps: `StagedMigrationManager.fusesSteps` for a chain handle's runs.
@_cdecl("cdm_migration_set_fuse_steps")
public func cdm_migration_set_fuse_steps(_ migration: OpaquePointer?, _ fuse: Int32) -> Int32 {
    withHandle(migration, MigrationHandle.self, "migration") { handle in
        guard let chain = handle.chain else {
            throw MigrationError.misuse("fusing steps is for a chain handle (cdm_migration_new_chain)")
        }
        try handle.checkIdle()
        chain.fusesSteps = fuse != 0
    }
}

/// cdm_chain_plan_with_options: cdm_chain_plan_with_mappings with the passes a run with or
/// without fusing makes.
@_cdecl("cdm_chain_plan_with_options")
public func cdm_chain_plan_with_options(
    _ models: UnsafePointer<CChar>?, _ mappingDirs: UnsafePointer<UnsafePointer<CChar>?>?,
    _ store: UnsafePointer<CChar>?, _ target: UnsafePointer<CChar>?, _ fuse: Int32,
    _ out: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
) -> Int32 {
    chainCall {
        let out = try required(out, "plan_json")
        out.pointee = nil
        let set = try ModelSet(
            contentsOf: try CString.argument(models, "the models path"),
            mappingFolders: try CString.folders(mappingDirs))
        let storePath = try CString.argument(store, "the store path")
        let targetVersion = try target.map { try CString.argument($0, "the target version") }
        let plan = try MigrationPlan(storeAt: storePath, models: set, targetVersion: targetVersion)
        out.pointee = CString.copy(try plan.json(in: set, fusing: fuse != 0).serialized())
    }
}

/// cdm_migrate_chain_with_options: cdm_migrate_chain_with_mappings, fusing steps or not.
@_cdecl("cdm_migrate_chain_with_options")
public func cdm_migrate_chain_with_options(
    _ models: UnsafePointer<CChar>?, _ mappingDirs: UnsafePointer<UnsafePointer<CChar>?>?,
    _ store: UnsafePointer<CChar>?, _ target: UnsafePointer<CChar>?,
    _ destination: UnsafePointer<CChar>?, _ fuse: Int32, _ out: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
) -> Int32 {
    chainCall {
        out?.pointee = nil
        let set = try ModelSet(
            contentsOf: try CString.argument(models, "the models path"),
            mappingFolders: try CString.folders(mappingDirs))
        let storePath = try CString.argument(store, "the store path")
        let targetVersion = try target.map { try CString.argument($0, "the target version") }
        let destinationPath = try destination.map { try CString.argument($0, "the destination path") }
        let manager = try StagedMigrationManager(storeAt: storePath, models: set, targetVersion: targetVersion)
        manager.fusesSteps = fuse != 0
        let report = try destinationPath.map { try manager.migrateStore(to: $0) } ?? manager.migrateStoreInPlace()
        out?.pointee = CString.copy(report.json.serialized())
    }
}
