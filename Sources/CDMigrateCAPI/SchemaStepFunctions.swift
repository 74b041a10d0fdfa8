import CDMigrate

/// cdm_migration_set_schema_changes: `MigrationManager.triesSchemaChanges` (a step SQLite can
/// express as schema changes is done as such on a copy of the source; off: always the general path).
@_cdecl("cdm_migration_set_schema_changes")
public func cdm_migration_set_schema_changes(_ migration: OpaquePointer?, _ tries: Int32) -> Int32 {
    withHandle(migration, MigrationHandle.self, "migration") { handle in
        if handle.chain != nil {
            throw MigrationError.misuse(
                "a chain handle's steps always try schema changes; set it on a single migration")
        }
        try handle.idleManager().triesSchemaChanges = tries != 0
    }
}
