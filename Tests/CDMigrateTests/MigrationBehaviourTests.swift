import CSQLite
import XCTest

@testable import CDMigrate

/// Safety, validation, passes, progress and cancellation of the migration manager.
final class MigrationBehaviourTests: XCTestCase {
    static let people = """
        {"name": "People", "versionIdentifier": "1", "entities": [
          {"name": "Person", "attributes": [{"name": "name", "type": "string"}, {"name": "country", "type": "string"},
                                            {"name": "age", "type": "integer64"}]}
        ]}
        """
    static let split = """
        {"name": "People", "versionIdentifier": "2", "entities": [
          {"name": "Swede", "attributes": [{"name": "name", "type": "string", "optional": false}, {"name": "age", "type": "integer16"}]},
          {"name": "Finn", "attributes": [{"name": "name", "type": "string", "optional": false}, {"name": "age", "type": "integer16"}]}
        ]}
        """

    var scratch: ScratchDirectory!
    var v1: ManagedObjectModel!
    var v2: ManagedObjectModel!

    override func setUpWithError() throws {
        scratch = ScratchDirectory()
        v1 = try ManagedObjectModel(json: Self.people)
        v2 = try ManagedObjectModel(json: Self.split)
    }

    func makePeople(_ rows: [(String?, String, Int64)]) throws -> String {
        let path = scratch.file("people.sqlite")
        try makeStore(path, v1) { store in
            for (name, country, age) in rows {
                _ = try insert(
                    store, "Person",
                    ["name": name.map { .string($0) } ?? .null, "country": .string(country), "age": .integer(age)])
            }
        }
        return path
    }

    func mapping(_ extra: String = "") throws -> MappingModel {
        try MappingModel(
            json:
                """
                {"entityMappings": [
                  {"name": "PersonToSwede", "sourceEntity": "Person", "destinationEntity": "Swede", "predicate": "country == 'Sweden'",
                   "attributeMappings": {"name": "$source.name", "age": "$source.age"} \(extra)},
                  {"name": "PersonToFinn", "sourceEntity": "Person", "destinationEntity": "Finn", "predicate": "country ==[c] 'finland' AND age >= 0",
                   "attributeMappings": {"name": "FUNCTION($source.name, \\"uppercaseString\\")", "age": "$source.age"}}
                ]}
                """)
    }

    func testPredicatesSelectRowsAndUntakenInstancesAreCounted() throws {
        let source = try makePeople([
            ("Anna", "Sweden", 30), ("Matti", "Finland", 40), ("Olaf", "Norway", 50), ("Ebba", "Sweden", 20),
            ("Liisa", "FINLAND", 33),
        ])
        let manager = try MigrationManager(sourceModel: v1, destinationModel: v2, mappingModel: try mapping())
        let report = try manager.migrateStore(from: source, to: scratch.file("out.sqlite"))
        let store = try PersistentStore.open(at: scratch.file("out.sqlite"), model: v2)
        defer { store.close() }
        XCTAssertEqual(
            Set(try fetchAll(store, "Swede").map { try $0.value(forKey: "name") }), [.string("Anna"), .string("Ebba")])
        XCTAssertEqual(
            Set(try fetchAll(store, "Finn").map { try $0.value(forKey: "name") }), [.string("MATTI"), .string("LIISA")])
        XCTAssertEqual(report.untakenSourceInstances.map { $0.entityName }, ["Person"])
        XCTAssertEqual(report.untakenSourceInstances.first?.count, 1, "Olaf of Norway was taken by no mapping")
        XCTAssertEqual(report.destinationCounts.first { $0.entityName == "Swede" }?.count, 2)
    }

    func testValidationCollectsEveryProblemAndLeavesNothingBehind() throws {
        let source = try makePeople([
            (nil, "Sweden", 30), (nil, "Sweden", 99999), ("Ebba", "Sweden", -40000), ("Matti", "Finland", 40),
        ])
        let before = fileBytes(source)
        let manager = try MigrationManager(sourceModel: v1, destinationModel: v2, mappingModel: try mapping())
        let destination = scratch.file("out.sqlite")
        XCTAssertThrowsError(try manager.migrateStore(from: source, to: destination)) { error in
            let e = error as? MigrationError
            XCTAssertEqual(e?.code, .validationMultipleErrors, "\(error)")
            // One individual error per instance and property, as Core Data gives them.
            let codes = (e?.underlying ?? []).map { $0.code }
            XCTAssertEqual(
                codes.sorted { $0.rawValue < $1.rawValue },
                [
                    .validationMissingMandatoryProperty, .validationMissingMandatoryProperty, .validationNumberTooLarge,
                    .validationNumberTooSmall,
                ])
            for individual in e?.underlying ?? [] {
                XCTAssertEqual(
                    individual.message.components(separatedBy: "x-coredata://").count, 2,
                    "one instance each: \(individual.message)")
                // Which instance and property, as NSValidationObjectErrorKey / NSValidationKeyErrorKey.
                let subject = individual.validationSubject
                XCTAssertEqual(subject?.entityName, "Swede")
                XCTAssertEqual(subject?.key, individual.code == .validationMissingMandatoryProperty ? "name" : "age")
                XCTAssertTrue(
                    subject.map {
                        individual.message.contains($0.objectURI) && $0.objectURI.hasSuffix("/Swede/p\($0.primaryKey)")
                    } ?? false, individual.message)
            }
            XCTAssertNil(e?.validationSubject, "the 1560 itself is about no single instance")
            // The message groups them.
            let text = e?.message ?? ""
            XCTAssertTrue(text.contains("3 problems"), text)
            XCTAssertTrue(text.contains("Swede.name is required but nil in 2 instances"), text)
            XCTAssertTrue(text.contains("Swede.age is above its maximum 32767"), text)
            XCTAssertTrue(text.contains("Swede.age is below its minimum -32768 in 1 instance"), text)
        }
        XCTAssertEqual(fileBytes(source), before)
        XCTAssertFalse(FileManager.default.fileExists(atPath: destination))
        XCTAssertEqual(
            try FileManager.default.contentsOfDirectory(atPath: scratch.path).filter { $0.contains("out") }, [])
    }

    final class FailingPolicy: EntityMigrationPolicy {
        var seen = 0
        override func createDestinationInstances(
            forSource sInstance: ManagedObject, in mapping: EntityMapping, manager: MigrationManager
        ) throws {
            seen += 1
            if seen == 3 {
                throw MigrationError(.entityMigrationPolicy, "policy gave up on \(try sInstance.value(forKey: "name"))")
            }
            try super.createDestinationInstances(forSource: sInstance, in: mapping, manager: manager)
        }
    }

    func testAPolicyFailingHalfWayLeavesTheSourceByteIdentical() throws {
        let source = try makePeople((0..<6).map { ("P\($0)", "Sweden", Int64($0)) })
        let before = fileBytes(source)
        let manager = try MigrationManager(
            sourceModel: v1, destinationModel: v2, mappingModel: try mapping(", \"policy\": \"Failing\""))
        manager.registerPolicy(named: "Failing") { FailingPolicy() }
        let destination = scratch.file("out.sqlite")
        XCTAssertThrowsError(try manager.migrateStore(from: source, to: destination)) { error in
            XCTAssertEqual((error as? MigrationError)?.code, .entityMigrationPolicy)
            XCTAssertTrue("\(error)".contains("policy gave up on P2"), "\(error)")
        }
        XCTAssertEqual(fileBytes(source), before)
        XCTAssertFalse(FileManager.default.fileExists(atPath: destination))
        XCTAssertEqual(
            try FileManager.default.contentsOfDirectory(atPath: scratch.path).filter { $0.contains(".cdmigrate-") }, [],
            "no temporary or lock file is left")
    }

    func testUnregisteredPolicyAndExistingDestinationAreRefusedBeforeAnythingRuns() throws {
        let source = try makePeople([("Anna", "Sweden", 1)])
        let manager = try MigrationManager(
            sourceModel: v1, destinationModel: v2, mappingModel: try mapping(", \"policy\": \"Nobody\""))
        XCTAssertThrowsError(try manager.migrateStore(from: source, to: scratch.file("a.sqlite"))) { error in
            XCTAssertEqual((error as? MigrationError)?.code, .entityMigrationPolicy)
            XCTAssertTrue("\(error)".contains("'Nobody'"))
        }
        let plain = try MigrationManager(sourceModel: v1, destinationModel: v2, mappingModel: try mapping())
        XCTAssertTrue(FileManager.default.createFile(atPath: scratch.file("taken.sqlite"), contents: Data([1, 2, 3])))
        XCTAssertThrowsError(try plain.migrateStore(from: source, to: scratch.file("taken.sqlite"))) { error in
            XCTAssertEqual((error as? MigrationError)?.code, .migrationManagerDestinationStore)
        }
        XCTAssertEqual(fileBytes(scratch.file("taken.sqlite")), [1, 2, 3])
        XCTAssertThrowsError(try plain.migrateStore(from: source, to: source)) { error in
            XCTAssertEqual((error as? MigrationError)?.code, .migrationManagerDestinationStore)
        }
        XCTAssertThrowsError(try plain.migrateStore(from: scratch.file("missing.sqlite"), to: scratch.file("b.sqlite")))
        { error in
            XCTAssertEqual((error as? MigrationError)?.code, .migrationManagerSourceStore)
        }
    }

    func testProgressStagesKeepTheNumbersOfTheCAPI() {
        // cdm_progress.stage and the Python binding's Progress.stage carry these numbers.
        XCTAssertEqual(MigrationProgress.Stage.allCases.map(\.rawValue), [1, 2, 3])
        XCTAssertEqual(MigrationProgress.Stage(rawValue: 2), .createRelationships)
        XCTAssertNil(MigrationProgress.Stage(rawValue: 0))
        XCTAssertEqual(
            MigrationProgress.Stage.allCases.map(\.description), ["instances", "relationships", "validation"])
    }

    func testProgressFollowsCoreDataStepsAndCancellationCleansUp() throws {
        let source = try makePeople((0..<50).map { ("P\($0)", $0 % 2 == 0 ? "Sweden" : "Finland", Int64($0)) })
        let manager = try MigrationManager(sourceModel: v1, destinationModel: v2, mappingModel: try mapping())
        manager.pushDownSQL = false  // row by row, so progress moves within a step
        manager.progressInterval = 5
        var fractions: [Double] = []
        var stages: [MigrationProgress.Stage] = []
        manager.progressHandler = { progress in
            fractions.append(progress.fraction)
            if stages.last != progress.stage { stages.append(progress.stage) }
            return true
        }
        try manager.migrateStore(from: source, to: scratch.file("ok.sqlite"))
        XCTAssertEqual(fractions, fractions.sorted(), "progress never goes back")
        XCTAssertEqual(fractions.last, 1)
        XCTAssertEqual(stages, [.createDestinationInstances, .createRelationships, .validate])
        XCTAssertTrue(fractions.contains { $0 > 0 && $0 < 1.0 / 6 }, "row counts advance within the first step")

        let cancelling = try MigrationManager(sourceModel: v1, destinationModel: v2, mappingModel: try mapping())
        cancelling.pushDownSQL = false
        cancelling.progressInterval = 1
        var calls = 0
        cancelling.progressHandler = { _ in
            calls += 1
            return calls < 10
        }
        let before = fileBytes(source)
        XCTAssertThrowsError(try cancelling.migrateStore(from: source, to: scratch.file("cancelled.sqlite"))) { error in
            XCTAssertEqual((error as? MigrationError)?.code, .migrationCancelled)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: scratch.file("cancelled.sqlite")))
        XCTAssertEqual(fileBytes(source), before)
    }

    func testHostFunctionsEntityPolicySelectorsAndMappingUserInfo() throws {
        final class Policy: EntityMigrationPolicy {
            override func perform(selector: String, arguments: [Value], manager: MigrationManager) throws -> Value? {
                guard selector == "initialOf:" else { return nil }
                return arguments.first?.stringValue.flatMap { $0.first }.map { .string(String($0)) } ?? .null
            }
        }
        let source = try makePeople([("Anna Berg", "Sweden", 30)])
        let model = try MappingModel(
            json:
                """
                {"entityMappings": [{"name": "PersonToSwede", "sourceEntity": "Person", "destinationEntity": "Swede", "predicate": "TRUEPREDICATE",
                  "policy": "P", "userInfo": {"suffix": "!", "factor": 2},
                  "attributeMappings": {
                    "name": "FUNCTION(CAST(\\"MigrationFunctions\\", \\"Class\\"), \\"join:with:\\", FUNCTION($entityPolicy, \\"initialOf:\\", $source.name), $entityMapping.userInfo.suffix)",
                    "age": "$source.age * $entityMapping.userInfo.factor + 1"}}]}
                """)
        let manager = try MigrationManager(sourceModel: v1, destinationModel: v2, mappingModel: model)
        manager.registerPolicy(named: "P") { Policy() }
        manager.registerFunction(className: "MigrationFunctions", selector: "join:with:") { args in
            .string(args.map { $0.stringValue ?? "?" }.joined())
        }
        try manager.migrateStore(from: source, to: scratch.file("out.sqlite"))
        let store = try PersistentStore.open(at: scratch.file("out.sqlite"), model: v2)
        defer { store.close() }
        let swede = try XCTUnwrap(fetchAll(store, "Swede").first)
        XCTAssertEqual(try swede.value(forKey: "name"), .string("A!"))
        XCTAssertEqual(try swede.value(forKey: "age"), .integer(61))
    }

    func testTwoPassesWriteIntoOneDestination() throws {
        let source = try makePeople((0..<10).map { ("P\($0)", "Sweden", Int64($0)) })
        let first = try MappingModel(
            json:
                """
                {"name": "StepOne", "entityMappings": [{"name": "PersonToSwede", "sourceEntity": "Person", "destinationEntity": "Swede",
                  "predicate": "TRUEPREDICATE", "attributeMappings": {"name": "$source.name", "age": "$source.age"}}]}
                """)
        let second = try MappingModel(
            json:
                """
                {"name": "StepTwo", "entityMappings": [{"name": "PersonToFinn", "sourceEntity": "Person", "destinationEntity": "Finn",
                  "predicate": "age < 5", "attributeMappings": {"name": "$source.name", "age": "$source.age"}}]}
                """)
        let manager = try MigrationManager(sourceModel: v1, destinationModel: v2, mappingModels: [first, second])
        let report = try manager.migrateStore(from: source, to: scratch.file("out.sqlite"))
        XCTAssertEqual(
            report.mappings.map { "\($0.pass) \($0.entityMappingName) \($0.sourceInstances)" },
            ["0 PersonToSwede 10", "1 PersonToFinn 5"])
        let store = try PersistentStore.open(at: scratch.file("out.sqlite"), model: v2)
        defer { store.close() }
        XCTAssertEqual(try store.count(FetchRequest(entityName: "Swede")), 10)
        XCTAssertEqual(try store.count(FetchRequest(entityName: "Finn")), 5)
    }

    func testInPlaceMigrationReplacesTheStoreAndItsLog() throws {
        let path = scratch.file("app.sqlite")
        try makeStore(path, v1) { store in
            _ = try insert(store, "Person", ["name": "Anna", "country": "Sweden", "age": 3])
        }
        // Leave committed data in a -wal beside the store, as an app that is still running would.
        var db: OpaquePointer?
        XCTAssertEqual(sqlite3_open(path, &db), SQLITE_OK)
        XCTAssertEqual(
            sqlite3_exec(
                db,
                "PRAGMA journal_mode=WAL; PRAGMA wal_autocheckpoint=0; INSERT INTO ZPERSON (Z_PK, Z_ENT, Z_OPT, ZNAME, ZCOUNTRY, ZAGE) VALUES (100, 1, 1, 'Ebba', 'Sweden', 5);",
                nil, nil, nil), SQLITE_OK)
        let copyDirectory = scratch.file("copy")
        try FileManager.default.createDirectory(atPath: copyDirectory, withIntermediateDirectories: true)
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: path + suffix) {
            try FileManager.default.copyItem(atPath: path + suffix, toPath: copyDirectory + "/app.sqlite" + suffix)
        }
        sqlite3_close(db)
        let copy = copyDirectory + "/app.sqlite"
        XCTAssertTrue(FileManager.default.fileExists(atPath: copy + "-wal"), "the copy has its log")

        let manager = try MigrationManager(sourceModel: v1, destinationModel: v2, mappingModel: try mapping())
        try manager.migrateStoreInPlace(at: copy)
        XCTAssertFalse(FileManager.default.fileExists(atPath: copy + "-wal"))
        let store = try PersistentStore.open(at: copy, model: v2)
        defer { store.close() }
        XCTAssertEqual(
            Set(try fetchAll(store, "Swede").map { try $0.value(forKey: "name") }), [.string("Anna"), .string("Ebba")],
            "rows only in the -wal were migrated too")
        XCTAssertThrowsError(try PersistentStore.open(at: copy, model: v1)) { error in
            XCTAssertEqual((error as? MigrationError)?.code, .incompatibleVersionHash)
        }
    }

    func testRenamesStoreWrittenByCoreDataMigratesKeepingItsValue() throws {
        let fixture = TestPaths.fixtures + "/apple-stores/renames/Example_v1.0.0.sqlite"
        let copy = scratch.file("Example.sqlite")
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: fixture + suffix) {
            try FileManager.default.copyItem(atPath: fixture + suffix, toPath: copy + suffix)
        }
        let fixtures = TestPaths.fixtures + "/json-models/"
        let v100 = try ManagedObjectModel(contentsOf: fixtures + "renames-v1.0.0.json")
        let v200 = try ManagedObjectModel(contentsOf: fixtures + "renames-v2.0.0.json")
        let mapping = try MappingModel(
            json:
                """
                {"entityMappings": [{"name": "BasicEntityToBasicEntity", "type": "transform", "sourceEntity": "BasicEntity", "destinationEntity": "BasicEntity",
                  "sourceExpression": "FETCH(FUNCTION($manager, \\"fetchRequestForSourceEntityNamed:predicateString:\\", \\"BasicEntity\\", \\"TRUEPREDICATE\\"), $manager.sourceContext, NO)",
                  "attributeMappings": [{"name": "v2_0_0_name", "valueExpression": "FUNCTION($source, \\"valueForKey:\\", \\"v1_0_0_name\\")"}]}]}
                """)
        let manager = try MigrationManager(sourceModel: v100, destinationModel: v200, mappingModel: mapping)
        try manager.migrateStoreInPlace(at: copy)
        let store = try PersistentStore.open(at: copy, model: v200)
        defer { store.close() }
        XCTAssertEqual(
            store.metadata.versionHashes["BasicEntity"], v200.entity(named: "BasicEntity")?.versionHash,
            "the store now says it is v2.0.0, with Apple's hash")
        XCTAssertEqual(
            try fetchAll(store, "BasicEntity").map { try $0.value(forKey: "v2_0_0_name") }, [.string("A Known Value")])
        var db: OpaquePointer?
        XCTAssertEqual(sqlite3_open(copy, &db), SQLITE_OK)
        defer { sqlite3_close(db) }
        var statement: OpaquePointer?
        XCTAssertEqual(sqlite3_prepare_v2(db, "SELECT ZV2_0_0_NAME FROM ZBASICENTITY", -1, &statement, nil), SQLITE_OK)
        XCTAssertEqual(sqlite3_step(statement), SQLITE_ROW)
        XCTAssertEqual(
            String(cString: sqlite3_column_text(statement, 0)), "A Known Value",
            "Core Data's column name for the new attribute")
        sqlite3_finalize(statement)
    }
}

extension MigrationBehaviourTests {
    func testASourceStoreAtAnotherVersionIsAMissingSourceModel() throws {
        let path = scratch.file("v2.sqlite")
        try makeStore(path, v2) { store in _ = try insert(store, "Swede", ["name": "Anna"]) }
        let manager = try MigrationManager(sourceModel: v1, destinationModel: v2, mappingModel: try mapping())
        XCTAssertThrowsError(try manager.migrateStore(from: path, to: scratch.file("out.sqlite"))) { error in
            let e = error as? MigrationError
            XCTAssertEqual(e?.code, .migrationMissingSourceModel)
            XCTAssertTrue(e?.message.contains("does not match the source model") ?? false, "\(error)")
            XCTAssertEqual(e?.underlying.first?.code, .incompatibleVersionHash)
        }
    }
}

extension MigrationBehaviourTests {
    /// Declarative mappings may run as one SQL statement; the result must be the row-by-row one.
    func testSQLPushDownGivesTheRowByRowResult() throws {
        let countries = ["Sweden", "finland", "Finland", "Norway"]
        var rows: [(String?, String, Int64)] = []
        for i in 0..<300 {
            let name: String? = i % 7 == 0 ? nil : "P'\(i)"
            rows.append((name, countries[i % 4], Int64(i * 3 - 100)))
        }
        let source = try makePeople(rows)
        let text = """
            {"entityMappings": [
              {"name": "PersonToSwede", "sourceEntity": "Person", "destinationEntity": "Swede", "predicate": "country == 'Sweden' OR age > 500",
               "attributeMappings": {"name": "$source.name", "age": "$source.age * 2 - 1"}},
              {"name": "PersonToFinn", "sourceEntity": "Person", "destinationEntity": "Finn", "predicate": "country ==[c] 'FINLAND'",
               "attributeMappings": {"name": "FUNCTION($source, \\"valueForKey:\\", \\"name\\")", "age": "7"}}
            ]}
            """
        var dumps: [[String]] = []
        for pushDown in [false, true] {
            let manager = try MigrationManager(
                sourceModel: v1, destinationModel: v2, mappingModel: try MappingModel(json: text))
            manager.pushDownSQL = pushDown
            let out = scratch.file("out-\(pushDown).sqlite")
            XCTAssertThrowsError(try manager.migrateStore(from: source, to: out)) { error in
                XCTAssertEqual(
                    (error as? MigrationError)?.code, .validationMultipleErrors,
                    "nil names are refused either way: \(error)")
            }
            // Without the nil names, the same migration succeeds: compare every row.
            let named = scratch.file("named-\(pushDown).sqlite")
            try makeStore(named, v1) { store in
                for (name, country, age) in rows where name != nil {
                    _ = try insert(
                        store, "Person",
                        ["name": .string(name ?? ""), "country": .string(country), "age": .integer(age)])
                }
            }
            let report = try manager.migrateStore(from: named, to: out)
            XCTAssertEqual(report.mappings.map { $0.associations }, report.mappings.map { $0.sourceInstances })
            XCTAssertEqual(report.mappings.map { $0.instancesBySQL }, [pushDown, pushDown])
            var db: OpaquePointer?
            XCTAssertEqual(sqlite3_open(out, &db), SQLITE_OK)
            var dump: [String] = []
            for sql in [
                "SELECT Z_PK, Z_ENT, Z_OPT, ZNAME, ZAGE FROM ZSWEDE ORDER BY Z_PK",
                "SELECT Z_PK, Z_ENT, Z_OPT, ZNAME, ZAGE FROM ZFINN ORDER BY Z_PK",
                "SELECT Z_ENT, Z_NAME, Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_ENT",
            ] {
                var statement: OpaquePointer?
                XCTAssertEqual(sqlite3_prepare_v2(db, sql, -1, &statement, nil), SQLITE_OK)
                while sqlite3_step(statement) == SQLITE_ROW {
                    dump.append(
                        (0..<sqlite3_column_count(statement)).map { i in
                            sqlite3_column_type(statement, i) == SQLITE_NULL
                                ? "NULL"
                                : "\(sqlite3_column_type(statement, i)):"
                                    + String(cString: sqlite3_column_text(statement, i))
                        }.joined(separator: "|"))
                }
                sqlite3_finalize(statement)
            }
            sqlite3_close(db)
            dumps.append(dump)
        }
        XCTAssertEqual(dumps[0].count, dumps[1].count)
        XCTAssertGreaterThan(dumps[0].count, 200)
        XCTAssertEqual(dumps[0], dumps[1], "SQL and row-by-row paths store the same rows")
    }
}

/// Relationship counts are checked as Core Data checks them: an optional relationship may be
/// empty whatever its minimum count; its bounds apply once it holds something.
final class RelationshipCountValidationTests: XCTestCase {
    static let model = """
        {"name": "Shelf", "entities": [
          {"name": "Box", "attributes": [{"name": "label", "type": "string"}], "relationships": [
            {"name": "owner", "destination": "Owner", "inverse": "boxes", "minCount": 1, "maxCount": 1},
            {"name": "tags", "destination": "Tag", "inverse": "box", "toMany": true, "minCount": 2}]},
          {"name": "Owner", "attributes": [{"name": "name", "type": "string"}], "relationships": [
            {"name": "boxes", "destination": "Box", "inverse": "owner", "toMany": true}]},
          {"name": "Tag", "attributes": [{"name": "name", "type": "string"}], "relationships": [
            {"name": "box", "destination": "Box", "inverse": "tags"}]}
        ]}
        """
    static let mapping = """
        {"entityMappings": [
          {"name": "BoxToBox", "sourceEntity": "Box", "destinationEntity": "Box", "predicate": "TRUEPREDICATE", "attributeMappings": {"label": "$source.label"},
           "relationshipMappings": {"owner": "FUNCTION($manager, \\"destinationInstancesForEntityMappingNamed:sourceInstances:\\", \\"OwnerToOwner\\", $source.owner)",
                                    "tags": "FUNCTION($manager, \\"destinationInstancesForEntityMappingNamed:sourceInstances:\\", \\"TagToTag\\", $source.tags)"}},
          {"name": "OwnerToOwner", "sourceEntity": "Owner", "destinationEntity": "Owner", "predicate": "TRUEPREDICATE", "attributeMappings": {"name": "$source.name"}},
          {"name": "TagToTag", "sourceEntity": "Tag", "destinationEntity": "Tag", "predicate": "TRUEPREDICATE", "attributeMappings": {"name": "$source.name"}}
        ]}
        """

    func migrate(tagsPerBox: [Int]) throws -> MigrationReport {
        let scratch = ScratchDirectory()
        let model = try ManagedObjectModel(json: Self.model)
        let source = scratch.file("shelf.sqlite")
        try makeStore(source, model) { store in
            for (i, count) in tagsPerBox.enumerated() {
                let box = try insert(store, "Box", ["label": .string("box \(i)")])
                var tags: [Value] = []
                for t in 0..<count {
                    tags.append(.object(try insert(store, "Tag", ["name": .string("tag \(i).\(t)")])))
                }
                try box.setValue(.collection(tags), forKey: "tags")
            }
        }
        let manager = try MigrationManager(
            sourceModel: model, destinationModel: model, mappingModel: try MappingModel(json: Self.mapping))
        return try manager.migrateStore(from: source, to: scratch.file("out.sqlite"), checkSourceVersion: false)
    }

    func testOptionalRelationshipsWithAMinimumCountMayBeEmpty() throws {
        let report = try migrate(tagsPerBox: [0, 2, 3])
        XCTAssertEqual(report.destinationCounts.first { $0.entityName == "Box" }?.count, 3)
    }

    func testANonEmptyOptionalToManyBelowItsMinimumFails() {
        XCTAssertThrowsError(try migrate(tagsPerBox: [0, 1, 2])) { error in
            let e = error as? MigrationError
            XCTAssertEqual(e?.code, .validationRelationshipLacksMinimumCount, "\(error)")
            XCTAssertTrue(e?.message.contains("Box.tags has fewer than 2 instances (x-coredata://") == true, "\(error)")
        }
    }
}

/// Stage 2 as Core Data runs it: `createRelationships` once per destination instance, and the
/// default refusing a destination made from several sources.
final class RelationshipStageTests: XCTestCase {
    static let people = """
        {"name": "People", "entities": [{"name": "Person", "attributes": [{"name": "name", "type": "string"}, {"name": "team", "type": "string"}]}]}
        """
    static let teams = """
        {"name": "Teams", "entities": [
          {"name": "Team", "attributes": [{"name": "name", "type": "string"}], "relationships": [
            {"name": "members", "destination": "Member", "inverse": "team", "toMany": true}]},
          {"name": "Member", "attributes": [{"name": "name", "type": "string"}], "relationships": [
            {"name": "team", "destination": "Team", "inverse": "members"}]}
        ]}
        """
    static let mapping = """
        {"entityMappings": [
          {"name": "PersonToTeam", "sourceEntity": "Person", "destinationEntity": "Team", "predicate": "TRUEPREDICATE", "policy": "OneTeamPerName",
           "attributeMappings": {"name": "$source.team"},
           "relationshipMappings": {"members": "FUNCTION($manager, \\"destinationInstancesForEntityMappingNamed:sourceInstances:\\", \\"PersonToMember\\", $source)"}},
          {"name": "PersonToMember", "sourceEntity": "Person", "destinationEntity": "Member", "predicate": "TRUEPREDICATE",
           "attributeMappings": {"name": "$source.name"}}
        ]}
        """

    /// Makes one Team per distinct name; counts the relationship-stage calls.
    final class OneTeamPerName: EntityMigrationPolicy {
        var teams: [String: ManagedObject] = [:]
        var relationshipCalls = 0
        let setsRelationshipsItself: Bool
        init(setsRelationshipsItself: Bool) { self.setsRelationshipsItself = setsRelationshipsItself }

        override func createDestinationInstances(
            forSource sInstance: ManagedObject, in mapping: EntityMapping, manager: MigrationManager
        ) throws {
            guard case .string(let name) = try sInstance.value(forKey: "team") else { return }
            if let team = teams[name] {
                try manager.associate(sourceInstance: sInstance, withDestinationInstance: team, for: mapping)
            } else {
                teams[name] = try defaultCreateDestinationInstances(forSource: sInstance, in: mapping, manager: manager)
            }
        }

        override func createRelationships(
            forDestination dInstance: ManagedObject, in mapping: EntityMapping, manager: MigrationManager
        ) throws {
            relationshipCalls += 1
            guard setsRelationshipsItself else {
                return try super.createRelationships(forDestination: dInstance, in: mapping, manager: manager)
            }
            let people = try manager.sourceInstances(
                forEntityMappingName: mapping.name, destinationInstances: [dInstance])
            let members = try manager.destinationInstances(
                forEntityMappingName: "PersonToMember", sourceInstances: people)
            try dInstance.setValue(.collection(members.map { .object($0) }), forKey: "members")
        }
    }

    func migrate(_ policy: OneTeamPerName, _ scratch: ScratchDirectory) throws -> String {
        let source = scratch.file("people.sqlite")
        let destination = scratch.file("teams.sqlite")
        let people = try ManagedObjectModel(json: Self.people)
        try makeStore(source, people) { store in
            for (name, team) in [("Ada", "red"), ("Bo", "blue"), ("Cy", "red"), ("Di", "red"), ("Ed", "green")] {
                try insert(store, "Person", ["name": .string(name), "team": .string(team)])
            }
        }
        let manager = try MigrationManager(
            sourceModel: people, destinationModel: try ManagedObjectModel(json: Self.teams),
            mappingModel: try MappingModel(json: Self.mapping))
        manager.registerPolicy(named: "OneTeamPerName") { policy }
        _ = try manager.migrateStore(from: source, to: destination, checkSourceVersion: false)
        return destination
    }

    func testCreateRelationshipsRunsOncePerDestinationInstance() throws {
        let scratch = ScratchDirectory()
        let policy = OneTeamPerName(setsRelationshipsItself: true)
        let destination = try migrate(policy, scratch)
        XCTAssertEqual(policy.relationshipCalls, 3, "three teams made from five people")
        let store = try PersistentStore.open(at: destination, model: try ManagedObjectModel(json: Self.teams))
        defer { store.close() }
        var members: [String: Set<String>] = [:]
        for team in try fetchAll(store, "Team") {
            guard case .string(let name) = try team.value(forKey: "name") else { continue }
            members[name] = Set(
                try team.value(forKey: "members").elements.compactMap { element -> String? in
                    guard let object = element.object, case .string(let member) = try object.value(forKey: "name")
                    else { return nil }
                    return member
                })
        }
        XCTAssertEqual(members, ["red": ["Ada", "Cy", "Di"], "blue": ["Bo"], "green": ["Ed"]])
    }

    func testTheDefaultRefusesADestinationMadeFromSeveralSources() {
        let scratch = ScratchDirectory()
        XCTAssertThrowsError(try migrate(OneTeamPerName(setsRelationshipsItself: false), scratch)) { error in
            let e = error as? MigrationError
            XCTAssertEqual(e?.code, .migration, "\(error)")
            XCTAssertTrue(
                e?.message.contains("more than one source for destination in default mapping policy") == true,
                "\(error)")
            XCTAssertTrue(e?.message.contains("PersonToTeam") == true, "\(error)")
        }
        XCTAssertNil(fileBytes(scratch.file("teams.sqlite")), "nothing is left at the destination")
    }
}

/// Stage 3 in Core Data's order: every instance is validated before the policies'
/// `performCustomValidation` and `end`, which do not run when validation fails.
final class ValidationStageTests: XCTestCase {
    final class Recording: EntityMigrationPolicy {
        var calls: [String] = []
        override func performCustomValidation(forMapping mapping: EntityMapping, manager: MigrationManager) throws {
            calls.append("validate")
        }
        override func end(_ mapping: EntityMapping, manager: MigrationManager) throws { calls.append("end") }
    }

    func run(names: [String?]) throws -> (Recording, Error?) {
        let scratch = ScratchDirectory()
        let v1 = try ManagedObjectModel(json: MigrationBehaviourTests.people)
        let v2 = try ManagedObjectModel(json: MigrationBehaviourTests.split)
        let source = scratch.file("people.sqlite")
        try makeStore(source, v1) { store in
            for name in names {
                try insert(
                    store, "Person",
                    ["name": name.map { .string($0) } ?? .null, "country": .string("Sweden"), "age": .integer(3)])
            }
        }
        let mapping = try MappingModel(
            json:
                """
                {"entityMappings": [{"name": "PersonToSwede", "sourceEntity": "Person", "destinationEntity": "Swede", "predicate": "TRUEPREDICATE",
                  "policy": "Recording", "attributeMappings": {"name": "$source.name", "age": "$source.age"}}]}
                """)
        let policy = Recording()
        let manager = try MigrationManager(sourceModel: v1, destinationModel: v2, mappingModel: mapping)
        manager.registerPolicy(named: "Recording") { policy }
        do {
            _ = try manager.migrateStore(from: source, to: scratch.file("out.sqlite"))
            return (policy, nil)
        } catch { return (policy, error) }
    }

    func testCustomValidationAndEndRunOnlyAfterTheInstancesValidate() throws {
        let (passing, noError) = try run(names: ["Anna", "Ebba"])
        XCTAssertNil(noError)
        XCTAssertEqual(passing.calls, ["validate", "end"])
        let (failing, error) = try run(names: ["Anna", nil])
        XCTAssertEqual(failing.calls, [], "neither hook runs when validation fails")
        XCTAssertEqual(
            (error as? MigrationError)?.code, .validationMissingMandatoryProperty,
            "a single failure comes as itself: \(String(describing: error))")
    }

    func testIndividualErrorsAreBoundedWhileTheCountStaysExact() throws {
        let (_, error) = try run(names: Array(repeating: nil, count: 1_200) + ["Anna"])
        let e = try XCTUnwrap(error as? MigrationError)
        XCTAssertEqual(e.code, .validationMultipleErrors, "\(e)")
        XCTAssertEqual(e.underlying.count, 1_000)
        XCTAssertTrue(e.message.contains("Swede.name is required but nil in 1200 instances"), e.message)
    }
}
