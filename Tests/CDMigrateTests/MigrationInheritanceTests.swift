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
            for i in 0..<2 { try insert(store, "Photo", ["title": .string("photo\(i)"), "pixels": .integer(Int64(i + 1) * 1_000_000), "shelf": .object(shelf)]) }
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
        let v1 = try ModelReader.model(fromJSON: Self.source), v2 = try ModelReader.model(fromJSON: Self.destination)
        let source = try makeSource(scratch, v1)
        let manager = try MigrationManager(sourceModel: v1, destinationModel: v2, mappingModel: try MappingModel.fromJSON(Self.mapping.replacingOccurrences(of: " FAVOURITE", with: "")))
        let report = try manager.migrateStore(from: source, to: scratch.file("out.sqlite"))
        XCTAssertEqual(report.mappings.map { $0.sourceInstances }, [3, 2, 1], "ItemToItem does not take the photos a second time")
        let store = try PersistentStore.open(at: scratch.file("out.sqlite"), model: v2)
        defer { store.close() }
        let items = try fetchAll(store, "Item")
        XCTAssertEqual(items.count, 5)
        XCTAssertEqual(try fetchAll(store, "Photo").map { try $0.value(forKey: "megapixels") }, [.double(1), .double(2)])
        XCTAssertEqual(Set(try items.map { try $0.value(forKey: "kind") }), [.string("item"), .string("photo")])
        let shelf = try XCTUnwrap(fetchAll(store, "Shelf").first)
        XCTAssertEqual(try shelf.value(forKey: "items").elements.count, 5, "the relationship resolves through both mappings, sub-entities included")
        for item in items { XCTAssertEqual(try item.value(forKeyPath: "shelf.label"), .string("Top")) }
    }

    func testSeveralInstancesIntoAToOneAreAnErrorNamingTheRelationship() throws {
        let scratch = ScratchDirectory()
        let v1 = try ModelReader.model(fromJSON: Self.source), v2 = try ModelReader.model(fromJSON: Self.destination)
        let source = try makeSource(scratch, v1)
        let favourite = #", "favourite": "FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"ItemToItem\", $source.items)""#
        let text = Self.mapping.replacingOccurrences(of: " FAVOURITE", with: favourite)
        let manager = try MigrationManager(sourceModel: v1, destinationModel: v2, mappingModel: try MappingModel.fromJSON(text))
        XCTAssertThrowsError(try manager.migrateStore(from: source, to: scratch.file("out.sqlite"))) { error in
            let e = error as? MigrationError
            XCTAssertEqual(e?.code, .entityMigrationPolicy)
            XCTAssertTrue(e?.message.contains("to-one relationship 'Shelf.favourite' cannot take the 3 instances") ?? false, "\(error)")
            XCTAssertEqual(e?.path, "$.entityMappings[2].relationshipMappings.favourite")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: scratch.file("out.sqlite")))
    }

    func testEvaluationErrorsNameTheMappingAndProperty() throws {
        let scratch = ScratchDirectory()
        let v1 = try ModelReader.model(fromJSON: Self.source), v2 = try ModelReader.model(fromJSON: Self.destination)
        let source = try makeSource(scratch, v1)
        let mapping = try MappingModel.fromJSON("""
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
