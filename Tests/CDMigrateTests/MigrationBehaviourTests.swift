import XCTest
import CSQLite
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
        v1 = try ModelReader.model(fromJSON: Self.people)
        v2 = try ModelReader.model(fromJSON: Self.split)
    }

    func makePeople(_ rows: [(String?, String, Int64)]) throws -> String {
        let path = scratch.file("people.sqlite")
        try makeStore(path, v1) { store in
            for (name, country, age) in rows {
                _ = try insert(store, "Person", ["name": name.map { .string($0) } ?? .null, "country": .string(country), "age": .integer(age)])
            }
        }
        return path
    }

    func mapping(_ extra: String = "") throws -> MappingModel {
        try MappingModel.fromJSON("""
        {"entityMappings": [
          {"name": "PersonToSwede", "sourceEntity": "Person", "destinationEntity": "Swede", "predicate": "country == 'Sweden'",
           "attributeMappings": {"name": "$source.name", "age": "$source.age"} \(extra)},
          {"name": "PersonToFinn", "sourceEntity": "Person", "destinationEntity": "Finn", "predicate": "country ==[c] 'finland' AND age >= 0",
           "attributeMappings": {"name": "FUNCTION($source.name, \\"uppercaseString\\")", "age": "$source.age"}}
        ]}
        """)
    }

    func testPredicatesSelectRowsAndUntakenInstancesAreCounted() throws {
        let source = try makePeople([("Anna", "Sweden", 30), ("Matti", "Finland", 40), ("Olaf", "Norway", 50), ("Ebba", "Sweden", 20), ("Liisa", "FINLAND", 33)])
        let manager = try MigrationManager(sourceModel: v1, destinationModel: v2, mappingModel: try mapping())
        let report = try manager.migrateStore(from: source, to: scratch.file("out.sqlite"))
        let store = try PersistentStore.open(at: scratch.file("out.sqlite"), model: v2)
        defer { store.close() }
        XCTAssertEqual(Set(try fetchAll(store, "Swede").map { try $0.value(forKey: "name") }), [.string("Anna"), .string("Ebba")])
        XCTAssertEqual(Set(try fetchAll(store, "Finn").map { try $0.value(forKey: "name") }), [.string("MATTI"), .string("LIISA")])
        XCTAssertEqual(report.untakenSourceInstances.map { $0.entityName }, ["Person"])
        XCTAssertEqual(report.untakenSourceInstances.first?.count, 1, "Olaf of Norway was taken by no mapping")
        XCTAssertEqual(report.destinationCounts.first { $0.entityName == "Swede" }?.count, 2)
    }

    func testValidationCollectsEveryProblemAndLeavesNothingBehind() throws {
        let source = try makePeople([(nil, "Sweden", 30), (nil, "Sweden", 99999), ("Ebba", "Sweden", -40000), ("Matti", "Finland", 40)])
        let before = fileBytes(source)
        let manager = try MigrationManager(sourceModel: v1, destinationModel: v2, mappingModel: try mapping())
        let destination = scratch.file("out.sqlite")
        XCTAssertThrowsError(try manager.migrateStore(from: source, to: destination)) { error in
            let e = error as? MigrationError
            XCTAssertEqual(e?.code, .validationMultipleErrors, "\(error)")
            let codes = Set((e?.underlying ?? []).map { $0.code })
            XCTAssertEqual(codes, [.validationMissingMandatoryProperty, .validationNumberTooLarge, .validationNumberTooSmall])
            let text = (e?.underlying ?? []).map { $0.message }.joined(separator: "\n")
            XCTAssertTrue(text.contains("Swede.name is required but nil in 2 instances"), text)
            XCTAssertTrue(text.contains("Swede.age is above its maximum 32767"), text)
            XCTAssertTrue(text.contains("Swede.age is below its minimum -32768 in 1 instance"), text)
            XCTAssertTrue(text.contains("x-coredata://"), text)
        }
        XCTAssertEqual(fileBytes(source), before)
        XCTAssertFalse(FileManager.default.fileExists(atPath: destination))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: scratch.path).filter { $0.contains("out") }, [])
    }

    final class FailingPolicy: EntityMigrationPolicy {
        var seen = 0
        override func createDestinationInstances(forSource sInstance: ManagedObject, in mapping: EntityMapping, manager: MigrationManager) throws {
            seen += 1
            if seen == 3 { throw MigrationError(.entityMigrationPolicy, "policy gave up on \(try sInstance.value(forKey: "name"))") }
            try super.createDestinationInstances(forSource: sInstance, in: mapping, manager: manager)
        }
    }

    func testAPolicyFailingHalfWayLeavesTheSourceByteIdentical() throws {
        let source = try makePeople((0..<6).map { ("P\($0)", "Sweden", Int64($0)) })
        let before = fileBytes(source)
        let manager = try MigrationManager(sourceModel: v1, destinationModel: v2, mappingModel: try mapping(", \"policy\": \"Failing\""))
        manager.register(policyNamed: "Failing") { FailingPolicy() }
        let destination = scratch.file("out.sqlite")
        XCTAssertThrowsError(try manager.migrateStore(from: source, to: destination)) { error in
            XCTAssertEqual((error as? MigrationError)?.code, .entityMigrationPolicy)
            XCTAssertTrue("\(error)".contains("policy gave up on P2"), "\(error)")
        }
        XCTAssertEqual(fileBytes(source), before)
        XCTAssertFalse(FileManager.default.fileExists(atPath: destination))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: scratch.path).filter { $0.contains(".cdmigrate-") }, [],
                       "no temporary or lock file is left")
    }

    func testUnregisteredPolicyAndExistingDestinationAreRefusedBeforeAnythingRuns() throws {
        let source = try makePeople([("Anna", "Sweden", 1)])
        let manager = try MigrationManager(sourceModel: v1, destinationModel: v2, mappingModel: try mapping(", \"policy\": \"Nobody\""))
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
        XCTAssertThrowsError(try plain.migrateStore(from: scratch.file("missing.sqlite"), to: scratch.file("b.sqlite"))) { error in
            XCTAssertEqual((error as? MigrationError)?.code, .migrationManagerSourceStore)
        }
    }

    func testProgressFollowsCoreDataStepsAndCancellationCleansUp() throws {
        let source = try makePeople((0..<50).map { ("P\($0)", $0 % 2 == 0 ? "Sweden" : "Finland", Int64($0)) })
        let manager = try MigrationManager(sourceModel: v1, destinationModel: v2, mappingModel: try mapping())
        manager.pushDownSQL = false   // row by row, so progress moves within a step
        manager.progressInterval = 5
        var fractions: [Double] = []
        var stages = Set<Int>()
        manager.progressHandler = { progress in
            fractions.append(progress.fraction)
            stages.insert(progress.stage)
            return true
        }
        try manager.migrateStore(from: source, to: scratch.file("ok.sqlite"))
        XCTAssertEqual(fractions, fractions.sorted(), "progress never goes back")
        XCTAssertEqual(fractions.last, 1)
        XCTAssertEqual(stages, [1, 2, 3])
        XCTAssertTrue(fractions.contains { $0 > 0 && $0 < 1.0 / 6 }, "row counts advance within the first step")

        let cancelling = try MigrationManager(sourceModel: v1, destinationModel: v2, mappingModel: try mapping())
        cancelling.pushDownSQL = false
        cancelling.progressInterval = 1
        var calls = 0
        cancelling.progressHandler = { _ in calls += 1; return calls < 10 }
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
        let model = try MappingModel.fromJSON("""
        {"entityMappings": [{"name": "PersonToSwede", "sourceEntity": "Person", "destinationEntity": "Swede", "predicate": "TRUEPREDICATE",
          "policy": "P", "userInfo": {"suffix": "!"},
          "attributeMappings": {
            "name": "FUNCTION(CAST(\\"MigrationFunctions\\", \\"Class\\"), \\"join:with:\\", FUNCTION($entityPolicy, \\"initialOf:\\", $source.name), $entityMapping.userInfo.suffix)",
            "age": "$source.age * 2 + 1"}}]}
        """)
        let manager = try MigrationManager(sourceModel: v1, destinationModel: v2, mappingModel: model)
        manager.register(policyNamed: "P") { Policy() }
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
        let first = try MappingModel.fromJSON("""
        {"name": "StepOne", "entityMappings": [{"name": "PersonToSwede", "sourceEntity": "Person", "destinationEntity": "Swede",
          "predicate": "TRUEPREDICATE", "attributeMappings": {"name": "$source.name", "age": "$source.age"}}]}
        """)
        let second = try MappingModel.fromJSON("""
        {"name": "StepTwo", "entityMappings": [{"name": "PersonToFinn", "sourceEntity": "Person", "destinationEntity": "Finn",
          "predicate": "age < 5", "attributeMappings": {"name": "$source.name", "age": "$source.age"}}]}
        """)
        let manager = try MigrationManager(sourceModel: v1, destinationModel: v2, mappingModels: [first, second])
        let report = try manager.migrateStore(from: source, to: scratch.file("out.sqlite"))
        XCTAssertEqual(report.mappings.map { "\($0.pass) \($0.entityMappingName) \($0.sourceInstances)" }, ["0 PersonToSwede 10", "1 PersonToFinn 5"])
        let store = try PersistentStore.open(at: scratch.file("out.sqlite"), model: v2)
        defer { store.close() }
        XCTAssertEqual(try store.count(FetchRequest(entityName: "Swede")), 10)
        XCTAssertEqual(try store.count(FetchRequest(entityName: "Finn")), 5)
    }

    func testInPlaceMigrationReplacesTheStoreAndItsLog() throws {
        let path = scratch.file("app.sqlite")
        try makeStore(path, v1) { store in _ = try insert(store, "Person", ["name": "Anna", "country": "Sweden", "age": 3]) }
        // Leave committed data in a -wal beside the store, as an app that is still running would.
        var db: OpaquePointer?
        XCTAssertEqual(sqlite3_open(path, &db), SQLITE_OK)
        XCTAssertEqual(sqlite3_exec(db, "PRAGMA journal_mode=WAL; PRAGMA wal_autocheckpoint=0; INSERT INTO ZPERSON (Z_PK, Z_ENT, Z_OPT, ZNAME, ZCOUNTRY, ZAGE) VALUES (100, 1, 1, 'Ebba', 'Sweden', 5);", nil, nil, nil), SQLITE_OK)
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
        XCTAssertEqual(Set(try fetchAll(store, "Swede").map { try $0.value(forKey: "name") }), [.string("Anna"), .string("Ebba")],
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
        let v100 = try ModelReader.model(fromFile: fixtures + "renames-v1.0.0.json")
        let v200 = try ModelReader.model(fromFile: fixtures + "renames-v2.0.0.json")
        let mapping = try MappingModel.fromJSON("""
        {"entityMappings": [{"name": "BasicEntityToBasicEntity", "type": "transform", "sourceEntity": "BasicEntity", "destinationEntity": "BasicEntity",
          "sourceExpression": "FETCH(FUNCTION($manager, \\"fetchRequestForSourceEntityNamed:predicateString:\\", \\"BasicEntity\\", \\"TRUEPREDICATE\\"), $manager.sourceContext, NO)",
          "attributeMappings": [{"name": "v2_0_0_name", "valueExpression": "FUNCTION($source, \\"valueForKey:\\", \\"v1_0_0_name\\")"}]}]}
        """)
        let manager = try MigrationManager(sourceModel: v100, destinationModel: v200, mappingModel: mapping)
        try manager.migrateStoreInPlace(at: copy)
        let store = try PersistentStore.open(at: copy, model: v200)
        defer { store.close() }
        XCTAssertEqual(store.metadata.versionHashes["BasicEntity"], v200.entity(named: "BasicEntity")?.versionHash, "the store now says it is v2.0.0, with Apple's hash")
        XCTAssertEqual(try fetchAll(store, "BasicEntity").map { try $0.value(forKey: "v2_0_0_name") }, [.string("A Known Value")])
        var db: OpaquePointer?
        XCTAssertEqual(sqlite3_open(copy, &db), SQLITE_OK)
        defer { sqlite3_close(db) }
        var statement: OpaquePointer?
        XCTAssertEqual(sqlite3_prepare_v2(db, "SELECT ZV2_0_0_NAME FROM ZBASICENTITY", -1, &statement, nil), SQLITE_OK)
        XCTAssertEqual(sqlite3_step(statement), SQLITE_ROW)
        XCTAssertEqual(String(cString: sqlite3_column_text(statement, 0)), "A Known Value", "Core Data's column name for the new attribute")
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
            let manager = try MigrationManager(sourceModel: v1, destinationModel: v2, mappingModel: try MappingModel.fromJSON(text))
            manager.pushDownSQL = pushDown
            let out = scratch.file("out-\(pushDown).sqlite")
            XCTAssertThrowsError(try manager.migrateStore(from: source, to: out)) { error in
                XCTAssertEqual((error as? MigrationError)?.code, .validationMultipleErrors, "nil names are refused either way: \(error)")
            }
            // Without the nil names, the same migration succeeds: compare every row.
            let named = scratch.file("named-\(pushDown).sqlite")
            try makeStore(named, v1) { store in
                for (name, country, age) in rows where name != nil {
                    _ = try insert(store, "Person", ["name": .string(name ?? ""), "country": .string(country), "age": .integer(age)])
                }
            }
            let report = try manager.migrateStore(from: named, to: out)
            XCTAssertEqual(report.mappings.map { $0.associations }, report.mappings.map { $0.sourceInstances })
            XCTAssertEqual(report.mappings.map { $0.instancesBySQL }, [pushDown, pushDown])
            var db: OpaquePointer?
            XCTAssertEqual(sqlite3_open(out, &db), SQLITE_OK)
            var dump: [String] = []
            for sql in ["SELECT Z_PK, Z_ENT, Z_OPT, ZNAME, ZAGE FROM ZSWEDE ORDER BY Z_PK", "SELECT Z_PK, Z_ENT, Z_OPT, ZNAME, ZAGE FROM ZFINN ORDER BY Z_PK",
                        "SELECT Z_ENT, Z_NAME, Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_ENT"] {
                var statement: OpaquePointer?
                XCTAssertEqual(sqlite3_prepare_v2(db, sql, -1, &statement, nil), SQLITE_OK)
                while sqlite3_step(statement) == SQLITE_ROW {
                    dump.append((0..<sqlite3_column_count(statement)).map { i in
                        sqlite3_column_type(statement, i) == SQLITE_NULL ? "NULL" : "\(sqlite3_column_type(statement, i)):" + String(cString: sqlite3_column_text(statement, i))
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
