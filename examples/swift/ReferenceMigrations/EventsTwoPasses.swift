import CDMigrate

/// Scenario 3: Event becomes PrintedEvent and NumericEvent, with two mapping models run one after
/// the other into the same destination: StepOne makes the PrintedEvents through the custom policy
/// `StepOneEntityMigrationPolicy`, then StepTwo the NumericEvents with a plain value expression.
public enum EventsTwoPasses {
    public static let directory = "3-events-two-passes"

    public static func sourceModel() throws -> ManagedObjectModel { try ReferenceMigrations.model(directory, "EventsV1.model.json") }
    public static func destinationModel() throws -> ManagedObjectModel { try ReferenceMigrations.model(directory, "EventsV2.model.json") }
    public static func stepOne() throws -> MappingModel { try ReferenceMigrations.mapping(directory, "StepOne.mapping.json") }
    public static func stepTwo() throws -> MappingModel { try ReferenceMigrations.mapping(directory, "StepTwo.mapping.json") }
    /// StepOne split into two source ranges by predicates (the way to bound each pass on huge stores).
    public static func stepOneInRanges() throws -> MappingModel { try ReferenceMigrations.mapping(directory, "StepOneInRanges.mapping.json") }

    /// A manager with both passes (StepOne whole, or in two ranges) and StepOne's policy registered.
    public static func manager(stepOneInRanges ranges: Bool = false) throws -> MigrationManager {
        let first = ranges ? try stepOneInRanges() : try stepOne()
        let manager = try MigrationManager(sourceModel: try sourceModel(), destinationModel: try destinationModel(), mappingModels: [first, try stepTwo()])
        manager.registerPolicy(named: StepOneEntityMigrationPolicy.name) { StepOneEntityMigrationPolicy() }
        return manager
    }

    /// The time stamps the generator writes: `count` distinct values from 1965 to 2035 with
    /// fractions of a second, starting with edge cases (the reference date itself, the second
    /// before 1970, noon and midnight, a leap day).
    public static func timeStamps(count: Int = 2_000, seed: UInt64 = 3) -> [Double] {
        var values: [Double] = [0, -978_307_200.5, -978_307_200, 43_200, 86_399.999, 604_627_200 + 3_600 * 13 + 0.25, 526_953_599.75]
        var seen = Set(values)
        var random = SeededGenerator(seed: seed)
        while values.count < count {
            let candidate = Double(random.int(-1_135_000_000...1_072_000_000)) + Double(random.int(0...999)) / 1_000
            if seen.insert(candidate).inserted { values.append(candidate) }
        }
        return Array(values.prefix(count))
    }

    public static func generateSource(at path: String, count: Int = 2_000, seed: UInt64 = 3) throws {
        let model = try sourceModel()
        try StoreAccess.createStore(at: path, model: model) { store in
            for t in timeStamps(count: count, seed: seed) {
                let event = try store.insertObject(entityName: "Event")
                try event.setValue(.date(t), forKey: "timeStamp")
            }
        }
    }

    /// Generates Events.sqlite, migrates it into a new file (never the source), then replaces
    /// the old store by the new one, as an app does once the migration succeeded.
    public static func run(in directory: String) throws -> ScenarioResult {
        var result = ScenarioResult(number: 3, title: "Events: one entity becomes two, in two passes")
        let source = directory + "/Events.sqlite", migrated = directory + "/Events-v2.sqlite"
        try generateSource(at: source)
        let report = try manager().migrateStore(from: source, to: migrated)
        try replaceStore(at: source, with: migrated)
        result.sourcePaths = [source + " (replaced by the migrated store)"]
        result.destinationPaths = [source]
        result.reports = [("StepOne + StepTwo", report)]
        result.samples = try StoreAccess.readStore(at: source, model: try destinationModel()) { store in
            let printed = try StoreAccess.all("PrintedEvent", in: store).prefix(3).map { "PrintedEvent printedDate=\"\(try $0.value(forKey: "printedDate"))\"" }
            let numbers = try StoreAccess.all("NumericEvent", in: store).prefix(3).map { "NumericEvent timeStamp=\(try $0.value(forKey: "timeStamp"))" }
            return printed + numbers
        }
        return result
    }

    /// Puts the store at `newPath` in the place of the store at `path` (removing the old one's
    /// -wal and -shm first, so that they cannot be replayed onto the new file).
    public static func replaceStore(at path: String, with newPath: String) throws {
        for suffix in ["-wal", "-shm", "-journal"] { FileIO.remove(path + suffix) }
        try FileIO.rename(newPath, to: path)
        for suffix in ["-wal", "-shm", "-journal"] where FileIO.exists(newPath + suffix) {
            try FileIO.rename(newPath + suffix, to: path + suffix)
        }
    }
}
