import Foundation
import XCTest

@testable import CDMigrate

/// Models rebuilt from a store's schema when its model cache is empty.
final class StoreModelRecoveryTests: XCTestCase {
    var temporaryDirectory = ""

    override func setUpWithError() throws {
        temporaryDirectory = NSTemporaryDirectory() + "cdm-recovery-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: temporaryDirectory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: temporaryDirectory)
    }

    func copyFixture(_ relativePath: String) throws -> String {
        try copyFixtureStore(relativePath, into: temporaryDirectory)
    }

    func testNotesModelIsRecoveredAndReadsEveryRow() throws {
        let path = try copyFixture("apple-stores/macos-notes/NotesV7.storedata")
        let model = try ManagedObjectModel(ofStoreAt: path)
        XCTAssertTrue(model.isRecovered)
        XCTAssertFalse(model.recoveryNotes?.isEmpty ?? true)
        XCTAssertEqual(model.entities.count, 22)
        // Names and hierarchy as the hand-inferred JSON model has them.
        let json = try ManagedObjectModel(contentsOf: TestPaths.fixtures + "/json-models/notes-v7.json")
        XCTAssertEqual(Set(model.entities.map { $0.name }), Set(json.entities.map { $0.name }))
        for entity in json.entities {
            XCTAssertEqual(model.entity(named: entity.name)?.parent?.name, entity.parent?.name, entity.name)
        }
        // Columns go to the roots; to-ones are found by their entity column, or by an index and the destination's name.
        let account = try XCTUnwrap(model.entity(named: "Account"))
        XCTAssertEqual(account.attribute(named: "username")?.attributeType, .string)
        XCTAssertEqual(account.attribute(named: "port")?.attributeType, .integer64)
        XCTAssertEqual(account.attribute(named: "tlscertificate")?.attributeType, .binary)
        XCTAssertEqual(model.entity(named: "IMAPAccount")?.attribute(named: "port")?.entity?.name, "Account")
        XCTAssertEqual(account.relationship(named: "rootfolder")?.destinationEntityName, "Folder")
        XCTAssertEqual(account.relationship(named: "trashfolder")?.destinationEntityName, "TrashFolder")
        XCTAssertEqual(model.entity(named: "Note")?.attribute(named: "datecreated")?.attributeType, .date)
        XCTAssertEqual(model.entity(named: "Note")?.relationship(named: "body")?.destinationEntityName, "NoteBody")
        XCTAssertEqual(model.entity(named: "Folder")?.relationship(named: "parent")?.destinationEntityName, "Folder")
        XCTAssertEqual(
            model.entity(named: "OfflineAction")?.relationship(named: "folder1")?.destinationEntityName, "Folder")
        // An indexed integer column that names no entity stays an attribute.
        XCTAssertEqual(
            model.entity(named: "OfflineAction")?.attribute(named: "sequencenumber")?.attributeType, .integer64)

        let store = try PersistentStore.open(at: path, model: model, readOnly: true, checkVersion: false)
        defer { store.close() }
        XCTAssertTrue(store.warnings.isEmpty, "\(store.warnings)")
        let raw = try SQLiteDatabase(path: path, mode: .readOnly)
        defer { raw.close() }
        var total = 0
        for entity in model.entitiesInStoreOrder {
            let table = store.layout.table(for: entity)
            for includesSubentities in [true, false] {
                let numbers = store.layout.entityNumbers(of: entity, includingSubentities: includesSubentities).map(
                    String.init
                ).joined(separator: ",")
                let expected = try XCTUnwrap(
                    raw.scalar("SELECT COUNT(*) FROM \(table) WHERE Z_ENT IN (\(numbers))")?.integer)
                var request = FetchRequest(entityName: entity.name)
                request.includesSubentities = includesSubentities
                let objects = try store.fetch(request)
                XCTAssertEqual(Int64(objects.count), expected, "\(entity.name) subentities: \(includesSubentities)")
                for object in objects {
                    XCTAssertTrue(object.entity.isKind(of: entity))
                    for attribute in object.entity.attributes { _ = try object.value(forKey: attribute.name) }
                    for relationship in object.entity.relationships { _ = try object.value(for: relationship) }
                }
                if !includesSubentities { total += objects.count }
            }
        }
        let rows = try XCTUnwrap(
            raw.scalar(
                "SELECT (SELECT COUNT(*) FROM ZACCOUNT) + (SELECT COUNT(*) FROM ZATTACHMENT) + (SELECT COUNT(*) FROM ZFOLDER) + (SELECT COUNT(*) FROM ZNOTE) + (SELECT COUNT(*) FROM ZNOTEBODY) + (SELECT COUNT(*) FROM ZOFFLINEACTION)"
            )?.integer)
        XCTAssertEqual(Int64(total), rows)
        XCTAssertEqual(total, 2 + 7 + 3 + 3)
        // A to-one read through the recovered model reaches the right row.
        let notes = try store.fetch(FetchRequest(entityName: "Note"))
        for note in notes {
            guard let body = try note.value(for: try XCTUnwrap(note.entity.relationship(named: "body"))).object else {
                continue
            }
            XCTAssertEqual(body.entity.name, "NoteBody")
        }
    }

    func testAStoreWithACacheGivesItsCachedModel() throws {
        let path = try copyFixture("apple-stores/renames/Example_v1.1.0.sqlite")
        let model = try ManagedObjectModel(ofStoreAt: path)
        XCTAssertFalse(model.isRecovered)
        XCTAssertEqual(
            model.entity(named: "BasicEntity")?.attribute(named: "v1_1_0_name")?.renamingIdentifier, "v1_0_0_name")
        // Its schema alone gives the lower-cased names.
        let rebuilt = try ManagedObjectModel(schemaOfStoreAt: path)
        XCTAssertTrue(rebuilt.isRecovered)
        XCTAssertEqual(rebuilt.entity(named: "BasicEntity")?.ownAttributes.map { $0.name }, ["v1_1_0_name"])
        XCTAssertEqual(rebuilt.entity(named: "BasicEntity")?.ownAttributes.first?.attributeType, .string)
    }

    func testJoinTablesAndHiddenColumnsBecomeToManyRelationships() throws {
        let model = try ManagedObjectModel(
            json: """
                {"entities": [
                  {"name": "Tag", "attributes": [{"name": "label", "type": "string"}],
                   "relationships": [{"name": "posts", "destination": "Post", "inverse": "tags", "toMany": true}]},
                  {"name": "Post", "attributes": [{"name": "when", "type": "date"}, {"name": "score", "type": "double"}],
                   "relationships": [{"name": "tags", "destination": "Tag", "inverse": "posts", "toMany": true},
                                     {"name": "related", "destination": "Tag", "toMany": true, "ordered": true}]}
                ]}
                """)
        let path = temporaryDirectory + "/made.sqlite"
        let store = try PersistentStore.create(at: path, model: model)
        let post = try store.insertObject(entityName: "Post")
        let tag = try store.insertObject(entityName: "Tag")
        try tag.setValue(.string("swift"), forKey: "label")
        try post.setValue(.collection([.object(tag)]), forKey: "tags")
        try post.setValue(.collection([.object(tag)]), forKey: "related")
        try store.save()
        store.close()

        let recovered = try ManagedObjectModel(schemaOfStoreAt: path)
        XCTAssertTrue(recovered.isRecovered)
        let posts = try XCTUnwrap(recovered.entity(named: "Tag")?.relationship(named: "posts"))
        XCTAssertEqual(posts.destinationEntityName, "Post")
        XCTAssertTrue(posts.isManyToMany)
        XCTAssertEqual(posts.inverseName, "tags")
        let related = try XCTUnwrap(recovered.entity(named: "Post")?.relationship(named: "related"))
        XCTAssertEqual(related.destinationEntityName, "Tag")
        XCTAssertTrue(related.isToMany)
        XCTAssertTrue(related.isOrdered)
        XCTAssertNil(related.inverseName)
        XCTAssertEqual(recovered.entity(named: "Post")?.attribute(named: "when")?.attributeType, .date)
        XCTAssertEqual(recovered.entity(named: "Post")?.attribute(named: "score")?.attributeType, .double)
        // The rows read back with their links.
        let reopened = try PersistentStore.open(at: path, model: recovered, readOnly: true, checkVersion: false)
        defer { reopened.close() }
        let post2 = try XCTUnwrap(try reopened.fetch(FetchRequest(entityName: "Post")).first)
        let tags = try post2.value(for: try XCTUnwrap(post2.entity.relationship(named: "tags"))).elements
        XCTAssertEqual(tags.count, 1)
        XCTAssertEqual(try tags.first?.object?.value(forKey: "label"), .string("swift"))
        XCTAssertEqual(try post2.value(for: related).elements.count, 1)
    }

    func testEntitiesWithoutARootOrATableAreLeftOutAndNoted() throws {
        let path = temporaryDirectory + "/odd.sqlite"
        let database = try SQLiteDatabase(path: path, mode: .create)
        try database.exec(
            "CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER)")
        try database.exec(
            "INSERT INTO Z_PRIMARYKEY VALUES (1, 'Item', 0, 0), (2, 'Loop', 3, 0), (3, 'Back', 2, 0), (4, 'Lost', 0, 0), (5, 'Bad Name', 0, 0), (6, 'Special', 1, 0)"
        )
        try database.exec(
            "CREATE TABLE ZITEM (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZTITLE VARCHAR, ZPRICE DECIMAL, Z1OTHERS INTEGER, Z_FOK_1OTHERS INTEGER)"
        )
        database.close()
        let model = try ManagedObjectModel(schemaOfStoreAt: path)
        XCTAssertEqual(model.entities.map { $0.name }.sorted(), ["Item", "Special"])
        let notes = (model.recoveryNotes ?? []).joined(separator: "\n")
        XCTAssertTrue(
            notes.contains("'Loop'") && notes.contains("'Back'") && notes.contains("does not reach a root"), notes)
        XCTAssertTrue(notes.contains("'Lost'") && notes.contains("no table ZLOST"), notes)
        XCTAssertEqual(model.entity(named: "Item")?.attribute(named: "price")?.attributeType, .decimal)
        // Z1OTHERS: entity 1's to-many without inverse, onto the table's own entities, ordered by Z_FOK_1OTHERS.
        let others = try XCTUnwrap(model.entity(named: "Item")?.relationship(named: "others"))
        XCTAssertTrue(others.isToMany && others.isOrdered && others.inverseName == nil)
        XCTAssertEqual(model.entity(named: "Special")?.parent?.name, "Item")
    }

    func testAFileThatIsNotACoreDataStoreIsAnError() throws {
        let path = temporaryDirectory + "/plain.sqlite"
        let database = try SQLiteDatabase(path: path, mode: .create)
        try database.exec("CREATE TABLE things (a INTEGER)")
        database.close()
        XCTAssertThrowsError(try ManagedObjectModel(ofStoreAt: path)) { error in
            XCTAssertEqual((error as? MigrationError)?.code, .invalidModel)
            XCTAssertTrue("\(error)".contains("Z_PRIMARYKEY"), "\(error)")
        }
    }
}
