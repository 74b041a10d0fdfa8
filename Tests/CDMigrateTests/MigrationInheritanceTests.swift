import CSQLite
import XCTest

@testable import CDMigrate

/// Inheritance in source fetches and relationship coercion (Core Data's rules).
final class MigrationInheritanceTests: XCTestCase {
    static let source = """
        {"name": "Media", "versionIdentifier": "1", "entities": [
          {"name": "Item", "attributes": [{"name": "title", "type": "string"}],
           "relationships": [{"name": "shelf", "destination": "Shelf", "inverse": "items"}]},
          {"name": "Photo", "parent": "Item", "attributes": [{"name": "pixels", "type": "integer64"}]},
          {"name": "Shelf", "attributes": [{"name": "label", "type": "string"}],
           "relationships": [{"name": "items", "destination": "Item", "inverse": "shelf", "toMany": true}]}
        ]}
        """
    static let destination = """
        {"name": "Media", "versionIdentifier": "2", "entities": [
          {"name": "Item", "attributes": [{"name": "title", "type": "string"}, {"name": "kind", "type": "string"}],
           "relationships": [{"name": "shelf", "destination": "Shelf", "inverse": "items"}]},
          {"name": "Photo", "parent": "Item", "attributes": [{"name": "megapixels", "type": "double"}]},
          {"name": "Shelf", "attributes": [{"name": "label", "type": "string"}],
           "relationships": [{"name": "items", "destination": "Item", "inverse": "shelf", "toMany": true},
                             {"name": "favourite", "destination": "Item"}]}
        ]}
        """

    func makeSource(_ scratch: ScratchDirectory, _ model: ManagedObjectModel) throws -> String {
        let path = scratch.file("media.sqlite")
        try makeStore(path, model) { store in
            let shelf = try insert(store, "Shelf", ["label": "Top"])
            for i in 0..<3 { try insert(store, "Item", ["title": .string("item\(i)"), "shelf": .object(shelf)]) }
            for i in 0..<2 {
                try insert(
                    store, "Photo",
                    [
                        "title": .string("photo\(i)"), "pixels": .integer(Int64(i + 1) * 1_000_000),
                        "shelf": .object(shelf),
                    ])
            }
        }
        return path
    }

    static let mapping = """
        {"entityMappings": [
          {"name": "ItemToItem", "sourceEntity": "Item", "destinationEntity": "Item", "predicate": "TRUEPREDICATE",
           "attributeMappings": {"title": "$source.title", "kind": "\\"item\\""}},
          {"name": "PhotoToPhoto", "sourceEntity": "Photo", "destinationEntity": "Photo", "predicate": "TRUEPREDICATE",
           "attributeMappings": {"title": "$source.title", "kind": "\\"photo\\"", "megapixels": "$source.pixels / 1000000"}},
          {"name": "ShelfToShelf", "sourceEntity": "Shelf", "destinationEntity": "Shelf", "predicate": "TRUEPREDICATE",
           "attributeMappings": {"label": "$source.label"},
           "relationshipMappings": {"items": "FUNCTION($manager, \\"destinationInstancesForSourceRelationshipNamed:sourceInstances:\\", \\"items\\", FUNCTION($source, \\"valueForKey:\\", \\"items\\"))" FAVOURITE}}
        ]}
        """

    func testAParentMappingLeavesSubentitiesToTheirOwnMappingAndRelationshipsResolveThroughBoth() throws {
        let scratch = ScratchDirectory()
        let v1 = try ManagedObjectModel(json: Self.source)
        let v2 = try ManagedObjectModel(json: Self.destination)
        let source = try makeSource(scratch, v1)
        let manager = try MigrationManager(
            sourceModel: v1, destinationModel: v2,
            mappingModel: try MappingModel(json: Self.mapping.replacingOccurrences(of: " FAVOURITE", with: "")))
        let report = try manager.migrateStore(from: source, to: scratch.file("out.sqlite"))
        XCTAssertEqual(
            report.mappings.map { $0.sourceInstances }, [3, 2, 1], "ItemToItem does not take the photos a second time")
        let store = try PersistentStore.open(at: scratch.file("out.sqlite"), model: v2)
        defer { store.close() }
        let items = try fetchAll(store, "Item")
        XCTAssertEqual(items.count, 5)
        XCTAssertEqual(
            try fetchAll(store, "Photo").map { try $0.value(forKey: "megapixels") }, [.double(1), .double(2)])
        XCTAssertEqual(Set(try items.map { try $0.value(forKey: "kind") }), [.string("item"), .string("photo")])
        let shelf = try XCTUnwrap(fetchAll(store, "Shelf").first)
        XCTAssertEqual(
            try shelf.value(forKey: "items").elements.count, 5,
            "the relationship resolves through both mappings, sub-entities included")
        for item in items { XCTAssertEqual(try item.value(forKeyPath: "shelf.label"), .string("Top")) }
    }

    func testSeveralInstancesIntoAToOneAreAnErrorNamingTheRelationship() throws {
        let scratch = ScratchDirectory()
        let v1 = try ManagedObjectModel(json: Self.source)
        let v2 = try ManagedObjectModel(json: Self.destination)
        let source = try makeSource(scratch, v1)
        let favourite =
            #", "favourite": "FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"ItemToItem\", $source.items)""#
        let text = Self.mapping.replacingOccurrences(of: " FAVOURITE", with: favourite)
        let manager = try MigrationManager(
            sourceModel: v1, destinationModel: v2, mappingModel: try MappingModel(json: text))
        XCTAssertThrowsError(try manager.migrateStore(from: source, to: scratch.file("out.sqlite"))) { error in
            let e = error as? MigrationError
            XCTAssertEqual(e?.code, .entityMigrationPolicy)
            XCTAssertTrue(
                e?.message.contains("to-one relationship 'Shelf.favourite' cannot take the 3 instances") ?? false,
                "\(error)")
            XCTAssertEqual(e?.path, "$.entityMappings[2].relationshipMappings.favourite")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: scratch.file("out.sqlite")))
    }

    func testEvaluationErrorsNameTheMappingAndProperty() throws {
        let scratch = ScratchDirectory()
        let v1 = try ManagedObjectModel(json: Self.source)
        let v2 = try ManagedObjectModel(json: Self.destination)
        let source = try makeSource(scratch, v1)
        let mapping = try MappingModel(
            json:
                """
                {"entityMappings": [{"name": "ItemToItem", "sourceEntity": "Item", "destinationEntity": "Item", "predicate": "TRUEPREDICATE",
                  "attributeMappings": {"title": "FUNCTION($source.title, \\"noSuchSelector\\")"}}]}
                """)
        let manager = try MigrationManager(sourceModel: v1, destinationModel: v2, mappingModel: mapping)
        XCTAssertThrowsError(try manager.migrateStore(from: source, to: scratch.file("out.sqlite"))) { error in
            let e = error as? MigrationError
            XCTAssertEqual(e?.code, .expressionEvaluation)
            XCTAssertTrue(e?.message.contains("entity mapping 'ItemToItem', property 'title'") ?? false, "\(error)")
            XCTAssertTrue(e?.message.contains("noSuchSelector") ?? false, "\(error)")
            XCTAssertEqual(e?.path, "$.entityMappings[0].attributeMappings.title")
        }
    }
}

extension MigrationInheritanceTests {
    /// Every row of the listed queries, as text with SQLite's storage class, for byte-level comparisons.
    func dump(_ path: String, _ queries: [String]) -> [String] {
        var db: OpaquePointer?
        guard sqlite3_open(path, &db) == SQLITE_OK else { return ["cannot open \(path)"] }
        defer { sqlite3_close(db) }
        var rows: [String] = []
        for sql in queries {
            var statement: OpaquePointer?
            guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK else {
                rows.append("cannot run \(sql)")
                continue
            }
            while sqlite3_step(statement) == SQLITE_ROW {
                rows.append(
                    (0..<sqlite3_column_count(statement)).map { i -> String in
                        let type = sqlite3_column_type(statement, i)
                        return type == SQLITE_NULL
                            ? "NULL" : "\(type):" + String(cString: sqlite3_column_text(statement, i))
                    }.joined(separator: "|"))
            }
            sqlite3_finalize(statement)
        }
        return rows
    }

    func testRelationshipsSetBySQLMatchThePerInstancePath() throws {
        let scratch = ScratchDirectory()
        let v1 = try ManagedObjectModel(json: Self.source)
        let v2 = try ManagedObjectModel(json: Self.destination)
        let path = scratch.file("media.sqlite")
        try makeStore(path, v1) { store in
            let shelves = try (0..<3).map { try insert(store, "Shelf", ["label": .string("S\($0)")]) }
            for i in 0..<40 {
                let item = try insert(store, i % 3 == 0 ? "Photo" : "Item", ["title": .string("i\(i)")])
                if i % 5 != 0 { try item.setValue(.object(shelves[i % 3]), forKey: "shelf") }
            }
        }
        let text = #"""
            {"entityMappings": [
              {"name": "ItemToItem", "sourceEntity": "Item", "destinationEntity": "Item", "predicate": "TRUEPREDICATE",
               "attributeMappings": {"title": "$source.title", "kind": "'item'"},
               "relationshipMappings": {"shelf": "FUNCTION($manager, \"destinationInstancesForSourceRelationshipNamed:sourceInstances:\", \"shelf\", FUNCTION($source, \"valueForKey:\", \"shelf\"))"}},
              {"name": "PhotoToPhoto", "sourceEntity": "Photo", "destinationEntity": "Photo", "predicate": "TRUEPREDICATE",
               "attributeMappings": {"title": "$source.title", "kind": "'photo'"},
               "relationshipMappings": {"shelf": "FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"ShelfToShelf\", $source.shelf)"}},
              {"name": "ShelfToShelf", "sourceEntity": "Shelf", "destinationEntity": "Shelf", "predicate": "label != 'S2'",
               "attributeMappings": {"label": "$source.label"}}
            ]}
            """#
        var dumps: [[String]] = []
        for pushDown in [false, true] {
            let manager = try MigrationManager(
                sourceModel: v1, destinationModel: v2, mappingModel: try MappingModel(json: text))
            manager.pushDownSQL = pushDown
            let out = scratch.file("out-\(pushDown).sqlite")
            let report = try manager.migrateStore(from: path, to: out)
            XCTAssertEqual(report.mappings.map { $0.instancesBySQL }, [pushDown, pushDown, pushDown])
            XCTAssertEqual(report.mappings.map { $0.relationshipsBySQL }, [pushDown, pushDown, false])
            dumps.append(
                dump(
                    out,
                    [
                        "SELECT * FROM ZITEM ORDER BY Z_PK", "SELECT * FROM ZSHELF ORDER BY Z_PK",
                        "SELECT * FROM Z_PRIMARYKEY ORDER BY Z_ENT",
                    ]))
        }
        XCTAssertEqual(dumps[0], dumps[1])
        XCTAssertEqual(dumps[0].count, 40 + 2 + 3)
        // 40 items, 32 with a shelf, 10 of those on shelf S2, which is not migrated: 22 links.
        XCTAssertEqual(
            dump(scratch.file("out-true.sqlite"), ["SELECT COUNT(*) FROM ZITEM WHERE ZSHELF IS NOT NULL"]), ["1:22"])
    }
}
