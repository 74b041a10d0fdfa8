import Foundation
import XCTest

@testable import CDMigrate

/// A store looks up what inserting an entity needs once per entity (`EntityInsertSlot`): the keys
/// stay those of the entity's table whatever the order of inserts (sub-entities of one table
/// share its keys), keys reserved by SQL are skipped, each store keeps its own, and instances
/// start with the defaults without sharing later changes.
final class EntityInsertSlotTests: XCTestCase {
    var directory = ""

    override func setUpWithError() throws {
        directory = NSTemporaryDirectory() + "cdm-insert-slot-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: directory)
    }

    func testSubEntitiesOfOneTableShareItsKeysInAnyOrder() throws {
        let model = try ManagedObjectModel(json: storeTestModelJSON)
        let store = try PersistentStore.create(at: directory + "/s.sqlite", model: model)
        let image = try XCTUnwrap(model.entity(named: "ImageAttachment"))
        let file = try XCTUnwrap(model.entity(named: "FileAttachment"))
        let tag = try XCTUnwrap(model.entity(named: "Tag"))
        var keys: [String: [Int64]] = [:]
        for entity in [image, file, tag, image, tag, file, file, image] {
            keys[entity.name, default: []].append(try store.insertObject(entity: entity).objectID.primaryKey)
        }
        XCTAssertEqual(keys["ImageAttachment"], [1, 3, 6], "one key sequence for the Attachment table")
        XCTAssertEqual(keys["FileAttachment"], [2, 4, 5])
        XCTAssertEqual(keys["Tag"], [1, 2], "a table of its own")
        // Keys reserved by SQL writes are skipped by the next insert of any entity of the table.
        store.reservePrimaryKeys(for: file, upTo: 40)
        XCTAssertEqual(try store.insertObject(entity: image).objectID.primaryKey, 41)
        XCTAssertEqual(try store.insertObject(entity: tag).objectID.primaryKey, 3)
        // Every one found again by its entity and key, from the buffer and after saving.
        XCTAssertEqual(try store.object(entity: image, primaryKey: 41)?.entity.name, "ImageAttachment")
        XCTAssertNil(try store.object(entity: tag, primaryKey: 41))
        try store.save()
        XCTAssertEqual(try store.object(entity: file, primaryKey: 5)?.entity.name, "FileAttachment")
        XCTAssertEqual(store.lastAllocatedPrimaryKey(for: file), 41)
        XCTAssertTrue(store.entitiesWrittenByInstance.contains(ObjectIdentifier(image)))
        XCTAssertTrue(store.entitiesWrittenByInstance.contains(ObjectIdentifier(file)))
        XCTAssertFalse(
            store.entitiesWrittenByInstance.contains(ObjectIdentifier(try XCTUnwrap(model.entity(named: "Note")))))
    }

    func testTwoStoresOfOneModelKeepTheirOwnKeys() throws {
        let model = try ManagedObjectModel(json: storeTestModelJSON)
        let first = try PersistentStore.create(at: directory + "/a.sqlite", model: model)
        let second = try PersistentStore.create(at: directory + "/b.sqlite", model: model)
        let tag = try XCTUnwrap(model.entity(named: "Tag"))
        XCTAssertEqual(try first.insertObject(entity: tag).objectID.primaryKey, 1)
        XCTAssertEqual(try first.insertObject(entity: tag).objectID.primaryKey, 2)
        XCTAssertEqual(try second.insertObject(entity: tag).objectID.primaryKey, 1)
        try first.save()
        try second.save()
        first.close()
        second.close()
        // Reopened: keys go on from the table's largest.
        let reopened = try PersistentStore.open(at: directory + "/a.sqlite", model: model, readOnly: false)
        XCTAssertEqual(try reopened.insertObject(entity: tag).objectID.primaryKey, 3)
        reopened.close()
    }

    func testInstancesStartWithTheDefaultsAndDoNotShareChanges() throws {
        let model = try ManagedObjectModel(json: storeTestModelJSON)
        let store = try PersistentStore.create(at: directory + "/s.sqlite", model: model)
        let item = try XCTUnwrap(model.entity(named: "Item"))
        let number = try XCTUnwrap(item.attribute(named: "i64"))
        let a = try store.insertObject(entity: item)
        let b = try store.insertObject(entity: item)
        XCTAssertEqual(try a.value(for: number), .integer(7))
        try a.setValue(.integer(8), for: number)
        XCTAssertEqual(try a.value(for: number), .integer(8))
        XCTAssertEqual(try b.value(for: number), .integer(7), "another instance keeps the default")
        let c = try store.insertObject(entity: item)
        XCTAssertEqual(try c.value(for: number), .integer(7), "a later instance starts with the default")
    }
}
