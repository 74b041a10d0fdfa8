import Foundation
import XCTest

@testable import CDMigrate

/// Stores cdmigrate writes compared with the stores Apple's Core Data wrote for the same models
/// (`Tests/Fixtures/apple-stores`): the same tables, the same columns in the same order, the same
/// indexes with the same definitions, the same metadata keys. What still differs is listed in
/// docs/store-layout.md with its reason, and asserted here as the known difference.
final class AppleStoreShapeTests: XCTestCase {
    var scratch: ScratchDirectory!
    override func setUp() { scratch = ScratchDirectory() }

    struct Shape: Equatable {
        /// Table → `CREATE TABLE` text.
        var tables: [String: String]
        /// Index → `CREATE INDEX` text.
        var indexes: [String: String]
    }

    func shape(_ path: String) throws -> Shape {
        let database = try SQLiteDatabase(path: path, mode: .readOnly)
        defer { database.close() }
        var shape = Shape(tables: [:], indexes: [:])
        for row in try database.rows("SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL") {
            guard let type = row[0].text, let name = row[1].text, let sql = row[2].text else { continue }
            if type == "table" { shape.tables[name] = sql } else if type == "index" { shape.indexes[name] = sql }
        }
        return shape
    }

    func metadataKeys(_ path: String) throws -> Set<String> {
        let database = try SQLiteDatabase(path: path, mode: .readOnly)
        defer { database.close() }
        let plist = try XCTUnwrap(database.rows("SELECT Z_PLIST FROM Z_METADATA").first?[0].bytes)
        guard case .dictionary(let members) = try BinaryPropertyList.decode(plist) else {
            XCTFail("not a dictionary")
            return []
        }
        return Set(members.map { $0.key })
    }

    func compare(_ ours: Shape, _ apple: Shape, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertGreaterThanOrEqual(apple.tables.count, 4, "the Apple store was read", file: file, line: line)
        XCTAssertEqual(Set(ours.tables.keys), Set(apple.tables.keys), "tables", file: file, line: line)
        for (name, sql) in apple.tables { XCTAssertEqual(ours.tables[name], sql, name, file: file, line: line) }
        XCTAssertEqual(Set(ours.indexes.keys), Set(apple.indexes.keys), "indexes", file: file, line: line)
        for (name, sql) in apple.indexes { XCTAssertEqual(ours.indexes[name], sql, name, file: file, line: line) }
    }

    /// The macOS Notes store: 22 entities in 9 tables, hierarchies, entity columns, an indexed
    /// attribute (`OfflineAction.sequenceNumber`: `ZOFFLINEACTION_ZSEQUENCENUMBER_INDEX` and the fetch
    /// index `Z_OfflineAction_sequenceNumber`). A store created for its model has its exact schema.
    func testANewStoreForTheNotesModelHasTheNotesStoresSchema() throws {
        let apple = try copyFixtureStore("apple-stores/macos-notes/NotesV7.storedata", into: scratch.path)
        let model = try ManagedObjectModel(contentsOf: TestPaths.fixtures + "/json-models/notes-v7.json")
        let ours = scratch.file("notes.sqlite")
        try makeStore(ours, model) { _ in }
        compare(try shape(ours), try shape(apple))
        XCTAssertEqual(try shape(apple).tables.count, 9)
        XCTAssertEqual(try shape(apple).indexes.count, 22)
        XCTAssertEqual(
            try shape(ours).indexes["Z_OfflineAction_sequenceNumber"],
            "CREATE INDEX Z_OfflineAction_sequenceNumber ON ZOFFLINEACTION (ZSEQUENCENUMBER COLLATE BINARY ASC)")
    }

    /// The renames stores (iOS): a store migrated here from v1.0.0 through every version has the
    /// tables, columns, indexes and metadata keys of the store Core Data wrote at v2.0.0, and the
    /// source's UUID (the Apple stores were each created anew, so theirs differ).
    func testAStoreMigratedToV2HasTheAppleV2StoresShape() throws {
        let set = try ModelSet(contentsOf: TestPaths.fixtures + "/apple-stores/renames/Model.xcdatamodeld")
        let source = try copyFixtureStore("apple-stores/renames/Example_v1.0.0.sqlite", into: scratch.path)
        let apple = try copyFixtureStore("apple-stores/renames/Example_v2.0.0.sqlite", into: scratch.path)
        let ours = scratch.file("v2.sqlite")
        try StagedMigrationManager(storeAt: source, models: set).migrateStore(to: ours)
        compare(try shape(ours), try shape(apple))
        // Known difference: the checksum key, which Core Data writes from about 2020 on and the
        // older framework (1048) that wrote the fixtures did not.
        XCTAssertEqual(try metadataKeys(ours), try metadataKeys(apple).union(["NSStoreModelVersionChecksumKey"]))
        let new = scratch.file("new.sqlite")
        try makeStore(new, try XCTUnwrap(set.currentModel)) { _ in }
        compare(try shape(new), try shape(apple))
        XCTAssertEqual(try metadataKeys(new), try metadataKeys(apple).union(["NSStoreModelVersionChecksumKey"]))
    }

    /// Fetch indexes, indexed attributes and uniqueness constraints of a model read from each
    /// source (JSON, Xcode XML) become the same SQLite indexes.
    func testFetchIndexesIndexedAttributesAndConstraintsBecomeIndexes() throws {
        let json = """
            {"name": "Shop", "entities": [
              {"name": "Item", "uniquenessConstraints": [["sku"], ["shelf", "position"]],
               "fetchIndexes": [{"name": "byShelfAndDate", "elements": [{"property": "shelf"}, {"property": "added", "ascending": false}]}],
               "attributes": [{"name": "sku", "type": "string"}, {"name": "added", "type": "date", "indexed": true},
                              {"name": "position", "type": "integer32"}, {"name": "title", "type": "string", "indexed": true}],
               "relationships": [{"name": "shelf", "destination": "Shelf", "inverse": "items"}]},
              {"name": "Shelf", "attributes": [{"name": "code", "type": "string", "indexed": true}],
               "relationships": [{"name": "items", "destination": "Item", "inverse": "shelf", "toMany": true}]}
            ]}
            """
        let model = try ManagedObjectModel(json: json)
        let path = scratch.file("shop.sqlite")
        try makeStore(path, model) { _ in }
        let indexes = try shape(path).indexes
        XCTAssertEqual(
            indexes["Z_Item_byShelfAndDate"],
            "CREATE INDEX Z_Item_byShelfAndDate ON ZITEM (ZSHELF COLLATE BINARY ASC, ZADDED COLLATE BINARY DESC)")
        XCTAssertEqual(indexes["ZITEM_ZADDED_INDEX"], "CREATE INDEX ZITEM_ZADDED_INDEX ON ZITEM (ZADDED)")
        XCTAssertEqual(indexes["ZITEM_ZTITLE_INDEX"], "CREATE INDEX ZITEM_ZTITLE_INDEX ON ZITEM (ZTITLE)")
        XCTAssertNil(indexes["Z_Item_title"], "an entity with fetch indexes gets none made from its indexed attributes")
        XCTAssertEqual(indexes["Z_Shelf_code"], "CREATE INDEX Z_Shelf_code ON ZSHELF (ZCODE COLLATE BINARY ASC)")
        XCTAssertEqual(indexes["ZSHELF_ZCODE_INDEX"], "CREATE INDEX ZSHELF_ZCODE_INDEX ON ZSHELF (ZCODE)")
        XCTAssertEqual(indexes["Z_Item_UNIQUE_sku"], "CREATE UNIQUE INDEX Z_Item_UNIQUE_sku ON ZITEM (ZSKU)")
        XCTAssertEqual(
            indexes["Z_Item_UNIQUE_shelf_position"],
            "CREATE UNIQUE INDEX Z_Item_UNIQUE_shelf_position ON ZITEM (ZSHELF, ZPOSITION)")

        // The JSON written for the model reads back with the same indexes.
        let again = try ManagedObjectModel(json: model.jsonText())
        XCTAssertEqual(again.entity(named: "Item")?.fetchIndexes, model.entity(named: "Item")?.fetchIndexes)
        XCTAssertEqual(again.entity(named: "Shelf")?.attribute(named: "code")?.isIndexed, true)
        let pathAgain = scratch.file("shop2.sqlite")
        try makeStore(pathAgain, again) { _ in }
        XCTAssertEqual(try shape(pathAgain), try shape(path))

        // Bad fetch indexes are errors naming the JSON path.
        XCTAssertThrowsError(
            try ManagedObjectModel(
                json: """
                    {"entities": [{"name": "A", "fetchIndexes": [{"name": "x", "elements": [{"type": "Sideways"}]}], "attributes": [{"name": "a", "type": "string"}]}]}
                    """)
        ) { error in
            let text = "\(error)"
            XCTAssertTrue(text.contains("fetchIndexes[0].elements[0]"), text)
            XCTAssertTrue(text.contains("Sideways"), text)
        }
        XCTAssertThrowsError(
            try ManagedObjectModel(
                json: """
                    {"entities": [{"name": "A", "fetchIndexes": [{"name": "x", "elements": [{"property": "nope"}]}], "attributes": [{"name": "a", "type": "string"}]}]}
                    """)
        ) { error in
            let text = "\(error)"
            XCTAssertTrue(
                text.contains("fetch index 'A.x' names 'nope', which is not one of the entity's properties"), text)
        }
    }

    /// A fetch index naming a to-many relationship (Threema's `Contact.byStateConversationsGroupConversations`,
    /// which momc and Core Data accept): the model reads with a warning naming it, and the store
    /// gets no such index while the entity's other indexes are made as before.
    func testAFetchIndexNamingAToManyRelationshipIsAWarningAndLeftOutOfTheStore() throws {
        let json = """
            {"name": "Chat", "entities": [
              {"name": "Contact",
               "fetchIndexes": [{"name": "byStateConversations", "elements": [{"property": "state"}, {"property": "conversations"}]},
                                {"name": "byState", "elements": [{"property": "state"}]}],
               "attributes": [{"name": "state", "type": "integer16"}],
               "relationships": [{"name": "conversations", "destination": "Conversation", "inverse": "contact", "toMany": true}]},
              {"name": "Conversation", "attributes": [{"name": "title", "type": "string"}],
               "relationships": [{"name": "contact", "destination": "Contact", "inverse": "conversations"}]}
            ]}
            """
        let model = try ManagedObjectModel(json: json)
        XCTAssertTrue(
            model.warnings.contains {
                $0.contains(
                    "fetch index 'Contact.byStateConversations' names the to-many relationship 'conversations'")
                    && $0.contains("left out of the store")
            }, "\(model.warnings)")
        let path = scratch.file("chat.sqlite")
        try makeStore(path, model) { _ in }
        let indexes = try shape(path).indexes
        XCTAssertNil(indexes["Z_Contact_byStateConversations"])
        XCTAssertEqual(
            indexes["Z_Contact_byState"], "CREATE INDEX Z_Contact_byState ON ZCONTACT (ZSTATE COLLATE BINARY ASC)")
        // The model's JSON keeps the index as written, and reads back the same way.
        let again = try ManagedObjectModel(json: model.jsonText())
        XCTAssertEqual(again.entity(named: "Contact")?.fetchIndexes, model.entity(named: "Contact")?.fetchIndexes)
    }

    /// The compiled XcodeServer model (`NSFetchIndexDescriptions`, `NSIsIndexed`) and its Xcode
    /// source read the same fetch indexes and indexed properties, and give the same store.
    func testCompiledAndXcodeModelsKeepTheSameFetchIndexes() throws {
        let folder = TestPaths.fixtures + "/xcode/XcodeServer/2_0_0"
        let xml = try ManagedObjectModel(contentsOf: folder + "/XcodeServer.xcdatamodeld")
        let compiled = try ManagedObjectModel(contentsOf: folder + "/XcodeServer.momd_precompiled/XcodeServer.mom")
        for entity in xml.entities {
            let other = try XCTUnwrap(compiled.entity(named: entity.name))
            XCTAssertEqual(entity.fetchIndexes, other.fetchIndexes, entity.name)
            for attribute in entity.ownAttributes {
                XCTAssertEqual(
                    attribute.isIndexed, other.attribute(named: attribute.name)?.isIndexed,
                    "\(entity.name).\(attribute.name)")
            }
        }
        XCTAssertEqual(
            xml.entity(named: "ManagedBot")?.fetchIndexes.first?.elements.map { $0.propertyName },
            ["identifier", "name"])
        XCTAssertFalse(xml.warnings.contains { $0.contains("byPropertyIndex") }, "\(xml.warnings)")
        let a = scratch.file("xml.sqlite")
        let b = scratch.file("compiled.sqlite")
        try makeStore(a, xml) { _ in }
        try makeStore(b, compiled) { _ in }
        XCTAssertEqual(try shape(a), try shape(b))
        XCTAssertEqual(
            try shape(a).indexes["Z_ManagedBot_byPropertyIndex"],
            "CREATE INDEX Z_ManagedBot_byPropertyIndex ON ZMANAGEDBOT (ZIDENTIFIER COLLATE BINARY ASC, ZNAME COLLATE BINARY ASC)"
        )
    }
}
