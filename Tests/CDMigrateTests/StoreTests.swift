import Foundation
import XCTest

@testable import CDMigrate

/// A model with every attribute type, inheritance and every kind of relationship.
/// Store numbering: Attachment 1, FileAttachment 2, ImageAttachment 3, Cover 4, Folder 5,
/// SmartFolder 6, Item 7, Note 8, Page 9, Tag 10.
let storeTestModelJSON = """
    {"name": "StoreTest", "versionIdentifier": "1", "entities": [
      {"name": "Item", "attributes": [
         {"name": "i16", "type": "integer16"}, {"name": "i32", "type": "integer32"}, {"name": "i64", "type": "integer64", "default": 7},
         {"name": "dec", "type": "decimal"}, {"name": "dbl", "type": "double"}, {"name": "flt", "type": "float"},
         {"name": "str", "type": "string"}, {"name": "flag", "type": "boolean", "default": false}, {"name": "when", "type": "date"},
         {"name": "data", "type": "binary"}, {"name": "uid", "type": "uuid"}, {"name": "link", "type": "uri"},
         {"name": "blob", "type": "transformable"}, {"name": "scratch", "type": "string", "transient": true}],
       "relationships": [{"name": "tags", "destination": "Tag", "inverse": "items", "toMany": true}]},
      {"name": "Tag", "attributes": [{"name": "name", "type": "string"}],
       "relationships": [{"name": "items", "destination": "Item", "inverse": "tags", "toMany": true}]},
      {"name": "Attachment", "abstract": true, "attributes": [{"name": "title", "type": "string"}],
       "relationships": [{"name": "note", "destination": "Note", "inverse": "attachments"}]},
      {"name": "ImageAttachment", "parent": "Attachment", "attributes": [{"name": "width", "type": "integer32"}, {"name": "caption", "type": "string"}]},
      {"name": "FileAttachment", "parent": "Attachment", "attributes": [{"name": "caption", "type": "string"}, {"name": "size", "type": "integer64"}]},
      {"name": "Note", "attributes": [{"name": "title", "type": "string"}],
       "relationships": [
         {"name": "attachments", "destination": "Attachment", "inverse": "note", "toMany": true},
         {"name": "pages", "destination": "Page", "inverse": "note", "toMany": true, "ordered": true},
         {"name": "cover", "destination": "Cover", "inverse": "note"},
         {"name": "folder", "destination": "Folder", "inverse": "notes"},
         {"name": "related", "destination": "Note", "toMany": true}]},
      {"name": "Page", "attributes": [{"name": "number", "type": "integer16"}],
       "relationships": [{"name": "note", "destination": "Note", "inverse": "pages"}]},
      {"name": "Cover", "attributes": [{"name": "color", "type": "string"}],
       "relationships": [{"name": "note", "destination": "Note", "inverse": "cover"}]},
      {"name": "Folder", "attributes": [{"name": "name", "type": "string"}],
       "relationships": [{"name": "notes", "destination": "Note", "inverse": "folder", "toMany": true}]},
      {"name": "SmartFolder", "parent": "Folder", "attributes": [{"name": "query", "type": "string"}]}
    ]}
    """

final class StoreTests: XCTestCase {
    var directory = ""
    var model: ManagedObjectModel!

    override func setUpWithError() throws {
        directory = NSTemporaryDirectory() + "cdm-store-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        model = try ManagedObjectModel(json: storeTestModelJSON)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: directory)
    }

    func newStore(_ name: String = "test.sqlite", options: PersistentStore.CreateOptions = .init()) throws
        -> PersistentStore
    {
        return try PersistentStore.create(at: directory + "/" + name, model: model, options: options)
    }

    func reopen(_ store: PersistentStore, readOnly: Bool = true) throws -> PersistentStore {
        store.close()
        return try PersistentStore.open(at: store.path, model: model, readOnly: readOnly, checkVersion: true)
    }

    func schema(_ store: PersistentStore, _ name: String) throws -> String? {
        return try store.database.scalar("SELECT sql FROM sqlite_master WHERE name = ?", [.string(name)])?.text
    }

    func ids(_ value: Value) -> [Int64] { value.elements.compactMap { $0.object?.objectID.primaryKey } }

    // MARK: Schema

    func testSchemaFollowsCoreDataRules() throws {
        let store = try newStore()
        defer { store.close() }
        XCTAssertEqual(
            try schema(store, "ZITEM"),
            "CREATE TABLE ZITEM ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZFLAG INTEGER, ZI16 INTEGER, ZI32 INTEGER, ZI64 INTEGER, ZWHEN TIMESTAMP, ZDBL FLOAT, ZDEC DECIMAL, ZFLT FLOAT, ZLINK VARCHAR, ZSTR VARCHAR, ZBLOB BLOB, ZDATA BLOB, ZUID BLOB )"
        )
        // Columns by kind (integers with foreign keys, dates, floats, strings, blobs), then entity,
        // attributes before to-ones, names. Sub-entities share the root's table; the second
        // 'caption' (claimed after the first) is numbered.
        XCTAssertEqual(
            try schema(store, "ZATTACHMENT"),
            "CREATE TABLE ZATTACHMENT ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZNOTE INTEGER, ZSIZE INTEGER, ZWIDTH INTEGER, ZTITLE VARCHAR, ZCAPTION VARCHAR, ZCAPTION1 VARCHAR )"
        )
        XCTAssertEqual(
            try schema(store, "ZATTACHMENT_Z_ENT_INDEX"), "CREATE INDEX ZATTACHMENT_Z_ENT_INDEX ON ZATTACHMENT (Z_ENT)")
        XCTAssertEqual(
            try schema(store, "ZATTACHMENT_ZNOTE_INDEX"), "CREATE INDEX ZATTACHMENT_ZNOTE_INDEX ON ZATTACHMENT (ZNOTE)")
        XCTAssertNil(try schema(store, "ZNOTE_Z_ENT_INDEX"))
        // To-one into a hierarchy → Z<root number>_FOLDER; one-to-one → a column on both tables;
        // to-many without inverse → hidden Z<source number><NAME> on the destination's table.
        XCTAssertEqual(
            try schema(store, "ZNOTE"),
            "CREATE TABLE ZNOTE ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZCOVER INTEGER, ZFOLDER INTEGER, Z5_FOLDER INTEGER, Z8RELATED INTEGER, ZTITLE VARCHAR )"
        )
        XCTAssertEqual(
            try schema(store, "ZCOVER"),
            "CREATE TABLE ZCOVER ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZNOTE INTEGER, ZCOLOR VARCHAR )"
        )
        XCTAssertEqual(
            try schema(store, "ZNOTE_Z8RELATED_INDEX"), "CREATE INDEX ZNOTE_Z8RELATED_INDEX ON ZNOTE (Z8RELATED)")
        // Ordered one-to-many → Z_FOK_<inverse name> on the many side.
        XCTAssertEqual(
            try schema(store, "ZPAGE"),
            "CREATE TABLE ZPAGE ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZNUMBER INTEGER, ZNOTE INTEGER, Z_FOK_NOTE INTEGER )"
        )
        // Many-to-many → join table named by the side whose name sorts last (Item.tags, entity 7).
        XCTAssertEqual(
            try schema(store, "Z_7TAGS"),
            "CREATE TABLE Z_7TAGS ( Z_7ITEMS INTEGER, Z_10TAGS INTEGER, PRIMARY KEY (Z_7ITEMS, Z_10TAGS) )")
        XCTAssertEqual(
            try schema(store, "Z_7TAGS_Z_10TAGS_INDEX"),
            "CREATE INDEX Z_7TAGS_Z_10TAGS_INDEX ON Z_7TAGS (Z_10TAGS, Z_7ITEMS)")
        XCTAssertEqual(
            try schema(store, "Z_PRIMARYKEY"),
            "CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER)")
        XCTAssertEqual(
            try schema(store, "Z_METADATA"),
            "CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB)")
        XCTAssertEqual(try schema(store, "Z_MODELCACHE"), "CREATE TABLE Z_MODELCACHE (Z_CONTENT BLOB)")

        let tags = try XCTUnwrap(model.entity(named: "Tag")?.relationship(named: "items"))
        XCTAssertEqual(
            store.layout.storage(of: tags),
            .joinTable(
                table: "Z_7TAGS", ownColumn: "Z_10TAGS", otherColumn: "Z_7ITEMS", orderColumn: nil,
                inverseOrderColumn: nil))
        let note = try XCTUnwrap(model.entity(named: "Note"))
        XCTAssertEqual(
            store.layout.storage(of: try XCTUnwrap(note.relationship(named: "pages"))),
            .inverseForeignKey(table: "ZPAGE", column: "ZNOTE", entityColumn: nil, orderColumn: "Z_FOK_NOTE"))
        XCTAssertEqual(
            store.layout.storage(of: try XCTUnwrap(note.relationship(named: "related"))),
            .hiddenColumn(table: "ZNOTE", column: "Z8RELATED", orderColumn: nil))
        let item = try XCTUnwrap(model.entity(named: "Item"))
        XCTAssertNil(store.layout.column(for: try XCTUnwrap(item.attribute(named: "scratch"))))
        XCTAssertNil(store.layout.sqlColumn(forKeyPath: ["scratch"], of: item))
        XCTAssertEqual(store.layout.sqlColumn(forKeyPath: ["when"], of: item)?.sql, "ZWHEN")
        XCTAssertEqual(store.layout.sqlColumn(forKeyPath: ["when"], of: item)?.type, .date)
        XCTAssertEqual(
            store.layout.entityRestriction(
                for: try XCTUnwrap(model.entity(named: "Attachment")), includingSubentities: true), nil)
        XCTAssertEqual(
            store.layout.entityRestriction(
                for: try XCTUnwrap(model.entity(named: "Folder")), includingSubentities: false), "Z_ENT = 5")
        // A store created by the rules reads back with the same layout.
        let reread = try reopen(store)
        defer { reread.close() }
        for entity in model.entities {
            for relationship in entity.ownRelationships {
                XCTAssertEqual(
                    reread.layout.storage(of: relationship), store.layout.storage(of: relationship),
                    "\(entity.name).\(relationship.name)")
            }
            for attribute in entity.ownAttributes {
                XCTAssertEqual(reread.layout.column(for: attribute), store.layout.column(for: attribute))
            }
        }
    }

    func testBookkeepingRowsAfterSave() throws {
        var options = PersistentStore.CreateOptions()
        options.storeUUID = "11111111-2222-3333-4444-555555555555"
        let store = try newStore(options: options)
        defer { store.close() }
        for _ in 0..<3 { _ = try store.insertObject(entityName: "ImageAttachment") }
        _ = try store.insertObject(entityName: "FileAttachment")
        _ = try store.insertObject(entityName: "Note")
        try store.save()
        let rows = try store.database.rows("SELECT Z_ENT, Z_NAME, Z_SUPER, Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_ENT")
        XCTAssertEqual(rows.count, 10)
        XCTAssertEqual(rows[0], [.integer(1), .text("Attachment"), .integer(0), .integer(4)])
        XCTAssertEqual(rows[2], [.integer(3), .text("ImageAttachment"), .integer(1), .integer(0)])
        XCTAssertEqual(rows[5], [.integer(6), .text("SmartFolder"), .integer(5), .integer(0)])
        XCTAssertEqual(rows[7], [.integer(8), .text("Note"), .integer(0), .integer(1)])
        let metadata = try store.database.rows("SELECT Z_VERSION, Z_UUID, Z_PLIST FROM Z_METADATA")
        XCTAssertEqual(metadata.count, 1)
        XCTAssertEqual(metadata.first?[0], .integer(1))
        XCTAssertEqual(metadata.first?[1], .text("11111111-2222-3333-4444-555555555555"))
        XCTAssertEqual(metadata.first?[2].bytes ?? [], store.metadata.plistBytes())
        // Primary keys continue from Z_MAX after reopening.
        let again = try reopen(store, readOnly: false)
        defer { again.close() }
        XCTAssertEqual(again.storeIdentifier, "11111111-2222-3333-4444-555555555555")
        XCTAssertEqual(try again.insertObject(entityName: "FileAttachment").objectID.primaryKey, 5)
        XCTAssertEqual(try again.insertObject(entityName: "Cover").objectID.primaryKey, 1)
        try again.save()
        XCTAssertEqual(try again.database.scalar("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = 1")?.integer, 5)
        XCTAssertEqual(try again.database.scalar("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = 4")?.integer, 1)
    }

    func testMetadataRoundTripAndVersionCheck() throws {
        let store = try newStore()
        try store.save()
        let uuid = store.storeIdentifier
        store.close()
        let opened = try PersistentStore.open(at: store.path, model: model, readOnly: true, checkVersion: true)
        XCTAssertEqual(opened.metadata.storeUUID, uuid)
        XCTAssertEqual(opened.metadata.versionHashes, model.entityVersionHashes)
        XCTAssertEqual(opened.metadata.versionIdentifiers, ["1"])
        XCTAssertTrue(opened.warnings.isEmpty, "\(opened.warnings)")
        opened.close()
        // Another version of the model: refused, naming the entity.
        let changed = try ManagedObjectModel(
            json: storeTestModelJSON.replacingOccurrences(
                of: "{\"name\": \"color\", \"type\": \"string\"}",
                with: "{\"name\": \"color\", \"type\": \"integer16\"}"
            )
            .replacingOccurrences(of: "\"versionIdentifier\": \"1\"", with: "\"versionIdentifier\": \"2\""))
        XCTAssertThrowsError(try PersistentStore.open(at: store.path, model: changed, readOnly: true)) { error in
            let e = error as? MigrationError
            XCTAssertEqual(e?.code, .incompatibleVersionHash)
            XCTAssertTrue(e?.message.contains("Cover: store ") ?? false, e?.message ?? "")
            XCTAssertTrue(e?.message.contains("'1'") ?? false && e?.message.contains("'2'") ?? false, e?.message ?? "")
        }
        // Unchecked, the same store opens.
        let unchecked = try PersistentStore.open(at: store.path, model: changed, readOnly: true, checkVersion: false)
        unchecked.close()
        // An empty Z_PLIST opens with a warning.
        let writer = try SQLiteDatabase(path: store.path, mode: .readWrite)
        try writer.exec("UPDATE Z_METADATA SET Z_PLIST = NULL")
        writer.close()
        let empty = try PersistentStore.open(at: store.path, model: model)
        defer { empty.close() }
        XCTAssertTrue(empty.metadata.isEmpty)
        XCTAssertTrue(empty.warnings.contains { $0.contains("no version metadata") }, "\(empty.warnings)")
    }

    // MARK: Values

    func testEveryAttributeTypeRoundTrips() throws {
        let store = try newStore()
        let item = try store.insertObject(entityName: "Item")
        XCTAssertEqual(try item.value(forKey: "i64"), .integer(7))  // default value
        XCTAssertEqual(try item.value(forKey: "flag"), .bool(false))
        let uuid: [UInt8] = Array(0..<16)
        let values: [(String, Value)] = [
            ("i16", .integer(-32768)), ("i32", .integer(2_000_000_000)), ("i64", .integer(Int64.max)),
            ("dec", .decimal("12345.678")), ("dbl", .double(3.141592653589793)), ("flt", .double(1.5)),
            ("str", .string("héllo \"world\"\n")), ("flag", .bool(true)), ("when", .date(526913713.695477)),
            ("data", .binary([0, 1, 2, 255])), ("uid", .uuid(uuid)), ("link", .uri("x-coredata://A/B/p1")),
            ("blob", .binary([])), ("scratch", .string("not stored")),
        ]
        for (key, value) in values { try item.setValue(value, forKey: key) }
        let empty = try store.insertObject(entityName: "Item")
        try empty.setValue(nil, forKey: "i64")
        try empty.setValue("", forKey: "str")
        try store.save()
        let reopened = try reopen(store)
        defer { reopened.close() }
        let items = try reopened.fetch(FetchRequest(entityName: "Item"))
        XCTAssertEqual(items.count, 2)
        for (key, value) in values where key != "scratch" {
            XCTAssertEqual(try items[0].value(forKey: key), value, key)
        }
        XCTAssertEqual(try items[0].value(forKey: "scratch"), .null)  // transient: not stored
        // Stored as Core Data stores them.
        XCTAssertEqual(
            try reopened.database.scalar(
                "SELECT typeof(ZWHEN) || typeof(ZFLAG) || typeof(ZUID) || typeof(ZDEC) FROM ZITEM WHERE Z_PK = 1")?
                .text, "realintegerblobreal")
        XCTAssertEqual(try reopened.database.scalar("SELECT length(ZUID) FROM ZITEM WHERE Z_PK = 1")?.integer, 16)
        XCTAssertEqual(
            try reopened.database.scalar("SELECT Z_ENT || '/' || Z_OPT FROM ZITEM WHERE Z_PK = 1")?.text, "7/1")
        XCTAssertEqual(try items[1].value(forKey: "i64"), .null)
        XCTAssertEqual(try items[1].value(forKey: "str"), .string(""))
        XCTAssertEqual(try items[1].value(forKey: "data"), .null)
        XCTAssertEqual(try reopened.database.scalar("SELECT typeof(ZBLOB) FROM ZITEM WHERE Z_PK = 1")?.text, "blob")
    }

    func testChangesAfterFlushBecomeUpdates() throws {
        let store = try newStore()
        defer { store.close() }
        let note = try store.insertObject(entityName: "Note")
        try note.setValue("draft", forKey: "title")
        try store.flush()
        XCTAssertEqual(try store.database.scalar("SELECT ZTITLE FROM ZNOTE WHERE Z_PK = 1")?.text, "draft")
        try note.setValue("final", forKey: "title")
        XCTAssertEqual(try store.database.scalar("SELECT ZTITLE FROM ZNOTE WHERE Z_PK = 1")?.text, "final")
        // Reads see buffered inserts.
        let other = try store.insertObject(entityName: "Note")
        try other.setValue("buffered", forKey: "title")
        XCTAssertEqual(try store.count(FetchRequest(entityName: "Note")), 2)
        XCTAssertEqual(try store.object(with: other.objectID)?.value(forKey: "title"), "buffered")
        XCTAssertNil(
            try store.object(with: ObjectID(storeIdentifier: store.storeIdentifier, entityName: "Note", primaryKey: 99))
        )
        XCTAssertNil(
            try store.object(with: ObjectID(storeIdentifier: store.storeIdentifier, entityName: "Cover", primaryKey: 1))
        )
    }

    // MARK: Relationships

    func testOneToManyAndInheritance() throws {
        let store = try newStore()
        let note = try store.insertObject(entityName: "Note")
        let image = try store.insertObject(entityName: "ImageAttachment")
        try image.setValue("picture", forKey: "caption")
        try image.setValue(640, forKey: "width")
        let file = try store.insertObject(entityName: "FileAttachment")
        try file.setValue("report.pdf", forKey: "caption")
        // Set the to-one side of one, add to the to-many side for the other (both still buffered).
        try image.setValue(.object(note), forKey: "note")
        try note.add([file], to: try XCTUnwrap(note.entity.relationship(named: "attachments")))
        XCTAssertEqual(ids(try note.value(forKey: "attachments")), [1, 2])
        XCTAssertEqual(try file.value(forKey: "note").object?.objectID, note.objectID)
        try store.save()
        let reopened = try reopen(store, readOnly: false)
        defer { reopened.close() }
        let attachments = try reopened.fetch(FetchRequest(entityName: "Attachment"))
        XCTAssertEqual(attachments.map { $0.entity.name }, ["ImageAttachment", "FileAttachment"])
        XCTAssertEqual(try attachments[0].value(forKey: "caption"), "picture")
        XCTAssertEqual(try attachments[0].value(forKey: "width"), 640)
        XCTAssertEqual(try attachments[1].value(forKey: "caption"), "report.pdf")
        XCTAssertEqual(
            try reopened.database.scalar("SELECT ZCAPTION1 FROM ZATTACHMENT WHERE Z_PK = 1")?.text, "picture")
        var request = FetchRequest(entityName: "ImageAttachment")
        XCTAssertEqual(try reopened.count(request), 1)
        request.entityName = "FileAttachment"
        XCTAssertEqual(try reopened.fetch(request).first?.value(forKey: "caption"), "report.pdf")
        let reNote = try XCTUnwrap(try reopened.fetch(FetchRequest(entityName: "Note")).first)
        XCTAssertEqual(ids(try reNote.value(forKey: "attachments")), [1, 2])
        // Moving an attachment to another note updates both sides; removing clears the to-one.
        let second = try reopened.insertObject(entityName: "Note")
        try attachments[0].setValue(.object(second), forKey: "note")
        XCTAssertEqual(ids(try reNote.value(forKey: "attachments")), [2])
        XCTAssertEqual(ids(try second.value(forKey: "attachments")), [1])
        try reNote.remove([attachments[1]], from: try XCTUnwrap(reNote.entity.relationship(named: "attachments")))
        XCTAssertEqual(try attachments[1].value(forKey: "note"), .null)
        // Setting the to-many replaces its members.
        try second.setValue(.collection([.object(attachments[1])]), forKey: "attachments")
        XCTAssertEqual(ids(try second.value(forKey: "attachments")), [2])
        XCTAssertEqual(try attachments[0].value(forKey: "note"), .null)
    }

    func testToOneIntoAHierarchyWritesTheEntityColumn() throws {
        let store = try newStore()
        defer { store.close() }
        let smart = try store.insertObject(entityName: "SmartFolder")
        try smart.setValue("recent", forKey: "query")
        let plain = try store.insertObject(entityName: "Folder")
        let a = try store.insertObject(entityName: "Note")
        let b = try store.insertObject(entityName: "Note")
        try a.setValue(.object(smart), forKey: "folder")
        try plain.setValue(.collection([.object(b)]), forKey: "notes")
        try store.flush()
        XCTAssertEqual(
            try store.database.rows("SELECT ZFOLDER, Z5_FOLDER FROM ZNOTE ORDER BY Z_PK"),
            [[.integer(1), .integer(6)], [.integer(2), .integer(5)]])
        let folder = try XCTUnwrap(try a.value(forKey: "folder").object)
        XCTAssertEqual(folder.entity.name, "SmartFolder")
        XCTAssertEqual(try folder.value(forKey: "query"), "recent")
        XCTAssertEqual(ids(try smart.value(forKey: "notes")), [1])
        var request = FetchRequest(entityName: "Folder")
        request.includesSubentities = false
        XCTAssertEqual(try store.fetch(request).map { $0.objectID.primaryKey }, [2])
    }

    func testOneToOneKeepsBothTablesConsistent() throws {
        let store = try newStore()
        defer { store.close() }
        let n1 = try store.insertObject(entityName: "Note")
        let n2 = try store.insertObject(entityName: "Note")
        let red = try store.insertObject(entityName: "Cover")
        let blue = try store.insertObject(entityName: "Cover")
        try n1.setValue(.object(red), forKey: "cover")
        XCTAssertEqual(try red.value(forKey: "note").object?.objectID, n1.objectID)
        XCTAssertEqual(try store.database.rows("SELECT ZCOVER FROM ZNOTE ORDER BY Z_PK"), [[.integer(1)], [.null]])
        XCTAssertEqual(try store.database.rows("SELECT ZNOTE FROM ZCOVER ORDER BY Z_PK"), [[.integer(1)], [.null]])
        // Set from the other side: red moves to n2, n1 loses its cover.
        try red.setValue(.object(n2), forKey: "note")
        XCTAssertEqual(try n1.value(forKey: "cover"), .null)
        XCTAssertEqual(try n2.value(forKey: "cover").object?.objectID, red.objectID)
        // n2 takes blue: red lets go of n2.
        try n2.setValue(.object(blue), forKey: "cover")
        XCTAssertEqual(try red.value(forKey: "note"), .null)
        XCTAssertEqual(try blue.value(forKey: "note").object?.objectID, n2.objectID)
        try n2.setValue(nil, forKey: "cover")
        XCTAssertEqual(try blue.value(forKey: "note"), .null)
        XCTAssertEqual(try store.database.scalar("SELECT COUNT(*) FROM ZNOTE WHERE ZCOVER IS NOT NULL")?.integer, 0)
        XCTAssertEqual(try store.database.scalar("SELECT COUNT(*) FROM ZCOVER WHERE ZNOTE IS NOT NULL")?.integer, 0)
    }

    func testOrderedToManyKeepsOrder() throws {
        let store = try newStore()
        let note = try store.insertObject(entityName: "Note")
        let pagesRelationship = try XCTUnwrap(note.entity.relationship(named: "pages"))
        var pages: [ManagedObject] = []
        for n in 1...4 {
            let page = try store.insertObject(entityName: "Page")
            try page.setValue(.integer(Int64(n)), forKey: "number")
            pages.append(page)
        }
        try note.setValue(.collection([pages[2], pages[0]].map { .object($0) }), forKey: "pages")
        try note.add([pages[3], pages[0]], to: pagesRelationship)  // pages[0] is already there: it keeps its place
        try pages[1].setValue(.object(note), forKey: "note")  // the to-one side appends too
        XCTAssertEqual(ids(try note.value(forKey: "pages")), [3, 1, 4, 2])
        try note.remove([pages[0]], from: pagesRelationship)
        XCTAssertEqual(ids(try note.value(forKey: "pages")), [3, 4, 2])
        try store.save()
        let reopened = try reopen(store)
        defer { reopened.close() }
        let reNote = try XCTUnwrap(try reopened.object(with: note.objectID))
        XCTAssertEqual(try reNote.value(forKeyPath: "pages.number"), .collection([3, 4, 2]))
        XCTAssertEqual(
            try reopened.database.rows("SELECT Z_PK, Z_FOK_NOTE FROM ZPAGE WHERE ZNOTE = 1 ORDER BY Z_FOK_NOTE"),
            [[.integer(3), .integer(1)], [.integer(4), .integer(3)], [.integer(2), .integer(4)]])
    }

    func testOrderedInsertAtAnIndexMovesAndRenumbers() throws {
        let store = try newStore()
        let note = try store.insertObject(entityName: "Note")
        let pagesRelationship = try XCTUnwrap(note.entity.relationship(named: "pages"))
        let pages = try (1...4).map { n -> ManagedObject in
            let page = try store.insertObject(entityName: "Page")
            try page.setValue(.integer(Int64(n)), forKey: "number")
            return page
        }
        try note.add([pages[0], pages[1]], to: pagesRelationship)
        try store.save()
        try note.insert([pages[2]], at: 0, into: pagesRelationship)
        XCTAssertEqual(try note.value(forKeyPath: "pages.number"), .collection([3, 1, 2]))
        try note.insert([pages[3], pages[0]], at: 1, into: pagesRelationship)  // pages[0] moves
        XCTAssertEqual(try note.value(forKeyPath: "pages.number"), .collection([3, 4, 1, 2]))
        try note.insert([pages[1]], at: 99, into: pagesRelationship)  // clamped to the end
        XCTAssertEqual(try note.value(forKeyPath: "pages.number"), .collection([3, 4, 1, 2]))
        XCTAssertThrowsError(
            try pages[0].entity.relationship(named: "note").map { try pages[0].insert([note], at: 0, into: $0) }
        ) { error in
            XCTAssertTrue("\(error)".contains("not an ordered to-many"))
        }
        let free = ManagedObject(entity: note.entity)
        let a = ManagedObject(entity: pages[0].entity)
        let b = ManagedObject(entity: pages[0].entity)
        try free.insert([a], at: 0, into: pagesRelationship)
        try free.insert([b], at: 0, into: pagesRelationship)
        XCTAssertEqual(
            try free.value(forKey: "pages").elements.compactMap { $0.object }.map { ObjectIdentifier($0) },
            [ObjectIdentifier(b), ObjectIdentifier(a)])
    }

    func testManyToManyFromBothSides() throws {
        let store = try newStore()
        let items = try (0..<3).map { _ in try store.insertObject(entityName: "Item") }
        let tags = try (0..<2).map { i -> ManagedObject in
            let tag = try store.insertObject(entityName: "Tag")
            try tag.setValue(.string("tag\(i)"), forKey: "name")
            return tag
        }
        let itemTags = try XCTUnwrap(items[0].entity.relationship(named: "tags"))
        let tagItems = try XCTUnwrap(tags[0].entity.relationship(named: "items"))
        try items[0].add(tags, to: itemTags)
        try items[0].add([tags[0]], to: itemTags)  // no duplicate
        try tags[1].add([items[1], items[2]], to: tagItems)
        XCTAssertEqual(ids(try items[0].value(forKey: "tags")), [1, 2])
        XCTAssertEqual(ids(try tags[0].value(forKey: "items")), [1])
        XCTAssertEqual(ids(try tags[1].value(forKey: "items")), [1, 2, 3])
        XCTAssertEqual(ids(try items[2].value(forKey: "tags")), [2])
        XCTAssertEqual(try store.database.scalar("SELECT COUNT(*) FROM Z_7TAGS")?.integer, 4)
        try tags[1].remove([items[0]], from: tagItems)
        XCTAssertEqual(ids(try items[0].value(forKey: "tags")), [1])
        try items[1].setValue(.collection([.object(tags[0])]), forKey: "tags")
        XCTAssertEqual(ids(try tags[1].value(forKey: "items")), [3])
        XCTAssertEqual(ids(try tags[0].value(forKey: "items")), [1, 2])
        try store.save()
        let reopened = try reopen(store)
        defer { reopened.close() }
        let reTag = try XCTUnwrap(
            try reopened.fetch(FetchRequest(entityName: "Tag", sqlWhere: "ZNAME = ?", arguments: ["tag0"])).first)
        XCTAssertEqual(ids(try reTag.value(forKey: "items")), [1, 2])
        XCTAssertEqual(
            try reopened.database.rows("SELECT Z_7ITEMS, Z_10TAGS FROM Z_7TAGS ORDER BY 1, 2"),
            [[.integer(1), .integer(1)], [.integer(2), .integer(1)], [.integer(3), .integer(2)]])
    }

    func testToManyWithoutInverseUsesTheHiddenColumn() throws {
        let store = try newStore()
        defer { store.close() }
        let notes = try (0..<3).map { _ in try store.insertObject(entityName: "Note") }
        let related = try XCTUnwrap(notes[0].entity.relationship(named: "related"))
        try notes[0].add([notes[1], notes[2]], to: related)
        XCTAssertEqual(ids(try notes[0].value(forKey: "related")), [2, 3])
        XCTAssertEqual(try notes[1].value(forKey: "related"), .collection([]))
        try notes[0].remove([notes[1]], from: related)
        XCTAssertEqual(
            try store.database.rows("SELECT Z8RELATED FROM ZNOTE ORDER BY Z_PK"), [[.null], [.null], [.integer(1)]])
    }

    // MARK: Fetching

    func testFetchConditionsFilterLimitOffsetEnumerateCount() throws {
        let store = try newStore()
        defer { store.close() }
        for n in 1...10 {
            let page = try store.insertObject(entityName: "Page")
            try page.setValue(.integer(Int64(n)), forKey: "number")
        }
        var request = FetchRequest(entityName: "Page", sqlWhere: "ZNUMBER > ?", arguments: [3])
        XCTAssertEqual(try store.count(request), 7)
        request.fetchLimit = 2
        request.fetchOffset = 1
        XCTAssertEqual(try store.fetch(request).map { $0.objectID.primaryKey }, [5, 6])
        XCTAssertEqual(try store.count(request), 2)
        request.filter = { (try $0.value(forKey: "number").integerValue ?? 0) % 2 == 0 }
        XCTAssertEqual(try store.fetch(request).map { $0.objectID.primaryKey }, [6, 8])
        XCTAssertEqual(try store.count(request), 2)
        request.fetchLimit = nil
        request.fetchOffset = 0
        XCTAssertEqual(try store.count(request), 4)
        request.sqlOrderBy = "ZNUMBER DESC"
        XCTAssertEqual(try store.fetch(request).map { $0.objectID.primaryKey }, [10, 8, 6, 4])
        var seen: [Int64] = []
        try store.enumerate(FetchRequest(entityName: "Page")) { page in
            seen.append(page.objectID.primaryKey)
            return seen.count < 3
        }
        XCTAssertEqual(seen, [1, 2, 3])
        // A nested query with the same SQL while the outer one is still stepping.
        var pairs = 0
        try store.enumerate(FetchRequest(entityName: "Page")) { _ in
            pairs += try store.fetch(FetchRequest(entityName: "Page")).count
            return true
        }
        XCTAssertEqual(pairs, 100)
        XCTAssertThrowsError(try store.fetch(FetchRequest(entityName: "Page", sqlWhere: "NOSUCHCOLUMN = 1"))) { error in
            XCTAssertEqual((error as? MigrationError)?.code, .sqlite)
            XCTAssertTrue((error as? MigrationError)?.message.contains("NOSUCHCOLUMN") ?? false)
        }
    }

    func testManyInsertsAreWrittenInBatches() throws {
        let store = try newStore(
            options: {
                var o = PersistentStore.CreateOptions()
                o.privateFile = true
                return o
            }())
        let folder = try store.insertObject(entityName: "Folder")
        for n in 0..<20_000 {
            let note = try store.insertObject(entityName: "Note")
            try note.setValue(.string("note \(n)"), forKey: "title")
            if n % 2 == 0 { try note.setValue(.object(folder), forKey: "folder") }
            if n == 2_500 {
                // Earlier rows are already in the table: the buffer stays small.
                XCTAssertEqual(
                    try store.database.scalar("SELECT (SELECT COUNT(*) FROM ZNOTE) + (SELECT COUNT(*) FROM ZFOLDER)")?
                        .integer, 2_000)
            }
        }
        try store.save()
        XCTAssertEqual(try store.database.scalar("PRAGMA journal_mode")?.text, "off")
        let reopened = try reopen(store)
        defer { reopened.close() }
        XCTAssertEqual(try reopened.count(FetchRequest(entityName: "Note")), 20_000)
        XCTAssertEqual(try reopened.count(FetchRequest(entityName: "Note", sqlWhere: "ZFOLDER = 1")), 10_000)
        XCTAssertEqual(
            try reopened.database.scalar("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'Note'")?.integer, 20_000)
        XCTAssertEqual(
            try reopened.object(with: ObjectID(storeIdentifier: "", entityName: "Note", primaryKey: 12_345))?.value(
                forKey: "title"), "note 12344")
        var streamed = 0
        try reopened.enumerate(FetchRequest(entityName: "Note")) { _ in
            streamed += 1
            return true
        }
        XCTAssertEqual(streamed, 20_000)
    }

    // MARK: Errors

    func testErrors() throws {
        let store = try newStore()
        func expect(_ code: MigrationError.Code, _ fragment: String, _ body: () throws -> Void, line: UInt = #line) {
            XCTAssertThrowsError(try body(), line: line) { error in
                let e = error as? MigrationError
                XCTAssertEqual(e?.code, code, line: line)
                XCTAssertTrue(
                    e?.message.contains(fragment) ?? false, "\(e?.message ?? "") lacks \(fragment)", line: line)
            }
        }
        expect(.invalidArgument, "'Nope'") { _ = try store.insertObject(entityName: "Nope") }
        expect(.invalidArgument, "abstract") { _ = try store.insertObject(entityName: "Attachment") }
        expect(.invalidArgument, "'Nope'") { _ = try store.fetch(FetchRequest(entityName: "Nope")) }
        let item = try store.insertObject(entityName: "Item")
        expect(.invalidArgument, "Item.i16") { try item.setValue("text", forKey: "i16") }
        expect(.invalidArgument, "Item.uid") { try item.setValue("not a uuid", forKey: "uid") }
        let note = try store.insertObject(entityName: "Note")
        expect(.invalidArgument, "'Folder'") { try note.setValue(.object(item), forKey: "folder") }
        // An instance of another store.
        let other = try newStore("other.sqlite")
        let foreign = try other.insertObject(entityName: "Folder")
        expect(.invalidArgument, "does not belong") { try note.setValue(.object(foreign), forKey: "folder") }
        other.close()
        expect(.invalidArgument, "another store") {
            _ = try store.object(with: ObjectID(storeIdentifier: "SOMEONE-ELSE", entityName: "Note", primaryKey: 1))
        }
        try store.save()
        store.close()
        expect(.invalidArgument, "closed") { _ = try store.insertObject(entityName: "Note") }
        expect(.io, "already exists") { _ = try PersistentStore.create(at: store.path, model: model) }
        expect(.io, "no such file") { _ = try PersistentStore.open(at: directory + "/missing.sqlite", model: model) }
        // Not an SQLite file at all.
        try Data("hello, not a database at all, but long enough to have a header".utf8).write(
            to: URL(fileURLWithPath: directory + "/text.sqlite"))
        expect(.sqlite, "text.sqlite") { _ = try PersistentStore.open(at: directory + "/text.sqlite", model: model) }
        // An SQLite file that is not a Core Data store.
        let plain = try SQLiteDatabase(path: directory + "/plain.sqlite", mode: .create)
        try plain.exec("CREATE TABLE t (x)")
        plain.close()
        expect(.incompatibleVersionHash, "not a Core Data SQLite store") {
            _ = try PersistentStore.open(at: directory + "/plain.sqlite", model: model)
        }
        // A model entity the store does not have.
        let bigger = try ManagedObjectModel(
            json: storeTestModelJSON.replacingOccurrences(
                of: "{\"name\": \"Tag\",", with: "{\"name\": \"Extra\"}, {\"name\": \"Tag\","))
        expect(.incompatibleVersionHash, "'Extra'") {
            _ = try PersistentStore.open(at: store.path, model: bigger, checkVersion: false)
        }
    }

    func testReadOnlyStoreRefusesWrites() throws {
        let store = try newStore()
        let note = try store.insertObject(entityName: "Note")
        let folder = try store.insertObject(entityName: "Folder")
        try note.setValue(.object(folder), forKey: "folder")
        try store.save()
        let readOnly = try reopen(store, readOnly: true)
        defer { readOnly.close() }
        XCTAssertTrue(readOnly.isReadOnly)
        let fetched = try XCTUnwrap(try readOnly.fetch(FetchRequest(entityName: "Note")).first)
        for attempt: () throws -> Void in [
            { _ = try readOnly.insertObject(entityName: "Note") },
            { try fetched.setValue("x", forKey: "title") },
            { try fetched.setValue(nil, forKey: "folder") },
            { try fetched.add([fetched], to: try XCTUnwrap(fetched.entity.relationship(named: "related"))) },
            { try readOnly.save() },
            { try readOnly.flush() },
        ] {
            XCTAssertThrowsError(try attempt()) { error in
                XCTAssertEqual((error as? MigrationError)?.code, .invalidArgument)
                XCTAssertTrue((error as? MigrationError)?.message.contains("read-only") ?? false)
            }
        }
        XCTAssertEqual(try readOnly.database.scalar("SELECT ZTITLE IS NULL AND ZFOLDER = 1 FROM ZNOTE")?.integer, 1)
    }

    func testUnsavedChangesAreRolledBackOnClose() throws {
        let store = try newStore()
        _ = try store.insertObject(entityName: "Note")
        try store.save()
        _ = try store.insertObject(entityName: "Note")
        try store.flush()
        let reopened = try reopen(store)
        defer { reopened.close() }
        XCTAssertEqual(try reopened.count(FetchRequest(entityName: "Note")), 1)
    }
}

extension StoreTests {
    func testReadOnlyOpenReadsThroughTheWAL() throws {
        let store = try newStore("wal.sqlite")
        defer { store.close() }
        XCTAssertEqual(try store.database.scalar("PRAGMA journal_mode")?.text, "wal")
        let note = try store.insertObject(entityName: "Note")
        try note.setValue("in the WAL", forKey: "title")
        try store.save()
        // While the writer is open, the committed rows are still in -wal: copy the three files together.
        XCTAssertTrue(FileManager.default.fileExists(atPath: store.path + "-wal"))
        let copyDirectory = directory + "/copy"
        try FileManager.default.createDirectory(atPath: copyDirectory, withIntermediateDirectories: true)
        for suffix in ["", "-wal", "-shm"] {
            try FileManager.default.copyItem(
                atPath: store.path + suffix, toPath: copyDirectory + "/wal.sqlite" + suffix)
        }
        let copy = try PersistentStore.open(
            at: copyDirectory + "/wal.sqlite", model: model, readOnly: true, checkVersion: false)
        defer { copy.close() }
        XCTAssertEqual(try copy.fetch(FetchRequest(entityName: "Note")).first?.value(forKey: "title"), "in the WAL")
        // The main file alone does not have them yet.
        let alone = directory + "/alone.sqlite"
        try FileManager.default.copyItem(atPath: store.path, toPath: alone)
        let aloneCount = try? PersistentStore.open(at: alone, model: model, readOnly: true, checkVersion: false).count(
            FetchRequest(entityName: "Note"))
        XCTAssertNotEqual(aloneCount, 1)
    }

    func testInstancesOutlivingTheirStoreFailCleanly() throws {
        var store: PersistentStore? = try newStore("released.sqlite")
        let note = try XCTUnwrap(store?.insertObject(entityName: "Note"))
        try store?.save()
        store?.close()
        XCTAssertThrowsError(try note.value(forKey: "folder")) { error in
            XCTAssertTrue((error as? MigrationError)?.message.contains("closed") ?? false, "\(error)")
        }
        store = nil
        XCTAssertNil(note.context)
        XCTAssertThrowsError(try note.value(forKey: "folder")) { error in
            XCTAssertEqual((error as? MigrationError)?.code, .invalidArgument)
            XCTAssertTrue((error as? MigrationError)?.message.contains("released") ?? false, "\(error)")
        }
        XCTAssertThrowsError(try note.setValue(nil, forKey: "cover"))
        XCTAssertEqual(try note.value(forKey: "title"), .null)  // attribute values stay readable
    }

    func testPredicatesTranslateOverTheLayout() throws {
        let store = try newStore()
        defer { store.close() }
        for (n, caption) in [(1, "cat"), (2, "dog"), (3, "cathedral")] {
            let image = try store.insertObject(entityName: "ImageAttachment")
            try image.setValue(.integer(Int64(n * 100)), forKey: "width")
            try image.setValue(.string(caption), forKey: "caption")
        }
        let entity = try XCTUnwrap(model.entity(named: "ImageAttachment"))
        let predicate = try ExpressionParser.parsePredicate("caption BEGINSWITH 'cat' AND width > 150")
        let translated = try XCTUnwrap(
            PredicateSQLTranslator.translate(predicate, resolver: store.layout.columnResolver(for: entity)))
        XCTAssertTrue(translated.sql.contains("ZCAPTION1") && translated.sql.contains("ZWIDTH"), translated.sql)
        let found = try store.fetch(
            FetchRequest(entityName: "ImageAttachment", sqlWhere: translated.sql, arguments: translated.arguments))
        XCTAssertEqual(found.map { $0.objectID.primaryKey }, [3])
        // A key path through a relationship does not translate.
        XCTAssertNil(
            PredicateSQLTranslator.translate(
                try ExpressionParser.parsePredicate("note.title == 'x'"),
                resolver: store.layout.columnResolver(for: entity)))
    }
}
