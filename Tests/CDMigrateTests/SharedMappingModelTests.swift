import XCTest

@testable import CDMigrate

/// One mapping model shared by migrations between different models: each migration binds its own
/// copy, so checking the mapping for one migration never changes what another one runs.
final class SharedMappingModelTests: XCTestCase {
    static let split3 = """
        {"name": "People", "versionIdentifier": "3", "entities": [
          {"name": "Finn", "attributes": [{"name": "nickname", "type": "string"}, {"name": "age", "type": "integer32"}, {"name": "name", "type": "string"}]},
          {"name": "Swede", "attributes": [{"name": "nickname", "type": "string"}, {"name": "age", "type": "integer32"}, {"name": "name", "type": "string"}]}
        ]}
        """

    func testMigrationsSharingAMappingModelEachMigrateEveryAttribute() throws {
        let scratch = ScratchDirectory()
        let v1 = try ManagedObjectModel(json: MigrationBehaviourTests.people)
        let v2 = try ManagedObjectModel(json: MigrationBehaviourTests.split)
        let v3 = try ManagedObjectModel(json: Self.split3)
        let source = scratch.file("people.sqlite")
        try makeStore(source, v1) { store in
            _ = try insert(
                store, "Person", ["name": .string("Anna"), "country": .string("Sweden"), "age": .integer(30)])
            _ = try insert(
                store, "Person", ["name": .string("Matti"), "country": .string("Finland"), "age": .integer(40)])
        }
        let mapping = try MappingModel(
            json:
                """
                {"entityMappings": [
                  {"name": "PersonToSwede", "sourceEntity": "Person", "destinationEntity": "Swede", "predicate": "country == 'Sweden'",
                   "attributeMappings": {"name": "$source.name", "age": "$source.age"}},
                  {"name": "PersonToFinn", "sourceEntity": "Person", "destinationEntity": "Finn", "predicate": "country == 'Finland'",
                   "attributeMappings": {"name": "$source.name", "age": "$source.age"}}
                ]}
                """)
        let toV2 = try MigrationManager(sourceModel: v1, destinationModel: v2, mappingModel: mapping)
        let toV3 = try MigrationManager(sourceModel: v1, destinationModel: v3, mappingModel: mapping)
        XCTAssertTrue(
            mapping.entityMappings.allSatisfy { $0.sourceEntity == nil && $0.destinationEntity == nil },
            "checking a mapping model must not change it")

        for (manager, model, name) in [(toV2, v2, "v2.sqlite"), (toV3, v3, "v3.sqlite")] {
            let report = try manager.migrateStore(from: source, to: scratch.file(name))
            XCTAssertEqual(report.mappings.map { $0.sourceInstances }, [1, 1], name)
            let store = try PersistentStore.open(at: scratch.file(name), model: model)
            defer { store.close() }
            XCTAssertEqual(try fetchAll(store, "Swede").map { try $0.value(forKey: "name") }, [.string("Anna")], name)
            XCTAssertEqual(try fetchAll(store, "Finn").map { try $0.value(forKey: "name") }, [.string("Matti")], name)
            XCTAssertEqual(try fetchAll(store, "Finn").map { try $0.value(forKey: "age") }, [.integer(40)], name)
        }
    }

    func testValidationReturnsABoundCopyWithItsWarnings() throws {
        let v1 = try ManagedObjectModel(json: MigrationBehaviourTests.people)
        let v2 = try ManagedObjectModel(json: MigrationBehaviourTests.split)
        let mapping = try MappingModel(
            json:
                """
                {"entityMappings": [{"name": "PersonToSwede", "sourceEntity": "Person", "destinationEntity": "Swede"}]}
                """)
        let first = try mapping.validate(sourceModel: v1, destinationModel: v2)
        let second = try mapping.validate(sourceModel: v1, destinationModel: v2)
        XCTAssertTrue(first.entityMappings[0].destinationEntity === v2.entity(named: "Swede"))
        XCTAssertEqual(first.warnings.count, 1, "one warning per check, not one more per earlier check")
        XCTAssertEqual(second.warnings.count, 1)
        XCTAssertTrue(mapping.warnings.isEmpty)
        XCTAssertNil(mapping.entityMappings[0].destinationEntity)
    }
}
