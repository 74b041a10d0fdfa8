import Foundation
import XCTest

@testable import CDMigrate

/// `insertObject(entity:)` and `object(entity:primaryKey:)` take an entity already looked up (the
/// C API's hot calls): one of the store's model is used as it is; one of another model (a copy
/// with the same names) stands for the store's entity of that name, as the by-name calls answer.
final class StoreEntityLookupTests: XCTestCase {
    var directory = ""

    override func setUpWithError() throws {
        directory = NSTemporaryDirectory() + "cdm-entity-lookup-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: directory)
    }

    func testEntitiesOfTheStoresModelOrOfAnotherOneAnswerAsByName() throws {
        let model = try ManagedObjectModel(json: storeTestModelJSON)
        let copy = try ManagedObjectModel(json: storeTestModelJSON)
        let store = try PersistentStore.create(at: directory + "/s.sqlite", model: model)
        let own = try XCTUnwrap(model.entity(named: "Tag"))
        let foreign = try XCTUnwrap(copy.entity(named: "Tag"))
        XCTAssertTrue(store.layout.isOwnEntity(own))
        XCTAssertFalse(store.layout.isOwnEntity(foreign))
        let a = try store.insertObject(entity: own)
        let b = try store.insertObject(entity: foreign)
        XCTAssertTrue(a.entity === own)
        XCTAssertTrue(b.entity === own, "an entity of another model stands for the store's entity of that name")
        XCTAssertEqual(b.objectID.primaryKey, a.objectID.primaryKey + 1)
        XCTAssertThrowsError(try store.insertObject(entity: try XCTUnwrap(model.entity(named: "Attachment")))) {
            XCTAssertTrue("\($0)".contains("is abstract"), "\($0)")
        }
        // Buffered, then written: found by entity and key either way, and by ID the same.
        XCTAssertTrue(try store.object(entity: foreign, primaryKey: a.objectID.primaryKey) === a)
        try store.save()
        let found = try XCTUnwrap(try store.object(entity: foreign, primaryKey: b.objectID.primaryKey))
        XCTAssertTrue(found.isSameInstance(as: b))
        XCTAssertTrue(found.entity === own)
        XCTAssertNil(try store.object(entity: own, primaryKey: 999))
        // A sub-entity's row through its parent entity; not through an unrelated entity.
        let image = try store.insertObject(entityName: "ImageAttachment")
        try store.save()
        let attachment = try XCTUnwrap(copy.entity(named: "Attachment"))
        XCTAssertEqual(
            try store.object(entity: attachment, primaryKey: image.objectID.primaryKey)?.entity.name,
            "ImageAttachment")
        let entityOfNoStore = EntityDescription(name: "Nowhere")
        XCTAssertThrowsError(try store.insertObject(entity: entityOfNoStore))
    }
}
