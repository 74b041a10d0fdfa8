import CDMigrate
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The reference migrations of examples/scenarios.md, shared by the example runner and the tests:
/// each scenario has its models and mappings as JSON under `examples/<n>-<name>/`, a data
/// generator, its Swift policies and a `run(in:)` that generates the source store and migrates it.
public enum ReferenceMigrations {
    /// The `examples/` directory: `CDMIGRATE_EXAMPLES_DIR` when set, else found from this source
    /// file's place in the checkout (examples/swift/ReferenceMigrations/).
    public static var examplesDirectory: String = {
        if let value = getenv("CDMIGRATE_EXAMPLES_DIR") { return String(cString: value) }
        var parts = "\(#filePath)".split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(min(3, parts.count))
        return parts.joined(separator: "/")
    }()

    /// The scenarios in order; `number` is the one in scenarios.md.
    public static let scenarios: [Scenario] = [
        Scenario(number: 1, title: "Notas: a string category becomes a Categoria entity", directory: NotasCategorias.directory, run: NotasCategorias.run(in:)),
        Scenario(number: 2, title: "Recipes: Apple's MigrationV2 sample", directory: Recipes.directory, run: Recipes.run(in:)),
        Scenario(number: 3, title: "Events: one entity becomes two, in two passes", directory: EventsTwoPasses.directory, run: EventsTwoPasses.run(in:)),
        Scenario(number: 4, title: "UnCloudNotes: v3 -> v4 with inheritance, and any version up to v4", directory: UnCloudNotes.directory, run: UnCloudNotes.run(in:)),
        Scenario(number: 5, title: "International users split by country", directory: InternationalUsers.directory, run: InternationalUsers.run(in:)),
    ]

    /// Runs scenario `number` with its stores in `directory` (which must exist).
    public static func run(scenario number: Int, in directory: String) throws -> ScenarioResult {
        guard let scenario = scenarios.first(where: { $0.number == number }) else {
            throw MigrationError(.invalidArgument, "there is no scenario \(number) (there are \(scenarios.count))")
        }
        return try scenario.run(directory)
    }

    /// A model of a scenario, read from its JSON file.
    public static func model(_ scenarioDirectory: String, _ file: String) throws -> ManagedObjectModel {
        try ManagedObjectModel(contentsOf: examplesDirectory + "/" + scenarioDirectory + "/" + file)
    }

    /// A mapping model of a scenario, read from its JSON file.
    public static func mapping(_ scenarioDirectory: String, _ file: String) throws -> MappingModel {
        try MappingModel(contentsOf: examplesDirectory + "/" + scenarioDirectory + "/" + file)
    }
}

public struct Scenario {
    public let number: Int
    public let title: String
    /// Its folder under examples/.
    public let directory: String
    public let run: (String) throws -> ScenarioResult
}

/// What running a scenario did, for the runner to print and the tests to check.
public struct ScenarioResult {
    public var number: Int
    public var title: String
    /// The generated source store(s), as they were before migrating.
    public var sourcePaths: [String] = []
    /// The migrated store(s).
    public var destinationPaths: [String] = []
    /// One report per migration run (a scenario may run several).
    public var reports: [(label: String, report: MigrationReport)] = []
    /// A few rows of the result, readable.
    public var samples: [String] = []

    public init(number: Int, title: String) {
        self.number = number
        self.title = title
    }

    /// The text the runner prints.
    public var lines: [String] {
        var out = ["== Scenario \(number): \(title)"]
        for path in sourcePaths { out.append("  source:      \(path)") }
        for path in destinationPaths { out.append("  destination: \(path)") }
        for (label, report) in reports {
            out.append("  [\(label)]")
            for m in report.mappings {
                out.append("    pass \(m.pass + 1) \(m.entityMappingName): \(m.sourceInstances) source instances, \(m.associations) associations")
            }
            out.append("    destination: " + report.destinationCounts.map { "\($0.entityName) \($0.count)" }.joined(separator: ", "))
            if report.untakenSourceInstances.isEmpty {
                out.append("    every source instance was taken by a mapping")
            } else {
                out.append("    not taken by any mapping: " + report.untakenSourceInstances.map { "\($0.count) \($0.entityName)" }.joined(separator: ", "))
            }
            for loss in report.losses.losses { out.append("    lost: \(loss.summary)") }
            for warning in report.warnings { out.append("    warning: \(warning)") }
        }
        if !samples.isEmpty {
            out.append("  sample rows:")
            for sample in samples { out.append("    " + sample) }
        }
        return out
    }
}

extension ReferenceMigrations {
    /// Migrates an existing source store of scenario `number` into `destination` with the
    /// scenario's Swift policies and host functions (what the cross-language test compares with C
    /// and Python): 1–3 one migration; 4 any UnCloudNotes version up to v4; 5 with the policies
    /// into `destination` and with the no-code mapping into `destination + ".no-code"`.
    public static func migrate(scenario number: Int, source: String, destination: String) throws {
        switch number {
        case 1: _ = try NotasCategorias.manager().migrateStore(from: source, to: destination)
        case 2: _ = try Recipes.manager().migrateStore(from: source, to: destination)
        case 3: _ = try EventsTwoPasses.manager().migrateStore(from: source, to: destination)
        case 4: _ = try UnCloudNotes.migrateToV4(storeAt: source, destination: destination)
        case 5:
            _ = try InternationalUsers.policyManager().migrateStore(from: source, to: destination)
            _ = try InternationalUsers.noCodeManager().migrateStore(from: source, to: destination + ".no-code")
        default:
            throw MigrationError(.invalidArgument, "there is no scenario \(number) (there are \(scenarios.count))")
        }
    }
}
