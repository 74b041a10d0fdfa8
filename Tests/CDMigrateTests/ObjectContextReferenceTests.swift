import Foundation
import XCTest

@testable import CDMigrate

/// Instances reach their store through the store's `ObjectContextReference`: while the store
/// lives they are its own (and no other store's), and an instance that outlives its store finds
/// none — its fault cannot fire, its relationships cannot be read — as with a weak reference.
final class ObjectContextReferenceTests: XCTestCase {
    var directory = ""
    var model: ManagedObjectModel!

    override func setUpWithError() throws {
        directory = NSTemporaryDirectory() + "cdm-reference-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        model = try ManagedObjectModel(json: storeTestModelJSON)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: directory)
    }

    func testInstancesBelongToTheirStoreAndNoOther() throws {
        let store = try PersistentStore.create(at: directory + "/a.sqlite", model: model)
        let other = try PersistentStore.create(at: directory + "/b.sqlite", model: model)
        let item = try store.insertObject(entityName: "Item")
        let tag = try store.insertObject(entityName: "Tag")
        let foreign = try other.insertObject(entityName: "Tag")
        XCTAssertTrue(item.context === store)
        XCTAssertTrue(foreign.context === other)
        try item.add([tag], to: try XCTUnwrap(item.entity.relationshipsByName["tags"]))
        XCTAssertThrowsError(try item.add([foreign], to: try XCTUnwrap(item.entity.relationshipsByName["tags"]))) {
            XCTAssertTrue("\($0)".contains("does not belong to the store"), "\($0)")
        }
        // The same row read again is the same instance; a row of the other store with the same key is not.
        try store.save()
        let again = try XCTUnwrap(try store.object(with: item.objectID))
        XCTAssertTrue(again.isSameInstance(as: item))
        let otherItem = try other.insertObject(entityName: "Item")
        XCTAssertEqual(otherItem.objectID.primaryKey, item.objectID.primaryKey)
        XCTAssertFalse(otherItem.isSameInstance(as: item))
        // Changing a buffered instance of the store, then one already written: both reach the file.
        try item.setValue(.string("written"), forKey: "str")
        try store.save()
        try again.setValue(.string("changed"), forKey: "str")
        try store.save()
        let read = try store.fetch(FetchRequest(entityName: "Item"))
        XCTAssertEqual(
            read.first?.attributeValues[try XCTUnwrap(item.entity.attributesByName["str"]).index], .string("changed"))
    }

    /// `add` checks what it is given as `setValue` does: instances of the relationship's
    /// destination entity (or a sub-entity) only, in a store or free-standing.
    func testAddRefusesInstancesOfAnotherEntity() throws {
        let store = try PersistentStore.create(at: directory + "/add.sqlite", model: model)
        let item = try store.insertObject(entityName: "Item")
        let note = try store.insertObject(entityName: "Note")
        let tags = try XCTUnwrap(item.entity.relationshipsByName["tags"])
        XCTAssertThrowsError(try item.add([note], to: tags)) {
            XCTAssertTrue("\($0)".contains("relationship 'Item.tags' takes 'Tag' instances, not 'Note'"), "\($0)")
        }
        let free = ManagedObject(entity: item.entity)
        XCTAssertThrowsError(try free.add([ManagedObject(entity: note.entity)], to: tags))
        let freeTag = ManagedObject(entity: try XCTUnwrap(model.entity(named: "Tag")))
        try free.add([freeTag], to: tags)
        XCTAssertEqual(try free.value(for: tags).elements.count, 1)
        // Sub-entities are kinds of their parent.
        let attachments = try XCTUnwrap(note.entity.relationshipsByName["attachments"])
        try note.add([try store.insertObject(entityName: "ImageAttachment")], to: attachments)
        XCTAssertThrowsError(try note.add([try store.insertObject(entityName: "Tag")], to: attachments))
    }

    func testAnInstanceThatOutlivesItsStoreFindsNone() throws {
        let path = directory + "/gone.sqlite"
        var fault: ManagedObject?
        var written: ManagedObject?
        do {
            let store = try PersistentStore.create(at: path, model: model)
            let item = try store.insertObject(entityName: "Item")
            try item.setValue(.string("kept"), forKey: "str")
            try store.save()
            written = item
            fault = store.fault(entity: item.entity, primaryKey: item.objectID.primaryKey)
            XCTAssertNotNil(fault?.context)
        }
        // The store has gone away: its instances hold no store.
        let orphan = try XCTUnwrap(fault)
        XCTAssertNil(orphan.context)
        XCTAssertThrowsError(try orphan.value(forKey: "str")) {
            XCTAssertTrue("\($0)".contains("belongs to a store that was closed"), "\($0)")
        }
        let item = try XCTUnwrap(written)
        XCTAssertNil(item.context)
        XCTAssertEqual(try item.value(forKey: "str"), .string("kept"))  // values live in the instance
        XCTAssertThrowsError(try item.value(forKey: "tags")) {
            XCTAssertTrue("\($0)".contains("its store was released"), "\($0)")
        }
        // Free-standing instances have no store at all, and keep their relationships themselves.
        let free = ManagedObject(entity: item.entity)
        XCTAssertNil(free.context)
        XCTAssertEqual(try free.value(forKey: "tags"), .collection([]))
    }
}
