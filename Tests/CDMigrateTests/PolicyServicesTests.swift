import XCTest

@testable import CDMigrate

/// What real custom policies need (destination and source queries, object IDs, changing earlier
/// instances, dictionary views, introspection, shared user info), through a library-shaped app
/// migrated in two model steps.
final class PolicyServicesTests: XCTestCase {
    static let v1 = """
        {"name": "Library", "versionIdentifier": "1", "entities": [
          {"name": "Book", "attributes": [{"name": "title", "type": "string", "optional": false}, {"name": "author", "type": "string"},
                                          {"name": "year", "type": "integer32"}, {"name": "isbn", "type": "string"}]}
        ]}
        """
    static let v2 = """
        {"name": "Library", "versionIdentifier": "2", "entities": [
          {"name": "Book", "attributes": [{"name": "title", "type": "string", "optional": false}, {"name": "year", "type": "integer32"},
                                          {"name": "isbn", "type": "string"}],
           "relationships": [{"name": "author", "destination": "Author", "inverse": "books"}]},
          {"name": "Author", "attributes": [{"name": "name", "type": "string", "optional": false}],
           "relationships": [{"name": "books", "destination": "Book", "inverse": "author", "toMany": true}]}
        ]}
        """
    static let v3 = """
        {"name": "Library", "versionIdentifier": "3", "entities": [
          {"name": "Work", "abstract": true, "attributes": [{"name": "title", "type": "string", "optional": false}]},
          {"name": "Book", "parent": "Work", "attributes": [{"name": "year", "type": "integer32"}, {"name": "isbn", "type": "string"}],
           "relationships": [{"name": "writer", "destination": "Writer", "inverse": "books"}]},
          {"name": "Writer", "attributes": [{"name": "name", "type": "string", "optional": false}, {"name": "bookCount", "type": "integer32", "default": 0}],
           "relationships": [{"name": "books", "destination": "Book", "inverse": "writer", "toMany": true, "ordered": true}]}
        ]}
        """

    /// Step 1: the author string becomes a shared Author found by a destination fetch.
    final class BookToBookPolicy: EntityMigrationPolicy {
        override func createDestinationInstances(
            forSource book: ManagedObject, in mapping: EntityMapping, manager: MigrationManager
        ) throws {
            guard let created = try defaultCreateDestinationInstances(forSource: book, in: mapping, manager: manager)
            else { return }
            guard case .string(let name) = try book.value(forKey: "author") else { return }
            let found = try manager.fetchDestinationInstances(
                entityName: "Author", predicate: "name == %@", arguments: [.string(name)], fetchLimit: 1)
            let author =
                try found.first
                ?? {
                    let author = try manager.createDestinationInstance(entityName: "Author")
                    try author.setValue(.string(name), forKey: "name")
                    return author
                }()
            try created.setValue(.object(author), forKey: "author")
        }
    }

    /// Step 2, pass 1: writers, remembered by their source object ID in the manager's userInfo.
    final class AuthorToWriterPolicy: EntityMigrationPolicy {
        override func createDestinationInstances(
            forSource author: ManagedObject, in mapping: EntityMapping, manager: MigrationManager
        ) throws {
            let writer = try manager.createDestinationInstance(entityName: "Writer")
            let copied = try writer.setAttributeValues(try author.attributeDictionary(), skippingNil: true)
            XCTAssertEqual(copied, ["name"], "keys the destination lacks are skipped")
            try manager.associate(sourceInstance: author, withDestinationInstance: writer, for: mapping)
            var index = manager.userInfo["writers"] as? [String: String] ?? [:]
            index[author.objectID.uriRepresentation] = writer.objectID.uriRepresentation
            manager.userInfo["writers"] = index
        }
    }

    /// Step 2, pass 2: books linked to the writers of pass 1, found by object ID; the writers are changed too.
    final class BookToBookLinkingPolicy: EntityMigrationPolicy {
        var linked = 0
        override func createDestinationInstances(
            forSource book: ManagedObject, in mapping: EntityMapping, manager: MigrationManager
        ) throws {
            XCTAssertEqual(mapping.userInfo["modelVersion"], .integer(3))
            XCTAssertEqual(mapping.userInfo["modelVersion"]?.typeName, "integer", "written as the number 3")
            XCTAssertEqual(
                mapping.destinationEntity?.attributes.map { $0.name }, ["title", "year", "isbn"],
                "inherited attributes first")
            XCTAssertEqual(mapping.attributeMappings.map { $0.name }, ["title", "year"])
            guard let created = try defaultCreateDestinationInstances(forSource: book, in: mapping, manager: manager)
            else { return }
            guard let author = try book.value(forKey: "author").object else { return }
            let index = manager.userInfo["writers"] as? [String: String] ?? [:]
            guard let uri = index[author.objectID.uriRepresentation], let writer = try manager.instance(forURI: uri)
            else {
                throw MigrationError(.entityMigrationPolicy, "no writer for \(author.objectID)")
            }
            XCTAssertNotEqual(
                writer.objectID.storeIdentifier, author.objectID.storeIdentifier,
                "source and destination IDs are distinct")
            try writer.add([created], to: writer.entity.relationship(named: "books")!)
            let count = try writer.value(forKey: "bookCount").integerValue ?? 0
            try writer.setValue(.integer(count + 1), forKey: "bookCount")
            linked += 1
        }

        override func performCustomValidation(forMapping mapping: EntityMapping, manager: MigrationManager) throws {
            XCTAssertEqual(try manager.countDestinationInstances(entityName: "Writer"), 3)
            XCTAssertEqual(
                try manager.countDestinationInstances(entityName: "Work"), linked + 1, "sub-entities included")
            XCTAssertEqual(try manager.countDestinationInstances(entityName: "Work", includesSubentities: false), 0)
            XCTAssertEqual(try manager.countSourceInstances(entityName: "Book", predicate: "year < 2000"), 3)
            XCTAssertEqual(
                try manager.fetchSourceInstances(entityName: "Author", predicate: "name BEGINSWITH[c] 'u'").count, 1)
            XCTAssertThrowsError(try manager.fetchDestinationInstances(entityName: "Nope")) { error in
                XCTAssertTrue("\(error)".contains("'Nope'"))
            }
            XCTAssertThrowsError(try manager.fetchDestinationInstances(entityName: "Writer", predicate: "name ==")) {
                error in
                XCTAssertEqual((error as? MigrationError)?.code, .expressionSyntax)
            }
        }
    }

    func testALibraryMigratesInTwoStepsWithFetchesAndObjectIDs() throws {
        let scratch = ScratchDirectory()
        let m1 = try ManagedObjectModel(json: Self.v1)
        let m2 = try ManagedObjectModel(json: Self.v2)
        let m3 = try ManagedObjectModel(json: Self.v3)
        let books: [(String, String?, Int64)] = [
            ("Dune", "Frank Herbert", 1965), ("Children of Dune", "Frank Herbert", 1976),
            ("The Dispossessed", "Ursula K. Le Guin", 1974), ("Anathem", "Neal Stephenson", 2008),
            ("Untitled", nil, 2020), ("Seveneves", "Neal Stephenson", 2015),
        ]
        let first = scratch.file("v1.sqlite")
        try makeStore(first, m1) { store in
            for (title, author, year) in books {
                _ = try insert(
                    store, "Book",
                    ["title": .string(title), "author": author.map { .string($0) } ?? .null, "year": .integer(year)])
            }
        }
        let step1 = try MappingModel(
            json:
                """
                {"entityMappings": [{"name": "BookToBook", "sourceEntity": "Book", "destinationEntity": "Book", "predicate": "TRUEPREDICATE",
                  "policy": "BookToBook", "attributeMappings": {"title": "$source.title", "year": "$source.year", "isbn": "$source.isbn"}}]}
                """)
        let manager1 = try MigrationManager(sourceModel: m1, destinationModel: m2, mappingModel: step1)
        manager1.registerPolicy(named: "BookToBook") { BookToBookPolicy() }
        try manager1.migrateStoreInPlace(at: first)

        let store2 = try PersistentStore.open(at: first, model: m2)
        let authors = try fetchAll(store2, "Author")
        XCTAssertEqual(
            Set(try authors.map { try $0.value(forKey: "name") }),
            [.string("Frank Herbert"), .string("Ursula K. Le Guin"), .string("Neal Stephenson")],
            "one Author per distinct name")
        for book in try fetchAll(store2, "Book") {
            let title = try book.value(forKey: "title").stringValue
            let expected = books.first { $0.0 == title }?.1
            XCTAssertEqual(try book.value(forKeyPath: "author.name"), expected.map { .string($0) } ?? .null)
        }
        store2.close()

        let pass1 = try MappingModel(
            json:
                """
                {"name": "Writers", "entityMappings": [{"name": "AuthorToWriter", "sourceEntity": "Author", "destinationEntity": "Writer",
                  "predicate": "TRUEPREDICATE", "policy": "AuthorToWriter"}]}
                """)
        let pass2 = try MappingModel(
            json:
                """
                {"name": "Books", "entityMappings": [{"name": "BookToBook", "sourceEntity": "Book", "destinationEntity": "Book",
                  "predicate": "TRUEPREDICATE", "policy": "Linking", "userInfo": {"modelVersion": 3},
                  "attributeMappings": {"title": "$source.title", "year": "$source.year"}}]}
                """)
        let manager2 = try MigrationManager(sourceModel: m2, destinationModel: m3, mappingModels: [pass1, pass2])
        manager2.registerPolicy(named: "AuthorToWriter") { AuthorToWriterPolicy() }
        manager2.registerPolicy(named: "Linking") { BookToBookLinkingPolicy() }
        try manager2.migrateStoreInPlace(at: first)
        XCTAssertTrue(manager2.userInfo.isEmpty, "user info is released when the migration ends")

        let store3 = try PersistentStore.open(at: first, model: m3)
        defer { store3.close() }
        XCTAssertEqual(try store3.count(FetchRequest(entityName: "Book")), books.count)
        for writer in try fetchAll(store3, "Writer") {
            let name = try writer.value(forKey: "name").stringValue
            let titles = try writer.value(forKey: "books").elements.compactMap {
                try $0.object?.value(forKey: "title").stringValue
            }
            let expected = books.filter { $0.1 == name }.map { $0.0 }
            XCTAssertEqual(titles, expected, "books linked in source order to \(name ?? "?")")
            XCTAssertEqual(
                try writer.value(forKey: "bookCount"), .integer(Int64(expected.count)),
                "pass 2 changed instances made in pass 1")
        }
        let untitled = try XCTUnwrap(
            try store3.fetch(try FetchRequest(entityName: "Book", predicate: "title == 'Untitled'", in: store3)).first)
        XCTAssertEqual(try untitled.value(forKey: "writer"), .null)
    }

    func testLookupIndexesSpeedDestinationFetchesAndAreDroppedAfterwards() throws {
        let scratch = ScratchDirectory()
        let m1 = try ManagedObjectModel(json: Self.v1)
        let m2 = try ManagedObjectModel(json: Self.v2)
        let path = scratch.file("v1.sqlite")
        try makeStore(path, m1) { store in
            for i in 0..<2_000 {
                _ = try insert(store, "Book", ["title": .string("B\(i)"), "author": .string("A\(i % 50)")])
            }
        }
        let mapping = try MappingModel(
            json:
                """
                {"entityMappings": [{"name": "BookToBook", "sourceEntity": "Book", "destinationEntity": "Book", "predicate": "TRUEPREDICATE",
                  "policy": "BookToBook", "attributeMappings": {"title": "$source.title"}}]}
                """)
        let manager = try MigrationManager(sourceModel: m1, destinationModel: m2, mappingModel: mapping)
        manager.registerPolicy(named: "BookToBook") { BookToBookPolicy() }
        var plan = ""
        manager.progressInterval = 1_000
        // Unowned: the manager keeps its handler, so a strong capture would be a reference cycle.
        manager.progressHandler = { [unowned manager] progress in
            if progress.stage == .createDestinationInstances, progress.processed == 1_000,
                let store = manager.destinationStore
            {
                plan =
                    ((try? store.database.rows("EXPLAIN QUERY PLAN SELECT Z_PK FROM ZAUTHOR WHERE ZNAME = 'A1'")) ?? [])
                    .compactMap { $0.last?.text }.joined(separator: " ")
            }
            return true
        }
        let out = scratch.file("v2.sqlite")
        try manager.migrateStore(from: path, to: out)
        XCTAssertTrue(
            plan.contains("INDEX cdm_lookup_ZAUTHOR_ZNAME"),
            "the lookup column is indexed during the migration: \(plan)")
        let store = try PersistentStore.open(at: out, model: m2)
        defer { store.close() }
        XCTAssertEqual(try store.count(FetchRequest(entityName: "Author")), 50)
        let indexes = try store.database.rows(
            "SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE 'cdm_%'")
        XCTAssertTrue(indexes.isEmpty, "no index outside Core Data's layout is left in the store")
    }
}

extension PolicyServicesTests {
    func testFetchPredicatesNameUnknownKeysEvenWithoutRows() throws {
        let scratch = ScratchDirectory()
        let model = try ManagedObjectModel(json: Self.v2)
        let store = try PersistentStore.create(at: scratch.file("empty.sqlite"), model: model)
        defer { store.close() }
        XCTAssertThrowsError(try FetchRequest(entityName: "Book", predicate: "titel == 'x'", in: store)) { error in
            let message = (error as? MigrationError)?.message ?? ""
            XCTAssertTrue(
                message.contains("entity 'Book' has no property 'titel'") && message.contains("did you mean 'title'"),
                message)
        }
        XCTAssertThrowsError(try FetchRequest(entityName: "Book", predicate: "author.nam BEGINSWITH 'F'", in: store)) {
            error in
            XCTAssertTrue("\(error)".contains("entity 'Author' has no property 'nam'"), "\(error)")
        }
        XCTAssertNoThrow(
            try FetchRequest(
                entityName: "Book", predicate: "author.name BEGINSWITH 'F' AND year > 1 AND author.books.@count > 0",
                in: store))
    }
}
