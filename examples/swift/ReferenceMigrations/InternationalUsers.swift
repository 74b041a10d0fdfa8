import CDMigrate

/// Scenario 5: InternationalUser split into SwedenUser and FinlandUser, once with two custom
/// policies and once with no code at all (source predicates and a value expression).
public enum InternationalUsers {
    public static let directory = "5-international-users"
    public static let citiesByCountry: [(country: String, share: Double, cities: [String])] = [
        ("Sweden", 0.35, ["Stockholm", "Göteborg", "Malmö", "Uppsala", "Trosa", "Trosa", "Nora", "Västerås", "Örebro"]),
        // A few Finns live in Trosa: their city must stay Trosa.
        ("Finland", 0.30, ["Helsinki", "Espoo", "Tampere", "Turku", "Turku", "Oulu", "Vaasa", "Trosa"]),
        // Norwegians and others are not migrated, even from Trosa or Turku.
        ("Norway", 0.15, ["Oslo", "Bergen", "Trondheim", "Trosa"]),
        ("Denmark", 0.12, ["København", "Aarhus", "Odense"]),
        ("Estonia", 0.08, ["Tallinn", "Tartu", "Turku"]),
    ]

    public static func sourceModel() throws -> ManagedObjectModel { try ReferenceMigrations.model(directory, "UsersV1.model.json") }
    public static func destinationModel() throws -> ManagedObjectModel { try ReferenceMigrations.model(directory, "UsersV2.model.json") }
    public static func policyMapping() throws -> MappingModel { try ReferenceMigrations.mapping(directory, "UsersV1ToV2.mapping.json") }
    public static func noCodeMapping() throws -> MappingModel { try ReferenceMigrations.mapping(directory, "UsersV1ToV2NoCode.mapping.json") }

    /// The migration with the blog's two custom policies.
    public static func policyManager() throws -> MigrationManager {
        let manager = try MigrationManager(sourceModel: try sourceModel(), destinationModel: try destinationModel(), mappingModels: [try policyMapping()])
        manager.registerPolicy(named: SwedenUserMapping.name) { SwedenUserMapping() }
        manager.registerPolicy(named: FinlandUserMapping.name) { FinlandUserMapping() }
        return manager
    }

    /// The same migration with no code.
    public static func noCodeManager() throws -> MigrationManager {
        try MigrationManager(sourceModel: try sourceModel(), destinationModel: try destinationModel(), mappingModels: [try noCodeMapping()])
    }

    public static func generateSource(at path: String, count: Int = 2_000, seed: UInt64 = 5) throws {
        var random = SeededGenerator(seed: seed)
        let firstNames = ["Astrid", "Lars", "Ingrid", "Björn", "Aino", "Mikko", "Sanna", "Jukka", "Nora", "Erik", "Freja", "Kari", "Liis", "Mads", "Åsa", "Päivi"]
        let lastNames = ["Andersson", "Lindqvist", "Virtanen", "Korhonen", "Nieminen", "Hansen", "Nielsen", "Tamm", "Berg", "Öberg", "Mäkinen", "Johansson"]
        let model = try sourceModel()
        try StoreAccess.createStore(at: path, model: model) { store in
            for i in 0..<count {
                var roll = random.unit()
                var entry = citiesByCountry[citiesByCountry.count - 1]
                for candidate in citiesByCountry {
                    if roll < candidate.share { entry = candidate; break }
                    roll -= candidate.share
                }
                let user = try store.insertObject(entityName: "InternationalUser")
                try user.setValue(.string("\(random.pick(firstNames)) \(random.pick(lastNames)) \(i + 1)"), forKey: "name")
                try user.setValue(.string(random.pick(entry.cities)), forKey: "city")
                try user.setValue(.string(entry.country), forKey: "country")
            }
        }
    }

    /// Generates Users.sqlite and migrates it twice: with the policies and with no code.
    public static func run(in directory: String) throws -> ScenarioResult {
        var result = ScenarioResult(number: 5, title: "International users split by country")
        let source = directory + "/Users-v1.sqlite"
        let withPolicies = directory + "/Users-v2-policies.sqlite", withoutCode = directory + "/Users-v2-no-code.sqlite"
        try generateSource(at: source)
        result.sourcePaths = [source]
        result.destinationPaths = [withPolicies, withoutCode]
        result.reports.append(("custom policies SwedenUserMapping, FinlandUserMapping", try policyManager().migrateStore(from: source, to: withPolicies)))
        result.reports.append(("no code: predicates and a value expression", try noCodeManager().migrateStore(from: source, to: withoutCode)))
        result.samples = try StoreAccess.readStore(at: withPolicies, model: try destinationModel()) { store in
            var lines: [String] = []
            for entity in ["SwedenUser", "FinlandUser"] {
                var cities: [String: Int] = [:]
                for user in try StoreAccess.all(entity, in: store) { cities[try user.string("city") ?? "?", default: 0] += 1 }
                lines.append("\(entity) cities: " + cities.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
            }
            return lines
        }
        return result
    }
}
