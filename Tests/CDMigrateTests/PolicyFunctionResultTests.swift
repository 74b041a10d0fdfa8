import Foundation
import XCTest

@testable import CDMigrate

/// Policy methods called from relationship mappings: `$manager` as an argument (Core Data passes
/// the NSMigrationManager) and every kind of value a relationship mapping takes back — one
/// instance, none, an ordered or unordered collection, an empty one.
final class PolicyFunctionResultTests: XCTestCase {
    /// Folders in a tree (ordered children), with an unordered `related`, a to-one `best` and
    /// an unordered `also`.
    static let model =
        #"{"name": "M", "versionIdentifier": "%@", "entities": [{"name": "Folder", "attributes": [{"name": "name", "type": "string"}], "relationships": [{"name": "children", "destination": "Folder", "inverse": "parent", "toMany": true, "ordered": true}, {"name": "parent", "destination": "Folder", "inverse": "children"}, {"name": "related", "destination": "Folder", "inverse": "relatedBy", "toMany": true}, {"name": "relatedBy", "destination": "Folder", "inverse": "related", "toMany": true}, {"name": "best", "destination": "Folder"}, {"name": "also", "destination": "Folder", "toMany": true}]}]}"#

    static func mapping(_ relationships: String) -> String {
        #"{"entityMappings": [{"name": "FolderToFolder", "sourceEntity": "Folder", "destinationEntity": "Folder", "predicate": "TRUEPREDICATE", "policy": "TreePolicy", "attributeMappings": {"name": "$source.name"}, "relationshipMappings": {\#(relationships)}}]}"#
    }

    final class TreePolicy: EntityMigrationPolicy {
        var managerArguments = 0
        override func perform(selector: String, arguments: [Value], manager: MigrationManager) throws -> Value? {
            func destinations(_ value: Value) throws -> [Value] {
                try manager.destinationInstances(
                    forEntityMappingName: "FolderToFolder", sourceInstances: value.elements.compactMap { $0.object }
                ).map { .object($0) }
            }
            switch selector {
            case "childrenFor:manager:":
                guard case .migrationManager = arguments[1] else {
                    throw MigrationError(.entityMigrationPolicy, "no manager: \(arguments[1])")
                }
                managerArguments += 1
                return .collection(try destinations(arguments[0]).reversed())
            case "nothingFor:":
                return .collection([])
            case "firstOf:manager:":
                return try destinations(arguments[0]).first ?? .null
            default:
                return nil
            }
        }
    }

    func testPolicyMethodsTakeTheManagerAndReturnEveryKindOfRelationshipValue() throws {
        let scratch = ScratchDirectory()
        let v1 = try ManagedObjectModel(json: Self.model.replacingOccurrences(of: "%@", with: "1"))
        let v2 = try ManagedObjectModel(json: Self.model.replacingOccurrences(of: "%@", with: "2"))
        try makeStore(scratch.file("v1.sqlite"), v1) { store in
            let root = try insert(store, "Folder", ["name": "root"])
            let kids = try ["a", "b", "c"].map { try insert(store, "Folder", ["name": .string($0)]) }
            try root.setValue(.collection(kids.map { .object($0) }), forKey: "children")
            try root.setValue(.collection([.object(kids[0])]), forKey: "related")
        }
        let mapping = try MappingModel(
            json:
                Self.mapping(
                    #"""
                    "children": "FUNCTION($entityPolicy, \"childrenFor:manager:\", $source.children, $manager)",
                    "related": "FUNCTION($entityPolicy, \"nothingFor:\", $source.related)",
                    "best": "FUNCTION($entityPolicy, \"firstOf:manager:\", $source.children, $manager)",
                    "also": "FUNCTION($entityPolicy, \"firstOf:manager:\", $source.children, $manager)"
                    """#))
        let manager = try MigrationManager(sourceModel: v1, destinationModel: v2, mappingModel: mapping)
        let policy = TreePolicy()
        manager.registerPolicy(named: "TreePolicy") { policy }
        try manager.migrateStore(from: scratch.file("v1.sqlite"), to: scratch.file("v2.sqlite"))
        XCTAssertEqual(policy.managerArguments, 4, "once per folder")
        let store = try PersistentStore.open(at: scratch.file("v2.sqlite"), model: v2)
        defer { store.close() }
        let folders = Dictionary(
            uniqueKeysWithValues: try fetchAll(store, "Folder").map {
                (try $0.value(forKey: "name").stringValue ?? "?", $0)
            })
        let root = try XCTUnwrap(folders["root"])
        func names(_ value: Value) throws -> [String] {
            try value.elements.compactMap { try $0.object?.value(forKey: "name").stringValue }
        }
        XCTAssertEqual(
            try names(root.value(forKey: "children")), ["c", "b", "a"], "an ordered collection keeps the order returned"
        )
        XCTAssertEqual(try names(root.value(forKey: "related")), [], "an empty collection")
        XCTAssertEqual(try root.value(forKey: "best").object?.value(forKey: "name"), "a", "one instance for a to-one")
        XCTAssertEqual(try names(root.value(forKey: "also")), ["a"], "one instance for a to-many")
        XCTAssertNil(try folders["a"]?.value(forKey: "best").object, "none")
        XCTAssertEqual(try folders["a"]?.value(forKey: "parent").object?.value(forKey: "name"), "root")
    }

    func testTheManagerValueEqualsItselfOnly() {
        XCTAssertEqual(Value.migrationManager, .migrationManager)
        XCTAssertNotEqual(Value.migrationManager, .null)
        XCTAssertEqual(Set([Value.migrationManager, .migrationManager]).count, 1)
        XCTAssertEqual(Value.migrationManager.typeName, "migration manager")
    }

    func testTheManagerIsNoAttributeValue() throws {
        let scratch = ScratchDirectory()
        let v1 = try ManagedObjectModel(json: Self.model.replacingOccurrences(of: "%@", with: "1"))
        try makeStore(scratch.file("v1.sqlite"), v1) { store in try insert(store, "Folder", ["name": "x"]) }
        let mapping = try MappingModel(
            json:
                #"{"entityMappings": [{"name": "FolderToFolder", "sourceEntity": "Folder", "destinationEntity": "Folder", "predicate": "TRUEPREDICATE", "attributeMappings": {"name": "$manager"}}]}"#
        )
        let manager = try MigrationManager(sourceModel: v1, destinationModel: v1, mappingModel: mapping)
        XCTAssertThrowsError(try manager.migrateStore(from: scratch.file("v1.sqlite"), to: scratch.file("v2.sqlite"))) {
            error in
            XCTAssertTrue("\(error)".contains("migration manager"), "\(error)")
        }
    }
}
