import Foundation
import XCTest

@testable import CDMigrate

/// Opening a store through its own model cache and reading it (fetch with predicate, sort and
/// limit; relationships), and making seed stores from a JSON description.
final class StoreOpeningTests: XCTestCase {
    static let libraryModelJSON = """
        {"name": "Library", "versionIdentifier": "v1", "entities": [
          {"name": "Author", "attributes": [
             {"name": "name", "type": "string"},
             {"name": "born", "type": "date"}],
           "relationships": [
             {"name": "books", "destination": "Book", "inverse": "author", "toMany": true, "ordered": true}]},
          {"name": "Book", "attributes": [
             {"name": "title", "type": "string", "optional": false, "default": ""},
             {"name": "year", "type": "integer 32"},
             {"name": "price", "type": "decimal"},
             {"name": "tags", "type": "transformable"},
             {"name": "cover", "type": "binary"}],
           "relationships": [
             {"name": "author", "destination": "Author", "inverse": "books"},
             {"name": "shelves", "destination": "Shelf", "inverse": "books", "toMany": true}]},
          {"name": "Ebook", "parent": "Book", "attributes": [{"name": "url", "type": "uri"}]},
          {"name": "Shelf", "attributes": [{"name": "label", "type": "string"}],
           "relationships": [{"name": "books", "destination": "Book", "inverse": "shelves", "toMany": true}]}
        ]}
        """

    static let seedJSON = """
        {"objects": [
          {"entity": "Book", "id": "b2", "values": {"title": "Second", "year": 2001, "author": "ann", "price": "9.99"}},
          {"entity": "Author", "id": "ann", "values": {"name": "Ann", "born": "1970-05-01T00:00:00Z", "books": ["b3", "b1", "b2"]}},
          {"entity": "Book", "id": "b1", "values": {"title": "First", "year": 1999, "tags": ["a", "b"], "cover": "AAEC"}},
          {"entity": "Ebook", "id": "b3", "values": {"title": "Third", "year": 2010, "url": "https://example.com/3"}},
          {"entity": "Shelf", "values": {"label": "Top", "books": ["b1", "b3"]}},
          {"entity": "Author", "values": {"name": "Bob"}}
        ]}
        """

    func model() throws -> ManagedObjectModel { try ManagedObjectModel(json: StoreOpeningTests.libraryModelJSON) }

    func seeded(_ scratch: ScratchDirectory) throws -> String {
        let path = scratch.file("seed.sqlite")
        try PersistentStore.create(at: path, model: try model(), seed: try StoreSeed(json: StoreOpeningTests.seedJSON))
            .close()
        return path
    }

    func testSeedStoreOpensThroughItsOwnModelCache() throws {
        let scratch = ScratchDirectory()
        let path = try seeded(scratch)
        let store = try PersistentStore.open(at: path)
        defer { store.close() }
        XCTAssertTrue(store.isReadOnly)
        XCTAssertEqual(store.model.entityVersionHashes, try model().entityVersionHashes)
        XCTAssertEqual(store.metadata.versionIdentifiers, ["v1"])
        XCTAssertEqual(try store.count("Book"), 3)
        XCTAssertEqual(try store.count("Book", includesSubentities: false), 2)
        let books = try store.fetch("Book", sortDescriptors: [FetchSortDescriptor(key: "year", ascending: false)])
        XCTAssertEqual(
            try books.map { try $0.value(forKey: "title") }, [.string("Third"), .string("Second"), .string("First")])
        XCTAssertEqual(books.first?.entity.name, "Ebook")
        // Primary keys follow the description's order, per table.
        XCTAssertEqual(
            try store.fetch("Book", predicate: "title == %@", arguments: [.string("Second")]).first?.objectID
                .primaryKey, 1)
        // To-one: the related instance; to-many ordered: in the given order.
        let second = try XCTUnwrap(books.first { (try? $0.value(forKey: "title")) == .string("Second") })
        let author = try XCTUnwrap(try second.value(forKey: "author").object)
        XCTAssertEqual(try author.value(forKey: "name"), .string("Ann"))
        XCTAssertEqual(
            try author.value(forKeyPath: "books.title"),
            .collection([.string("Third"), .string("First"), .string("Second")]))
        XCTAssertEqual(try author.value(forKey: "born"), .date(10_368_000 - 978_307_200))
    }

    func testSeedValuesKeepTheirTypes() throws {
        let scratch = ScratchDirectory()
        let store = try PersistentStore.open(at: try seeded(scratch))
        defer { store.close() }
        let first = try XCTUnwrap(store.fetch("Book", predicate: "title == 'First'").first)
        XCTAssertEqual(try first.value(forKey: "year"), .integer(1999))
        XCTAssertEqual(try first.value(forKey: "cover"), .binary([0, 1, 2]))
        // A transformable attribute given a JSON array keeps its keyed archive in its column.
        let database = try SQLiteDatabase(path: store.path, mode: .readOnly)
        defer { database.close() }
        let archive = try database.rows("SELECT ZTAGS FROM ZBOOK WHERE ZTITLE = 'First'").first?.first?.bytes ?? []
        XCTAssertEqual(Array(archive.prefix(8)), Array("bplist00".utf8))
        XCTAssertEqual(try first.value(forKey: "price"), .null)
        XCTAssertEqual(try first.value(forKeyPath: "author.name"), .string("Ann"))  // the inverse of Ann's books
        XCTAssertEqual(try first.value(forKeyPath: "shelves.label"), .collection([.string("Top")]))
        let second = try XCTUnwrap(
            store.fetch(
                "Book", predicate: "author.name == $name", variables: ["name": .string("Ann")],
                sortDescriptors: [FetchSortDescriptor(key: "title")], limit: 1
            ).first)
        XCTAssertEqual(try second.value(forKey: "title"), .string("First"))
        XCTAssertEqual(try store.fetch("Book", predicate: "price == 9.99").count, 1)
        let bob = try XCTUnwrap(store.fetch("Author", predicate: "name == 'Bob'").first)
        XCTAssertEqual(try bob.value(forKey: "books"), .collection([]))
        XCTAssertEqual(try bob.value(forKey: "born"), .null)
    }

    func testDateValuesReadAsISO8601OrReferenceSeconds() throws {
        let scratch = ScratchDirectory()
        let json = """
            [{"entity": "Author", "values": {"name": "iso", "born": "2001-01-02T00:00:00Z"}},
             {"entity": "Author", "values": {"name": "seconds", "born": 86400}}]
            """
        try PersistentStore.create(at: scratch.file("d.sqlite"), model: try model(), seed: try StoreSeed(json: json))
            .close()
        let store = try PersistentStore.open(at: scratch.file("d.sqlite"))
        defer { store.close() }
        XCTAssertEqual(try store.fetch("Author").map { try $0.value(forKey: "born") }, [.date(86400), .date(86400)])
    }

    func testOpenedStoreIsReadOnlyAndLeavesNoCompanions() throws {
        let scratch = ScratchDirectory()
        let path = try seeded(scratch)
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        let store = try PersistentStore.open(at: path)
        XCTAssertThrowsError(try store.insertObject(entityName: "Author")) { error in
            XCTAssertEqual((error as? MigrationError)?.code, .invalidArgument)
            XCTAssertTrue("\(error)".contains("read-only"), "\(error)")
        }
        XCTAssertThrowsError(try StoreSeed.empty.insert(into: store)) {
            XCTAssertTrue("\($0)".contains("read-only"), "\($0)")
        }
        store.close()
        XCTAssertFalse(FileManager.default.fileExists(atPath: path + "-wal"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: path + "-shm"))
    }

    func testFetchErrorsNameTheEntityAndThePredicatePosition() throws {
        let scratch = ScratchDirectory()
        let store = try PersistentStore.open(at: try seeded(scratch))
        defer { store.close() }
        XCTAssertThrowsError(try store.fetch("Bok")) { error in
            let error = error as? MigrationError
            XCTAssertEqual(error?.code, .invalidArgument)
            XCTAssertTrue(
                error?.message.contains("'Bok'") == true && error?.message.contains("did you mean 'Book'") == true,
                "\(String(describing: error))")
        }
        XCTAssertThrowsError(try store.fetch("Book", predicate: "title == ")) { error in
            let error = error as? MigrationError
            XCTAssertEqual(error?.code, .expressionSyntax)
            XCTAssertNotNil(error?.offset)
            XCTAssertTrue(error?.message.contains("'Book'") == true, "\(String(describing: error))")
        }
        XCTAssertThrowsError(try store.fetch("Book", predicate: "titel == 'x'")) { error in
            XCTAssertEqual((error as? MigrationError)?.code, .invalidArgument)
        }
        XCTAssertThrowsError(try store.fetch("Book", sortDescriptors: [FetchSortDescriptor(key: "author")])) { error in
            XCTAssertTrue("\(error)".contains("sort descriptor 1"), "\(error)")
        }
    }

    func testSeedErrorsNameTheirJSONPath() throws {
        let scratch = ScratchDirectory()
        let model = try self.model()
        func failure(_ json: String, file: StaticString = #filePath, line: UInt = #line) -> MigrationError? {
            let path = scratch.file(UUID().uuidString + ".sqlite")
            do {
                try PersistentStore.create(at: path, model: model, seed: try StoreSeed(json: json)).close()
                XCTFail("no error for \(json)", file: file, line: line)
                return nil
            } catch {
                XCTAssertFalse(
                    FileManager.default.fileExists(atPath: path), "a failed seed leaves no store", file: file,
                    line: line)
                return error as? MigrationError
            }
        }
        var error = failure(#"[{"entity": "Auther"}]"#)
        XCTAssertEqual(error?.path, "$[0].entity")
        XCTAssertTrue(error?.message.contains("did you mean 'Author'") == true, "\(String(describing: error))")
        error = failure(#"{"objects": [{"entity": "Author"}, {"entity": "Book", "values": {"author": "nobody"}}]}"#)
        XCTAssertEqual(error?.path, "$.objects[1].values.author")
        XCTAssertTrue(error?.message.contains("'nobody'") == true)
        error = failure(#"[{"entity": "Book", "values": {"year": "recent"}}]"#)
        XCTAssertEqual(error?.path, "$[0].values.year")
        XCTAssertTrue(error?.message.contains("Book.year") == true, "\(String(describing: error))")
        error = failure(#"[{"entity": "Book", "values": {"titel": "x"}}]"#)
        XCTAssertTrue(error?.message.contains("did you mean 'title'") == true)
        error = failure(
            #"[{"entity": "Book", "id": "x"}, {"entity": "Shelf", "id": "s"}, {"entity": "Shelf", "values": {"books": ["s"]}}]"#
        )
        XCTAssertEqual(error?.path, "$[2].values.books")
        error = failure(#"[{"entity": "Book", "title": "x"}]"#)
        XCTAssertEqual(error?.code, .invalidArgument)
        XCTAssertTrue(error?.message.contains("properties go in 'values'") == true, "\(String(describing: error))")
        error = failure(#"[{"entity": "Book", "id": "a"}, {"entity": "Book", "id": "a"}]"#)
        XCTAssertTrue(error?.message.contains("id 'a'") == true, "\(String(describing: error))")
        XCTAssertThrowsError(try StoreSeed(json: "[")) { XCTAssertEqual(($0 as? MigrationError)?.code, .invalidJSON) }
    }

    /// A seed store is checked as Core Data's save checks what it writes, unless asked not to.
    func testSeedStoresAreValidatedUnlessToldNot() throws {
        let scratch = ScratchDirectory()
        let notes = try ManagedObjectModel(
            contentsOf: TestPaths.repository + "/examples/4-uncloudnotes/UnCloudNotes_v1.model.json")
        let seed = try StoreSeed(
            json:
                #"[{"entity": "Note", "values": {"title": "no body"}}, {"entity": "Note", "values": {"title": "t", "body": "b"}}]"#
        )
        XCTAssertThrowsError(try PersistentStore.create(at: scratch.file("v.sqlite"), model: notes, seed: seed)) {
            error in
            let error = error as? MigrationError
            XCTAssertEqual(error?.code, .validationMissingMandatoryProperty)
            XCTAssertTrue(error?.message.contains("Note.body") == true, "\(String(describing: error))")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: scratch.file("v.sqlite")))
        let kept = try PersistentStore.create(at: scratch.file("v.sqlite"), model: notes, seed: seed, validates: false)
        XCTAssertEqual(try kept.count("Note", predicate: "body == nil"), 1)
        XCTAssertThrowsError(try kept.validate()) {
            XCTAssertEqual(($0 as? MigrationError)?.code, .validationMissingMandatoryProperty)
        }
        kept.close()
        try CommandLineTool.requireBuilt()
        try #"[{"entity": "Note", "values": {"title": "no body"}}]"#.write(
            toFile: scratch.file("n.json"), atomically: true, encoding: .utf8)
        let model = TestPaths.repository + "/examples/4-uncloudnotes/UnCloudNotes_v1.model.json"
        let refused = try CommandLineTool.run([
            "create-store", model, "--objects", scratch.file("n.json"), "-o", scratch.file("c.sqlite"),
        ])
        XCTAssertEqual(refused.status, 65)
        XCTAssertTrue(refused.err.contains("Note.body"), refused.err)
        XCTAssertFalse(FileManager.default.fileExists(atPath: scratch.file("c.sqlite")))
        let skipped = try CommandLineTool.run([
            "create-store", model, "--objects", scratch.file("n.json"), "-o", scratch.file("c.sqlite"),
            "--skip-validation",
        ])
        XCTAssertEqual(skipped.status, 0, skipped.err)
    }

    func testStoreWithoutModelCacheNeedsAModel() throws {
        let scratch = ScratchDirectory()
        let path = try copyFixtureStore("apple-stores/macos-notes/NotesV7.storedata", into: scratch.path)
        XCTAssertThrowsError(try PersistentStore.open(at: path)) { error in
            let error = error as? MigrationError
            XCTAssertEqual(error?.code, .migrationMissingSourceModel)
            XCTAssertTrue(error?.message.contains("keeps no model") == true, "\(String(describing: error))")
        }
        XCTAssertThrowsError(try PersistentStore.open(at: scratch.file("missing.sqlite"))) {
            XCTAssertEqual(($0 as? MigrationError)?.code, .io)
        }
    }

    /// The macOS Notes store (written by Core Data, no model cache) read through the model
    /// rebuilt from its schema: every note's folder is the row its ZFOLDER column names, and every
    /// folder's notes are the rows pointing at it, as SQLite shows them.
    func testAppleNotesRelationshipsMatchTheirColumns() throws {
        let scratch = ScratchDirectory()
        let path = try copyFixtureStore("apple-stores/macos-notes/NotesV7.storedata", into: scratch.path)
        let model = try ManagedObjectModel(ofStoreAt: path)
        let store = try PersistentStore.open(at: path, model: model, readOnly: true, checkVersion: true)
        defer { store.close() }
        let database = try SQLiteDatabase(path: path, mode: .readOnly)
        defer { database.close() }
        var expected: [Int64: Int64?] = [:]
        var bodies: [Int64: Int64?] = [:]
        for row in try database.rows("SELECT Z_PK, ZFOLDER, ZBODY FROM ZNOTE") {
            expected[row[0].integer ?? -1] = row[1].integer
            bodies[row[0].integer ?? -1] = row[2].integer
        }
        let notes = try store.fetch("Note")
        XCTAssertEqual(notes.count, expected.count)
        XCTAssertGreaterThan(notes.count, 0)
        for note in notes {
            let folder = try note.value(forKey: "folder").object
            XCTAssertEqual(
                folder?.objectID.primaryKey, expected[note.objectID.primaryKey] ?? nil,
                "note \(note.objectID.primaryKey)")
            XCTAssertEqual(folder?.entity.isKind(of: try XCTUnwrap(model.entity(named: "Folder"))), true)
            XCTAssertEqual(
                try note.value(forKey: "body").object?.objectID.primaryKey, bodies[note.objectID.primaryKey] ?? nil)
        }
        let first = try XCTUnwrap(notes.first)
        let title = try database.rows("SELECT ZTITLE FROM ZNOTE WHERE Z_PK = ?", [.integer(first.objectID.primaryKey)])
            .first?.first?.text
        XCTAssertEqual(try first.value(forKey: "title"), title.map { .string($0) } ?? .null)
        let sorted = try store.fetch(
            "Note", predicate: "folder != nil", sortDescriptors: [FetchSortDescriptor(key: "title")], limit: 3)
        let sqlTitles = try database.rows(
            "SELECT ZTITLE FROM ZNOTE WHERE ZFOLDER IS NOT NULL ORDER BY ZTITLE, Z_PK LIMIT 3"
        ).map { $0[0].text.map { Value.string($0) } ?? .null }
        XCTAssertEqual(try sorted.map { try $0.value(forKey: "title") }, sqlTitles)
    }

    /// Apple's stores with a model cache open through it, the version check passing.
    func testAppleStoresOpenThroughTheirModelCache() throws {
        let scratch = ScratchDirectory()
        for version in AppleStoreFixtureTests.renameVersions {
            let path = try copyFixtureStore("apple-stores/renames/Example_v\(version).sqlite", into: scratch.path)
            let store = try PersistentStore.open(at: path)
            let attribute = "v\(version.replacingOccurrences(of: ".", with: "_"))_name"
            let objects = try store.fetch(
                "BasicEntity", predicate: "%K == %@", arguments: [.string(attribute), .string("A Known Value")])
            XCTAssertEqual(objects.count, 1, version)
            XCTAssertEqual(try objects.first?.value(forKey: attribute), .string("A Known Value"))
            XCTAssertEqual(
                store.metadata.versionHashes["BasicEntity"], store.model.entity(named: "BasicEntity")?.versionHash)
            store.close()
        }
    }

    /// A seed store of a version of Apple's model set carries the version hashes and identifiers
    /// the store Core Data wrote for that version carries, and migrates to the current version.
    func testSeedStoreOfAnXcodeVersionMatchesApplesStore() throws {
        let scratch = ScratchDirectory()
        let models = TestPaths.fixtures + "/apple-stores/renames/Model.xcdatamodeld"
        let set = try ModelVersionSet(contentsOf: models)
        let model = try XCTUnwrap(set.models["v1.1.0"])
        let seed = try StoreSeed(json: #"[{"entity": "BasicEntity", "values": {"v1_1_0_name": "A Known Value"}}]"#)
        try PersistentStore.create(at: scratch.file("seed.sqlite"), model: model, seed: seed).close()
        let apple = try PersistentStore.open(
            at: try copyFixtureStore("apple-stores/renames/Example_v1.1.0.sqlite", into: scratch.path))
        let made = try PersistentStore.open(at: scratch.file("seed.sqlite"))
        XCTAssertEqual(made.metadata.versionHashes, apple.metadata.versionHashes)
        XCTAssertEqual(made.metadata.versionIdentifiers, apple.metadata.versionIdentifiers)
        XCTAssertEqual(set.versionName(forStoreMetadata: made.metadata), "v1.1.0")
        XCTAssertEqual(
            try made.fetch("BasicEntity").map { try $0.value(forKey: "v1_1_0_name") },
            try apple.fetch("BasicEntity").map { try $0.value(forKey: "v1_1_0_name") })
        apple.close()
        made.close()
    }

    /// A seed store of version 1, migrated to version 2, read through the destination's own model.
    func testSeededStoreMigratesAndReadsBack() throws {
        let scratch = ScratchDirectory()
        let v1 = try model()
        let v2 = try ManagedObjectModel(
            json: StoreOpeningTests.libraryModelJSON
                .replacingOccurrences(of: #""versionIdentifier": "v1""#, with: #""versionIdentifier": "v2""#)
                .replacingOccurrences(
                    of: #"{"name": "year", "type": "integer 32"},"#,
                    with:
                        #"{"name": "year", "type": "integer 32"}, {"name": "subtitle", "type": "string", "default": "none"},"#
                ))
        XCTAssertNotEqual(v1.entityVersionHashes, v2.entityVersionHashes)
        try PersistentStore.create(
            at: scratch.file("v1.sqlite"), model: v1, seed: try StoreSeed(json: StoreOpeningTests.seedJSON)
        ).close()
        let manager = try MigrationManager(
            sourceModel: v1, destinationModel: v2, mappingModels: [try MappingModel.inferred(from: v1, to: v2)])
        _ = try manager.migrateStore(from: scratch.file("v1.sqlite"), to: scratch.file("v2.sqlite"))
        let store = try PersistentStore.open(at: scratch.file("v2.sqlite"))
        defer { store.close() }
        XCTAssertEqual(store.model.entityVersionHashes, v2.entityVersionHashes)
        XCTAssertEqual(store.metadata.versionIdentifiers, ["v2"])
        let ann = try XCTUnwrap(store.fetch("Author", predicate: "name == 'Ann'").first)
        XCTAssertEqual(
            try ann.value(forKeyPath: "books.title"),
            .collection([.string("Third"), .string("First"), .string("Second")]))
        XCTAssertEqual(
            try store.fetch("Book", sortDescriptors: [FetchSortDescriptor(key: "title")]).map {
                try $0.value(forKey: "subtitle")
            },
            [.string("none"), .string("none"), .string("none")])
        XCTAssertEqual(try store.count("Book", predicate: "ANY shelves.label == 'Top'"), 2)
    }

    func testCreateStoreCommandWritesASeedStore() throws {
        try CommandLineTool.requireBuilt()
        let scratch = ScratchDirectory()
        let examples = TestPaths.repository + "/examples/2-recipes"
        try
            #"[{"entity": "Chef", "id": "c", "values": {"name": "Ann"}}, {"entity": "Recipe", "values": {"name": "Soup", "chef": "c"}}]"#
            .write(toFile: scratch.file("objects.json"), atomically: true, encoding: .utf8)
        let made = try CommandLineTool.run([
            "create-store", examples, "--version", "RecipesV1", "--objects", scratch.file("objects.json"),
            "-o", scratch.file("v1.sqlite"), "--json",
        ])
        XCTAssertEqual(made.status, 0, made.err)
        XCTAssertTrue(
            made.out.contains("\"version\" : \"RecipesV1\"") || made.out.contains("\"version\": \"RecipesV1\""),
            made.out)
        let store = try PersistentStore.open(at: scratch.file("v1.sqlite"))
        XCTAssertEqual(
            store.model.entityVersionHashes,
            try ManagedObjectModel(contentsOf: examples + "/RecipesV1.model.json").entityVersionHashes)
        XCTAssertEqual(try store.fetch("Recipe").first?.value(forKeyPath: "chef.name"), .string("Ann"))
        store.close()
        // The current version without --version; an existing output is refused; a bad file names its path.
        XCTAssertEqual(try CommandLineTool.run(["create-store", examples, "-o", scratch.file("v2.sqlite")]).status, 0)
        XCTAssertEqual(try PersistentStore.open(at: scratch.file("v2.sqlite")).metadata.versionIdentifiers, ["v2"])
        XCTAssertEqual(try CommandLineTool.run(["create-store", examples, "-o", scratch.file("v2.sqlite")]).status, 74)
        try #"[{"entity": "Recipe", "values": {"chef": "nobody"}}]"#.write(
            toFile: scratch.file("bad.json"), atomically: true, encoding: .utf8)
        let bad = try CommandLineTool.run([
            "create-store", examples + "/RecipesV1.model.json", "--objects", scratch.file("bad.json"), "-o",
            scratch.file("bad.sqlite"),
        ])
        XCTAssertEqual(bad.status, 65)
        XCTAssertTrue(bad.err.contains("$[0].values.chef"), bad.err)
        XCTAssertFalse(FileManager.default.fileExists(atPath: scratch.file("bad.sqlite")))
        let unknown = try CommandLineTool.run([
            "create-store", examples, "--version", "RecipesV3", "-o", scratch.file("x.sqlite"),
        ])
        XCTAssertEqual(unknown.status, 65)
        XCTAssertTrue(unknown.err.contains("RecipesV1, RecipesV2"), unknown.err)
    }
}
