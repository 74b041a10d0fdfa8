import Foundation
import XCTest

@testable import CDMigrate

/// Reading a store's layout from its own schema when it differs from what the rules compute.
final class StoreLayoutTests: XCTestCase {
    var directory = ""
    var model: ManagedObjectModel!

    override func setUpWithError() throws {
        directory = NSTemporaryDirectory() + "cdm-layout-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        model = try ManagedObjectModel(json: storeTestModelJSON)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// A saved store with one row of each kind, then `alter` applied to its schema.
    func store(altering alter: String) throws -> String {
        let path = directory + "/layout-\(UUID().uuidString).sqlite"
        let store = try PersistentStore.create(at: path, model: model)
        let note = try store.insertObject(entityName: "Note")
        let image = try store.insertObject(entityName: "ImageAttachment")
        try image.setValue("caption", forKey: "caption")
        try image.setValue(.object(note), forKey: "note")
        let folder = try store.insertObject(entityName: "SmartFolder")
        try note.setValue(.object(folder), forKey: "folder")
        let item = try store.insertObject(entityName: "Item")
        let tag = try store.insertObject(entityName: "Tag")
        try item.add([tag], to: try XCTUnwrap(item.entity.relationship(named: "tags")))
        try store.save()
        store.close()
        let db = try SQLiteDatabase(path: path, mode: .readWrite)
        try db.exec(alter)
        db.close()
        return path
    }

    func open(_ path: String) throws -> PersistentStore {
        return try PersistentStore.open(at: path, model: model, readOnly: true, checkVersion: false)
    }

    func testOtherCollisionNumbersAndEntityColumnsAreFound() throws {
        let path = try store(
            altering: """
                ALTER TABLE ZATTACHMENT RENAME COLUMN ZCAPTION1 TO ZCAPTION2;
                ALTER TABLE ZNOTE RENAME COLUMN Z5_FOLDER TO Z9_FOLDER;
                ALTER TABLE Z_7TAGS RENAME TO Z_10ITEMS;
                """)
        let store = try open(path)
        defer { store.close() }
        let image = try XCTUnwrap(model.entity(named: "ImageAttachment"))
        XCTAssertEqual(store.layout.column(for: try XCTUnwrap(image.attribute(named: "caption"))), "ZCAPTION2")
        XCTAssertEqual(
            store.layout.column(for: try XCTUnwrap(model.entity(named: "FileAttachment")?.attribute(named: "caption"))),
            "ZCAPTION")
        XCTAssertEqual(
            try store.fetch(FetchRequest(entityName: "ImageAttachment")).first?.value(forKey: "caption"), "caption")
        let note = try XCTUnwrap(model.entity(named: "Note"))
        XCTAssertEqual(
            store.layout.storage(of: try XCTUnwrap(note.relationship(named: "folder"))),
            .foreignKey(column: "ZFOLDER", entityColumn: "Z9_FOLDER", orderColumn: nil))
        let item = try XCTUnwrap(try store.fetch(FetchRequest(entityName: "Item")).first)
        XCTAssertEqual(try item.value(forKey: "tags").elements.count, 1)
        XCTAssertEqual(
            try store.fetch(FetchRequest(entityName: "Note")).first?.value(forKeyPath: "folder.query"), .null)
        XCTAssertEqual(
            try store.fetch(FetchRequest(entityName: "Note")).first?.value(forKey: "folder").object?.entity.name,
            "SmartFolder")
    }

    func testAMissingColumnNamesEntityPropertyAndTable() throws {
        let path = try store(
            altering:
                "ALTER TABLE ZATTACHMENT DROP COLUMN ZWIDTH; DROP INDEX ZNOTE_Z8RELATED_INDEX; ALTER TABLE ZNOTE DROP COLUMN Z8RELATED"
        )
        XCTAssertThrowsError(try open(path)) { error in
            let e = error as? MigrationError
            XCTAssertEqual(e?.code, .incompatibleVersionHash)
            let text = e?.description ?? ""
            XCTAssertTrue(text.contains("attribute 'ImageAttachment.width'") && text.contains("'ZATTACHMENT'"), text)
            XCTAssertTrue(text.contains("'Note.related'") && text.contains("Z8RELATED"), text)
        }
    }

    func testAMissingJoinTableOrEntityTableIsAnError() throws {
        let path = try store(altering: "DROP TABLE Z_7TAGS; DROP TABLE ZCOVER")
        XCTAssertThrowsError(try open(path)) { error in
            let text = (error as? MigrationError)?.description ?? ""
            XCTAssertTrue(text.contains("'Item.tags'") && text.contains("Z_7TAGS"), text)
            XCTAssertTrue(text.contains("'Cover'") && text.contains("'ZCOVER'"), text)
        }
    }

    func testAnotherHierarchyIsAnError() throws {
        let path = try store(altering: "UPDATE Z_PRIMARYKEY SET Z_SUPER = 0 WHERE Z_NAME = 'SmartFolder'")
        XCTAssertThrowsError(try open(path)) { error in
            let text = (error as? MigrationError)?.description ?? ""
            XCTAssertTrue(text.contains("'SmartFolder' has parent 'Folder' in the model but none"), text)
        }
    }

    func testStoreNumbersWinOverTheModels() throws {
        // Swap the numbers of Cover (4) and Page (9) in the store: rows are read by the store's numbers.
        let path = try store(
            altering: """
                UPDATE Z_PRIMARYKEY SET Z_ENT = 99 WHERE Z_ENT = 4; UPDATE Z_PRIMARYKEY SET Z_ENT = 4 WHERE Z_ENT = 9;
                UPDATE Z_PRIMARYKEY SET Z_ENT = 9 WHERE Z_ENT = 99;
                INSERT INTO ZPAGE (Z_PK, Z_ENT, Z_OPT, ZNUMBER) VALUES (1, 4, 1, 12);
                """)
        let store = try open(path)
        defer { store.close() }
        let page = try XCTUnwrap(model.entity(named: "Page"))
        XCTAssertEqual(store.layout.entityNumber(of: page), 4)
        XCTAssertTrue(store.layout.entity(forNumber: 9) === model.entity(named: "Cover"))
        XCTAssertEqual(try store.fetch(FetchRequest(entityName: "Page")).first?.value(forKey: "number"), 12)
    }

    func testRowsOfEntitiesTheModelLacksAreLeftOut() throws {
        let path = try store(
            altering: """
                INSERT INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (50, 'Poster', 8, 0);
                INSERT INTO ZNOTE (Z_PK, Z_ENT, Z_OPT, ZTITLE) VALUES (9, 50, 1, 'poster');
                """)
        let store = try open(path)
        defer { store.close() }
        let note = try XCTUnwrap(model.entity(named: "Note"))
        XCTAssertEqual(store.layout.entityRestriction(for: note, includingSubentities: true), "Z_ENT = 8")
        XCTAssertEqual(try store.fetch(FetchRequest(entityName: "Note")).map { $0.objectID.primaryKey }, [1])
        XCTAssertEqual(try store.count(FetchRequest(entityName: "Note")), 1)
    }
}
