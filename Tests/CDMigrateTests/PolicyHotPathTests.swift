import XCTest
@testable import CDMigrate

/// What a policy calls for every row stays cheap without changing what it sees: a buffered
/// instance looked up by its ID is that instance (the buffer is not written for it), and stage 2
/// walks a mapping's instances only when a `createRelationships` other than the default's may run.
final class PolicyHotPathTests: XCTestCase {
    static let people = """
    {"name": "People", "entities": [
      {"name": "Person", "attributes": [{"name": "name", "type": "string"}]}
    ]}
    """

    var scratch: ScratchDirectory!
    var model: ManagedObjectModel!

    override func setUpWithError() throws {
        scratch = ScratchDirectory()
        model = try ModelReader.model(fromJSON: Self.people)
    }

    func testABufferedInstanceLookedUpByItsIDIsThatInstanceAndStaysBuffered() throws {
        let store = try PersistentStore.create(at: scratch.file("s.sqlite"), model: model)
        defer { store.close() }
        let made = try insert(store, "Person", ["name": "Ana"])
        let found = try XCTUnwrap(try store.object(with: made.objectID))
        XCTAssertTrue(found === made)
        XCTAssertEqual(try store.database.scalar("SELECT COUNT(*) FROM ZPERSON")?.integer, 0, "not written for the look-up")
        try found.setValue("Eva", forKey: "name")
        try store.save()
        XCTAssertEqual(try store.database.scalar("SELECT ZNAME FROM ZPERSON")?.text, "Eva")
        // Once written, a look-up reads the row.
        let again = try XCTUnwrap(try store.object(with: made.objectID))
        XCTAssertFalse(again === made)
        XCTAssertEqual(try again.value(forKey: "name"), .string("Eva"))
        XCTAssertNil(try store.object(with: ObjectID(storeIdentifier: store.storeIdentifier, entityName: "Person", primaryKey: 99)))
    }

    final class CountingPolicy: EntityMigrationPolicy {
        var relationshipCalls = 0
        override func createRelationships(forDestination dInstance: ManagedObject, in mapping: EntityMapping, manager: MigrationManager) throws {
            relationshipCalls += 1
        }
    }

    func testOnlyTheDefaultRelationshipCreationIsSkippedForAMappingWithoutRelationshipMappings() throws {
        XCTAssertTrue(DefaultEntityMigrationPolicy().createsRelationshipsByDefault)
        XCTAssertFalse(EntityMigrationPolicy().createsRelationshipsByDefault)
        let source = scratch.file("source.sqlite")
        try makeStore(source, model) { store in
            for name in ["Ana", "Eva", "Leo"] { _ = try insert(store, "Person", ["name": .string(name)]) }
        }
        let mapping = try MappingModel.fromJSON("""
        {"entityMappings": [{"name": "PersonToPerson", "sourceEntity": "Person", "destinationEntity": "Person",
          "predicate": "TRUEPREDICATE", "policy": "Counting", "attributeMappings": {"name": "$source.name"}}]}
        """)
        let manager = try MigrationManager(sourceModel: model, destinationModel: model, mappingModel: mapping)
        let policy = CountingPolicy()
        manager.registerPolicy(named: "Counting") { policy }
        try manager.migrateStore(from: source, to: scratch.file("out.sqlite"))
        XCTAssertEqual(policy.relationshipCalls, 3, "an overridden createRelationships runs for every destination instance")
    }
}
