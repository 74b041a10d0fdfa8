// swift-tools-version:5.9
import PackageDescription

// The engine (CDMigrate) imports no Foundation: the static library must link into C programs
// with only the Swift core runtime, sqlite3 and jansson (see DEVELOPERS notes in README).
let package = Package(
    name: "cdmigrate",
    products: [
        .library(name: "cdmigrate", type: .static, targets: ["CDMigrate", "CDMigrateCAPI"]),
        .executable(name: "cdmigrate-examples", targets: ["cdmigrate-examples"]),
    ],
    targets: [
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CJansson", pkgConfig: "jansson", providers: [.apt(["libjansson-dev"])]),
        .target(name: "CDMigrate", dependencies: ["CSQLite", "CJansson"]),
        // The C API (include/cdmigrate.h): @_cdecl functions over the engine, no engine logic.
        .target(name: "CDMigrateCAPI", dependencies: ["CDMigrate", "CSQLite", "CJansson"], path: "Sources/CDMigrateCAPI"),
        // The reference migrations of shared/scenarios.md: models, mappings, generators and
        // Swift policies. A library so that the tests check exactly what the examples run.
        .target(name: "ReferenceMigrations", dependencies: ["CDMigrate"], path: "examples/swift/ReferenceMigrations"),
        .executableTarget(name: "cdmigrate-examples", dependencies: ["ReferenceMigrations", "CDMigrate"], path: "examples/swift/Runner"),
        // Prints speed and memory figures (never asserted in tests: machines are noisy).
        .executableTarget(name: "cdmigrate-benchmark", dependencies: ["CDMigrate", "CSQLite"], path: "Benchmarks/MigrationBenchmark"),
        .testTarget(name: "CDMigrateTests", dependencies: ["CDMigrate", "ReferenceMigrations"], exclude: ["Fixtures"]),
    ]
)
