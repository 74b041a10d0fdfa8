import CDMigrate

/// cdm_migration_set_fail_on_unintended_loss: `MigrationManager.failsOnUnintendedLoss` (a chain
/// handle passes it on to every step's manager).
@_cdecl("cdm_migration_set_fail_on_unintended_loss")
public func cdm_migration_set_fail_on_unintended_loss(_ migration: OpaquePointer?, _ fail: Int32) -> Int32 {
    withHandle(migration, MigrationHandle.self, "migration") { handle in
        if let chain = handle.chain {
            try handle.checkIdle()
            chain.failsOnUnintendedLoss = fail != 0
            return
        }
        try handle.idleManager().failsOnUnintendedLoss = fail != 0
    }
}
