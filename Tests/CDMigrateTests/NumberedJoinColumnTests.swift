import Foundation
import XCTest

@testable import CDMigrate

/// Stores written by older Core Data give a join table's column a number when another join table of
/// the model already has a column of that name: Artsy Folio's stores have `Z_1ARTWORKS` with
/// `Z_3ARTWORKS` (albums' artworks) and `Z_3SHOWS` with `Z_3ARTWORKS1` (shows' artworks).
final class NumberedJoinColumnTests: XCTestCase {
    var scratch: ScratchDirectory!
    override func setUp() { scratch = ScratchDirectory() }
    override func tearDown() { scratch = nil }

    /// Album 1, Artwork 2, Show 3: the join tables of `Album.artworks` and `Show.artworks` both
    /// have a column `Z_2ARTWORKS`.
    func model(_ version: String, showTitle: Bool = false) throws -> ManagedObjectModel {
        let title = showTitle ? #", {"name": "title", "type": "string"}"# : ""
        return try ManagedObjectModel(
            json: #"""
                {"name": "M", "versionIdentifier": "\#(version)", "entities": [
                  {"name": "Album", "attributes": [{"name": "name", "type": "string"}],
                   "relationships": [{"name": "artworks", "destination": "Artwork", "inverse": "collections", "toMany": true}]},
                  {"name": "Artwork", "attributes": [{"name": "name", "type": "string"}],
                   "relationships": [{"name": "collections", "destination": "Album", "inverse": "artworks", "toMany": true},
                                     {"name": "shows", "destination": "Show", "inverse": "artworks", "toMany": true}]},
                  {"name": "Show", "attributes": [{"name": "name", "type": "string"}\#(title)],
                   "relationships": [{"name": "artworks", "destination": "Artwork", "inverse": "shows", "toMany": true}]}
                ]}
                """#)
    }

    func testAJoinColumnSpelledWithANumberIsReadAndMigrated() throws {
        let v1 = try model("1")
        let v2 = try model("2", showTitle: true)
        let source = scratch.file("folio.sqlite")
        try makeStore(source, v1) { s in
            let a = try insert(s, "Artwork", ["name": "Sunflowers"])
            let b = try insert(s, "Artwork", ["name": "Irises"])
            try insert(s, "Album", ["name": "Spring", "artworks": .collection([.object(a)])])
            try insert(s, "Show", ["name": "Arles", "artworks": .collection([.object(a), .object(b)])])
        }
        // As the older store has it: the shows' join table's artwork column with a number.
        let database = try SQLiteDatabase(path: source, mode: .readWrite)
        XCTAssertEqual(try database.columns(ofTable: "Z_2COLLECTIONS").sorted(), ["Z_1COLLECTIONS", "Z_2ARTWORKS"])
        XCTAssertEqual(try database.columns(ofTable: "Z_2SHOWS").sorted(), ["Z_2ARTWORKS", "Z_3SHOWS"])
        try database.exec("ALTER TABLE Z_2SHOWS RENAME COLUMN Z_2ARTWORKS TO Z_2ARTWORKS1")
        database.close()

        let store = try PersistentStore.open(at: source, model: v1)
        let show = try XCTUnwrap(try fetchAll(store, "Show").first)
        XCTAssertEqual(try show.value(forKey: "artworks").elements.count, 2)
        store.close()

        let destination = scratch.file("folio-v2.sqlite")
        let (mapping, _) = try MappingModel.inferred(from: v1, to: v2, rows: nil)
        try MigrationManager(sourceModel: v1, destinationModel: v2, mappingModel: mapping)
            .migrateStore(from: source, to: destination)
        let migrated = try PersistentStore.open(at: destination, model: v2)
        defer { migrated.close() }
        let names = try fetchAll(migrated, "Show").first?.value(forKey: "artworks").elements
            .compactMap { try $0.object?.value(forKey: "name").stringValue }.sorted()
        XCTAssertEqual(names, ["Irises", "Sunflowers"])
        let album = try XCTUnwrap(try fetchAll(migrated, "Album").first)
        XCTAssertEqual(try album.value(forKey: "artworks").elements.count, 1)
    }
}
