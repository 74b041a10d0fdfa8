// swift-tools-version:5.9
import PackageDescription

// The engine (CDMigrate) imports no Foundation: the static library must link into C programs
// with only the Swift core runtime and system C libraries: sqlite3 (stores), jansson (JSON),
// libxml2 (Xcode's XML files) and zlib (model caches).
let package = Package(
    name: "cdmigrate",
    products: [
        .library(name: "CDMigrate", type: .static, targets: ["CDMigrate", "CDMigrateCAPI"]),
        // The engine, the C API and the command line (cdm_command_line_run): what the Makefile
        // links into libcdmigrate.so, so that `python -m cdmigrate` runs the command line.
        .library(name: "CDMigrateCommandLine", type: .static, targets: ["CDMigrateCommandLine"]),
        .executable(name: "cdmigrate-examples", targets: ["cdmigrate-examples"]),
        .executable(name: "cdmigrate", targets: ["CDMigrateCLI"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0")
    ],
    targets: [
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CJansson", pkgConfig: "jansson", providers: [.apt(["libjansson-dev"])]),
        .systemLibrary(name: "CLibXML2", pkgConfig: "libxml-2.0", providers: [.apt(["libxml2-dev"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        .target(name: "CDMigrate", dependencies: ["CSQLite", "CJansson", "CLibXML2", "CZlib"]),
        // The C API (include/cdmigrate.h): @_cdecl functions over the engine, no engine logic.
        .target(name: "CDMigrateCAPI", dependencies: ["CDMigrate", "CSQLite"], path: "Sources/CDMigrateCAPI"),
        // The reference migrations of examples/scenarios.md: models, mappings, generators and
        // Swift policies. A library so that the tests check exactly what the examples run.
        .target(name: "ReferenceMigrations", dependencies: ["CDMigrate"], path: "examples/swift/ReferenceMigrations"),
        // The command line's commands (docs/cli.md), a library so that the executable and the
        // C API's cdm_command_line_run (hence `python -m cdmigrate`) run the same code.
        .target(
            name: "CDMigrateCommandLine",
            dependencies: [
                "CDMigrate", "CDMigrateCAPI", .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Sources/CDMigrateCommandLine"),
        // The `cdmigrate` executable: a main calling CDMigrateCommandLine. It links the C API and
        // exports its symbols, so that the policy libraries `--policies` loads call the C API.
        .executableTarget(
            name: "CDMigrateCLI", dependencies: ["CDMigrateCommandLine", "CDMigrate", "CDMigrateCAPI"],
            path: "Sources/CDMigrateCLI",
            linkerSettings: [.unsafeFlags(["-Xlinker", "--export-dynamic"])]),
        .executableTarget(
            name: "cdmigrate-examples", dependencies: ["ReferenceMigrations", "CDMigrate"],
            path: "examples/swift/Runner"),
        // Prints speed and memory figures (never asserted in tests: machines are noisy).
        .executableTarget(
            name: "cdmigrate-benchmark", dependencies: ["CDMigrate", "CSQLite"], path: "Benchmarks/MigrationBenchmark"),
        // Kills migrations with SIGKILL at random moments and checks the store files after each
        // (docs/reliability.md; run by scripts/crash-harness.sh).
        .executableTarget(name: "cdmigrate-crash-harness", dependencies: ["CDMigrate"], path: "Tests/CrashHarness"),
        .testTarget(
            name: "CDMigrateTests", dependencies: ["CDMigrate", "ReferenceMigrations", "CDMigrateCommandLine"]),
    ]
)
