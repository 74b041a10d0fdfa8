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
        model = try ManagedObjectModel(json: Self.people)
    }

    func testABufferedInstanceLookedUpByItsIDIsThatInstanceAndStaysBuffered() throws {
        let store = try PersistentStore.create(at: scratch.file("s.sqlite"), model: model)
        defer { store.close() }
        let made = try insert(store, "Person", ["name": "Ana"])
        let found = try XCTUnwrap(try store.object(with: made.objectID))
        XCTAssertTrue(found === made)
        XCTAssertEqual(
            try store.database.scalar("SELECT COUNT(*) FROM ZPERSON")?.integer, 0, "not written for the look-up")
        try found.setValue("Eva", forKey: "name")
        try store.save()
        XCTAssertEqual(try store.database.scalar("SELECT ZNAME FROM ZPERSON")?.text, "Eva")
        // Once written, a look-up reads the row (and keeps what it read: see the tests below).
        let again = try XCTUnwrap(try store.object(with: made.objectID))
        XCTAssertFalse(again === made)
        XCTAssertEqual(try again.value(forKey: "name"), .string("Eva"))
        XCTAssertNil(
            try store.object(
                with: ObjectID(storeIdentifier: store.storeIdentifier, entityName: "Person", primaryKey: 99)))
    }

    func testAnInstanceReadByIDIsFoundAgainWithoutAQuery() throws {
        let path = scratch.file("s.sqlite")
        try makeStore(path, model) { store in _ = try insert(store, "Person", ["name": "Ana"]) }
        let store = try PersistentStore.open(at: path, model: model, readOnly: false)
        defer { store.close() }
        let id = ObjectID(storeIdentifier: store.storeIdentifier, entityName: "Person", primaryKey: 1)
        let first = try XCTUnwrap(try store.object(with: id))
        // The row goes behind the store's back: the kept instance is still the answer.
        try store.database.run("DELETE FROM ZPERSON")
        let second = try XCTUnwrap(try store.object(with: id), "no query: the instance read before is kept")
        XCTAssertTrue(second === first)
        XCTAssertNil(
            try store.object(
                with: ObjectID(storeIdentifier: store.storeIdentifier, entityName: "Person", primaryKey: 2)))
    }

    func testAChangeThroughAnotherInstanceOfTheRowIsSeenByTheNextLookUp() throws {
        let store = try PersistentStore.create(at: scratch.file("s.sqlite"), model: model)
        defer { store.close() }
        let made = try insert(store, "Person", ["name": "Ana"])
        try store.flush()
        let kept = try XCTUnwrap(try store.object(with: made.objectID))
        XCTAssertTrue(try store.object(with: made.objectID) === kept)
        let fetched = try XCTUnwrap(try store.fetch(FetchRequest(entityName: "Person")).first)
        XCTAssertFalse(fetched === kept)
        try fetched.setValue("Eva", forKey: "name")
        let found = try XCTUnwrap(try store.object(with: made.objectID))
        XCTAssertEqual(try found.value(forKey: "name"), .string("Eva"), "the kept instance, out of date, is dropped")
        // A change through the kept instance itself keeps it.
        try found.setValue("Leo", forKey: "name")
        XCTAssertTrue(try store.object(with: made.objectID) === found)
        XCTAssertEqual(try store.database.scalar("SELECT ZNAME FROM ZPERSON")?.text, "Leo")
    }

    func testTheKeptInstancesAreBoundedWhateverTheStoreSize() throws {
        let store = try PersistentStore.create(at: scratch.file("s.sqlite"), model: model)
        defer { store.close() }
        for i in 0..<5_000 { _ = try insert(store, "Person", ["name": .string("p\(i)")]) }
        try store.flush()
        for pk in 1...5_000 {
            _ = try store.object(
                with: ObjectID(storeIdentifier: store.storeIdentifier, entityName: "Person", primaryKey: Int64(pk)))
        }
        XCTAssertLessThanOrEqual(store.recentInstances.count, 2 * store.recentInstances.capacity)
        XCTAssertGreaterThan(store.recentInstances.count, 0)
    }

    func testRecentInstancesKeepTwoGenerationsAndPromoteWhatIsUsedAgain() throws {
        let store = try PersistentStore.create(at: scratch.file("s.sqlite"), model: model)
        defer { store.close() }
        let objects = try (0..<4).map { _ in try insert(store, "Person", [:]) }
        let keys = objects.map { store.key($0) }
        var recent = RecentInstances(capacity: 2)
        recent.remember(objects[0], for: keys[0])
        recent.remember(objects[1], for: keys[1])
        recent.remember(objects[2], for: keys[2])  // the young generation was full: 0 and 1 are old
        XCTAssertEqual(recent.count, 3)
        XCTAssertTrue(recent.instance(for: keys[0]) === objects[0])  // promoted to the young generation
        recent.remember(objects[3], for: keys[3])  // young (2, 0) full again: 1 is dropped
        XCTAssertNil(recent.instance(for: keys[1]))
        XCTAssertTrue(recent.instance(for: keys[0]) === objects[0])
        XCTAssertTrue(recent.instance(for: keys[2]) === objects[2])
        XCTAssertTrue(recent.instance(for: keys[3]) === objects[3])
        XCTAssertLessThanOrEqual(recent.count, 4)
        recent.forget(keys[3], unlessItIs: objects[3])
        XCTAssertTrue(recent.instance(for: keys[3]) === objects[3], "the same instance stays")
        recent.forget(keys[3], unlessItIs: objects[0])
        XCTAssertNil(recent.instance(for: keys[3]))
    }

    func testAddingToAManyToManyUsesOneJoinRowPerPairInBothDirections() throws {
        let notas = try ManagedObjectModel(
            json: """
                {"name": "Notas", "entities": [
                  {"name": "Nota", "attributes": [{"name": "contenido", "type": "string"}],
                   "relationships": [{"name": "categorias", "destination": "Categoria", "inverse": "notas", "toMany": true}]},
                  {"name": "Categoria", "attributes": [{"name": "nombre", "type": "string"}],
                   "relationships": [{"name": "notas", "destination": "Nota", "inverse": "categorias", "toMany": true}]}
                ]}
                """)
        let store = try PersistentStore.create(at: scratch.file("n.sqlite"), model: notas)
        defer { store.close() }
        let nota = try XCTUnwrap(notas.entity(named: "Nota"))
        let categoria = try XCTUnwrap(notas.entity(named: "Categoria"))
        let n1 = try store.insertObject(entityName: "Nota")
        let n2 = try store.insertObject(entityName: "Nota")
        let c1 = try store.insertObject(entityName: "Categoria")
        let c2 = try store.insertObject(entityName: "Categoria")
        try n1.add([c1, c2], to: try XCTUnwrap(nota.relationship(named: "categorias")))
        try n1.add([c1], to: try XCTUnwrap(nota.relationship(named: "categorias")))  // again: no second row
        try c1.add([n2], to: try XCTUnwrap(categoria.relationship(named: "notas")))  // the inverse side
        try store.flush()  // join rows are buffered until the store writes its buffer
        XCTAssertEqual(try store.database.scalar("SELECT COUNT(*) FROM Z_1NOTAS")?.integer, 3)
        XCTAssertEqual(try c1.value(forKey: "notas").elements.count, 2)
        XCTAssertEqual(try n1.value(forKey: "categorias").elements.count, 2)
        XCTAssertEqual(
            try n2.value(forKey: "categorias").elements.compactMap { $0.object?.objectID.primaryKey },
            [c1.objectID.primaryKey])
    }

    func testAttributeMappingsAppliedInTurnEachUseTheirOwnResolution() throws {
        let zoo = try ManagedObjectModel(
            json: """
                {"name": "Zoo", "entities": [
                  {"name": "Keeper", "attributes": [{"name": "name", "type": "string"}]},
                  {"name": "Pet", "attributes": [{"name": "name", "type": "string"}, {"name": "nick", "type": "string"}]}
                ]}
                """)
        let mapping = try MappingModel(
            json:
                """
                {"entityMappings": [
                  {"name": "KeeperToKeeper", "sourceEntity": "Keeper", "destinationEntity": "Keeper", "attributeMappings": {"name": "$source.name"}},
                  {"name": "PetToPet", "sourceEntity": "Pet", "destinationEntity": "Pet", "attributeMappings": {"name": "$source.nick", "nick": "$source.name"}}
                ]}
                """)
        let manager = try MigrationManager(sourceModel: zoo, destinationModel: zoo, mappingModel: mapping)
        let keepers = try XCTUnwrap(mapping.entityMappings.first { $0.name == "KeeperToKeeper" })
        let pets = try XCTUnwrap(mapping.entityMappings.first { $0.name == "PetToPet" })
        let store = try PersistentStore.create(at: scratch.file("z.sqlite"), model: zoo)
        defer { store.close() }
        let keeper = try insert(store, "Keeper", ["name": "Ana"])
        let pet = try insert(store, "Pet", ["name": "Rex", "nick": "R"])
        for round in 0..<2 {
            let newKeeper = try store.insertObject(entityName: "Keeper")
            try manager.applyAttributeMappings(of: keepers, source: keeper, destination: newKeeper)
            XCTAssertEqual(try newKeeper.value(forKey: "name"), .string("Ana"), "round \(round)")
            let newPet = try store.insertObject(entityName: "Pet")
            try manager.applyAttributeMappings(of: pets, source: pet, destination: newPet)
            XCTAssertEqual(try newPet.value(forKey: "name"), .string("R"), "round \(round)")
            XCTAssertEqual(try newPet.value(forKey: "nick"), .string("Rex"), "round \(round)")
        }
        // The keepers' mapping into a pet: its own resolution against Pet, not the one made for Keeper.
        let crossed = try store.insertObject(entityName: "Pet")
        try manager.applyAttributeMappings(of: keepers, source: keeper, destination: crossed)
        XCTAssertEqual(try crossed.value(forKey: "name"), .string("Ana"))
        // And a destination without the attribute is still an error naming it.
        XCTAssertThrowsError(
            try manager.applyAttributeMappings(
                of: pets, source: pet, destination: try store.insertObject(entityName: "Keeper"))
        ) {
            XCTAssertTrue(String(describing: $0).contains("has no attribute 'nick'"), "\($0)")
        }
    }

    func testTheLayoutAnswersForAnotherModelsEntityByItsName() throws {
        let layout = StoreLayout(model: model)
        let twin = try ManagedObjectModel(json: Self.people)
        let own = try XCTUnwrap(model.entity(named: "Person"))
        let other = try XCTUnwrap(twin.entity(named: "Person"))
        XCTAssertFalse(own === other)
        XCTAssertEqual(layout.table(for: own), "ZPERSON")
        XCTAssertEqual(layout.table(for: other), "ZPERSON")
        XCTAssertEqual(layout.entityNumber(of: other), layout.entityNumber(of: own))
    }

    final class CountingPolicy: EntityMigrationPolicy {
        var relationshipCalls = 0
        override func createRelationships(
            forDestination dInstance: ManagedObject, in mapping: EntityMapping, manager: MigrationManager
        ) throws {
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
        let mapping = try MappingModel(
            json:
                """
                {"entityMappings": [{"name": "PersonToPerson", "sourceEntity": "Person", "destinationEntity": "Person",
                  "predicate": "TRUEPREDICATE", "policy": "Counting", "attributeMappings": {"name": "$source.name"}}]}
                """)
        let manager = try MigrationManager(sourceModel: model, destinationModel: model, mappingModel: mapping)
        let policy = CountingPolicy()
        manager.registerPolicy(named: "Counting") { policy }
        try manager.migrateStore(from: source, to: scratch.file("out.sqlite"))
        XCTAssertEqual(
            policy.relationshipCalls, 3, "an overridden createRelationships runs for every destination instance")
    }
}
