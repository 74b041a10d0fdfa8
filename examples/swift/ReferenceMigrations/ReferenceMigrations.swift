import CDMigrate

/// The reference migrations of shared/scenarios.md, shared by the example runner and the tests.
public enum ReferenceMigrations {}
