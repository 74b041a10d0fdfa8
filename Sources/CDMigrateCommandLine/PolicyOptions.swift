import ArgumentParser
import CDMigrate
import CDMigrateCAPI
import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#endif

/// `--policies LIBRARY`: shared libraries of C policies (docs/c-api.md), loaded into the command.
///
/// Each library exports `int cdm_register_policies(cdm_migration *migration)`, which registers its
/// policies and functions with `cdm_migration_register_policy` / `cdm_migration_register_function`
/// on the migration it is given and returns CDM_OK (0). The library is built against
/// `include/cdmigrate.h` without linking libcdmigrate: the command itself provides the C API.
struct PolicyOptions: ParsableArguments {
    /// The name of the function every policy library exports.
    static let registrationSymbol = "cdm_register_policies"

    @Option(
        name: .customLong("policies"),
        help: ArgumentHelp(
            "A shared library of C policies exporting cdm_register_policies(cdm_migration *); may be repeated.",
            valueName: "library"), completion: .file())
    var libraries: [String] = []

    private typealias Registration = @convention(c) (UnsafeMutableRawPointer?) -> Int32

    /// Loads every library and lets it register its policies on `manager`.
    /// - Returns: the cdm_migration the policies were registered on (keep it while the migration
    ///   runs), or nil when no library was given.
    /// - Throws: `MigrationError` `.io` when a library cannot be loaded, `.invalidArgument` when it
    ///   lacks the registration function or that function fails.
    func register(on manager: MigrationManager) throws -> HostedMigration? {
        guard !libraries.isEmpty else { return nil }
        return try load(into: HostedMigration(manager: manager))
    }

    /// Loads every library and lets it register its policies on a chain handle through `models`:
    /// they apply to every step of the staged migrations run with `HostedMigration.runChain`.
    /// - Returns: the chain handle, or nil when no library was given.
    /// - Throws: as `register(on:)`.
    func registerChain(through models: ModelSet, targetVersion: String? = nil) throws -> HostedMigration? {
        guard !libraries.isEmpty else { return nil }
        return try load(into: HostedMigration(chainThrough: models, targetVersion: targetVersion))
    }

    private func load(into host: HostedMigration) throws -> HostedMigration {
        for library in libraries {
            // The host's own policy modules (Python's), when it has a loader and claims the value.
            if let loader = CommandLineHost.current.loadPolicies, try loader(library, host) { continue }
            // A bare name would be searched for on the library path: a path is meant.
            let path = library.contains("/") ? library : "./" + library
            // dlopen would block on a FIFO: only a regular file is loaded.
            try FileIO.requireRegularFile(path, what: "the policy library")
            guard let handle = dlopen(path, RTLD_NOW | RTLD_LOCAL) else {
                let reason = dlerror().map { String(cString: $0) } ?? "unknown reason"
                throw MigrationError(.io, "cannot load the policy library '\(library)': \(reason)")
            }
            guard let symbol = dlsym(handle, Self.registrationSymbol) else {
                throw MigrationError(
                    .invalidArgument, "the policy library '\(library)' exports no \(Self.registrationSymbol) function")
            }
            let register = unsafeBitCast(symbol, to: Registration.self)
            let code = register(host.pointer)
            if code != 0 {
                let detail = host.lastErrorMessage
                throw MigrationError(
                    .invalidArgument,
                    "\(Self.registrationSymbol) of '\(library)' returned \(code)"
                        + (detail.isEmpty ? "" : ": \(detail)"))
            }
        }
        return host
    }

    /// The entity mappings whose policy no library registered, as problems.
    static func unregistered(_ manager: MigrationManager) -> [MigrationError] {
        var problems: [MigrationError] = []
        for mappingModel in manager.mappingModels {
            for mapping in mappingModel.entityMappings {
                guard let policy = mapping.entityMigrationPolicyClassName, !manager.isPolicyRegistered(named: policy)
                else { continue }
                problems.append(
                    MigrationError(
                        .entityMigrationPolicy,
                        "entity mapping '\(mapping.name)' names policy '\(policy)', which no --policies library registered",
                        path: mapping.path + ".policy"))
            }
        }
        return problems
    }

    /// Without --policies: a warning per policy the entity mappings name (nothing checks them).
    static func unchecked(_ mappingModels: [MappingModel]) -> [String] {
        mappingModels.flatMap { $0.entityMappings }.compactMap { mapping in
            mapping.entityMigrationPolicyClassName.map {
                "entity mapping '\(mapping.name)' names policy '\($0)': give --policies to check that it is registered"
            }
        }
    }
}
