import XCTest

@testable import CDMigrate

/// An ordered to-many keeps the source's order through a migration, whichever path runs it: per
/// instance, SQL push-down, policies with single-row or batch hooks, inferred mappings, with the
/// owner's entity before or after its members' in the model, for ordered one-to-many (`Z_FOK_`
/// columns) and ordered many-to-many (join tables) alike. The source's lists are written in an
/// order that differs from the members' primary keys.
final class OrderedRelationshipMigrationTests: XCTestCase {
    /// Owner (named `owner`) with an ordered one-to-many `items` and an ordered many-to-many `tags`
    /// whose inverse `lists` is ordered too. "Basket" sorts before "Item", "List" after it.
    static func modelJSON(owner: String, version: Int) -> String {
        let note = version > 1 ? ", {\"name\": \"note\", \"type\": \"string\", \"optional\": true}" : ""
        return """
            {"name": "Lists\(version)", "entities": [
              {"name": "\(owner)", "attributes": [{"name": "name", "type": "string"}\(note)], "relationships": [
                {"name": "items", "destination": "Item", "inverse": "list", "toMany": true, "ordered": true},
                {"name": "tags", "destination": "Tag", "inverse": "lists", "toMany": true, "ordered": true}]},
              {"name": "Item", "attributes": [{"name": "name", "type": "string"}], "relationships": [
                {"name": "list", "destination": "\(owner)", "inverse": "items"}]},
              {"name": "Tag", "attributes": [{"name": "name", "type": "string"}], "relationships": [
                {"name": "lists", "destination": "\(owner)", "inverse": "tags", "toMany": true, "ordered": true}]}
            ]}
            """
    }

    /// The lists of the source store, by owner name: items and tags in order; and each tag's owners.
    static let items = ["L0": ["I2", "I0", "I3", "I1"], "L1": ["I5", "I4"]]
    static let tags = ["L0": ["T2", "T0", "T1"], "L1": ["T1", "T2"]]
    static let lists = ["T0": ["L0"], "T1": ["L1", "L0"], "T2": ["L1", "L0"]]

    var scratch: ScratchDirectory!

    override func setUp() { scratch = ScratchDirectory() }

    func models(owner: String) throws -> (ManagedObjectModel, ManagedObjectModel) {
        (
            try ManagedObjectModel(json: Self.modelJSON(owner: owner, version: 1)),
            try ManagedObjectModel(json: Self.modelJSON(owner: owner, version: 2))
        )
    }

    func makeSource(owner: String, _ model: ManagedObjectModel) throws -> String {
        let path = scratch.file("source-\(owner).sqlite")
        try makeStore(path, model) { store in
            let owners = try (0..<2).map { try insert(store, owner, ["name": .string("L\($0)")]) }
            let items = try (0..<6).map { try insert(store, "Item", ["name": .string("I\($0)")]) }
            let tags = try (0..<3).map { try insert(store, "Tag", ["name": .string("T\($0)")]) }
            let entity = try XCTUnwrap(model.entity(named: owner))
            let itemsRelationship = try XCTUnwrap(entity.relationship(named: "items"))
            let tagsRelationship = try XCTUnwrap(entity.relationship(named: "tags"))
            // L1's tags first, so that each tag's list of owners differs from the owners' keys too.
            for o in [1, 0] {
                let name = "L\(o)"
                try owners[o].add(Self.items[name]!.map { items[Int($0.dropFirst())!] }, to: itemsRelationship)
                try owners[o].add(Self.tags[name]!.map { tags[Int($0.dropFirst())!] }, to: tagsRelationship)
            }
        }
        // The source holds what the test says it does.
        XCTAssertEqual(try lists(path, model, owner: owner).items, Self.items)
        return path
    }

    static func lookUp(_ mapping: String, _ key: String) -> String {
        "FUNCTION($manager, \\\"destinationInstancesForEntityMappingNamed:sourceInstances:\\\", \\\"\(mapping)\\\", \(key))"
    }

    /// Xcode's mapping model: every relationship mapped with its generated expression, on both sides.
    static func mappingJSON(owner: String, membersFirst: Bool, policy: String? = nil) -> String {
        let p = policy.map { ", \"policy\": \"\($0)\"" } ?? ""
        let ownerMapping = """
              {"name": "\(owner)To\(owner)", "sourceEntity": "\(owner)", "destinationEntity": "\(owner)"\(p), "predicate": "TRUEPREDICATE",
               "attributeMappings": {"name": "$source.name"},
               "relationshipMappings": {"items": "\(lookUp("ItemToItem", "$source.items"))", "tags": "\(lookUp("TagToTag", "$source.tags"))"}}
            """
        let itemMapping = """
              {"name": "ItemToItem", "sourceEntity": "Item", "destinationEntity": "Item"\(p), "predicate": "TRUEPREDICATE", "attributeMappings": {"name": "$source.name"},
               "relationshipMappings": {"list": "\(lookUp("\(owner)To\(owner)", "$source.list"))"}}
            """
        let tagMapping = """
              {"name": "TagToTag", "sourceEntity": "Tag", "destinationEntity": "Tag"\(p), "predicate": "TRUEPREDICATE", "attributeMappings": {"name": "$source.name"},
               "relationshipMappings": {"lists": "\(lookUp("\(owner)To\(owner)", "$source.lists"))"}}
            """
        let all = membersFirst ? [itemMapping, tagMapping, ownerMapping] : [ownerMapping, itemMapping, tagMapping]
        return "{\"entityMappings\": [\(all.joined(separator: ",\n"))]}"
    }

    struct Lists: Equatable {
        var items: [String: [String]] = [:]
        var tags: [String: [String]] = [:]
        var lists: [String: [String]] = [:]
    }

    func lists(_ path: String, _ model: ManagedObjectModel, owner: String) throws -> Lists {
        let store = try PersistentStore.open(at: path, model: model, readOnly: true)
        defer { store.close() }
        func names(_ value: Value) throws -> [String] {
            try value.elements.compactMap { try $0.object?.value(forKey: "name").stringValue }
        }
        var result = Lists()
        for o in try fetchAll(store, owner) {
            let name = try XCTUnwrap(o.value(forKey: "name").stringValue)
            result.items[name] = try names(o.value(forKey: "items"))
            result.tags[name] = try names(o.value(forKey: "tags"))
        }
        for t in try fetchAll(store, "Tag") {
            result.lists[try XCTUnwrap(t.value(forKey: "name").stringValue)] = try names(t.value(forKey: "lists"))
        }
        return result
    }

    func checkKeepsOrder(_ path: String, _ model: ManagedObjectModel, owner: String, _ what: String, line: UInt = #line)
        throws
    {
        let got = try lists(path, model, owner: owner)
        XCTAssertEqual(got.items, Self.items, "items, \(what)", line: line)
        XCTAssertEqual(got.tags, Self.tags, "tags, \(what)", line: line)
        XCTAssertEqual(got.lists, Self.lists, "lists, \(what)", line: line)
    }

    /// Xcode's generated expressions on both sides, per instance and with SQL (renumbered keys and
    /// kept keys), owner mapping first or last, owner entity first or last in the model.
    func testGeneratedExpressionsKeepTheSourceOrder() throws {
        for owner in ["List", "Basket"] {
            let (v1, v2) = try models(owner: owner)
            let source = try makeSource(owner: owner, v1)
            for membersFirst in [false, true] {
                let mapping = try MappingModel(json: Self.mappingJSON(owner: owner, membersFirst: membersFirst))
                for (sql, keeps) in [(false, false), (true, false), (true, true)] {
                    let manager = try MigrationManager(sourceModel: v1, destinationModel: v2, mappingModel: mapping)
                    manager.pushDownSQL = sql
                    manager.keepsSourceKeys = keeps
                    let path = scratch.file("\(owner)-\(membersFirst)-\(sql)-\(keeps).sqlite")
                    let report = try manager.migrateStore(from: source, to: path)
                    try checkKeepsOrder(
                        path, v2, owner: owner,
                        "\(owner), members first \(membersFirst), SQL \(sql), kept keys \(keeps)")
                    // The owner's to-manys ran as SQL when allowed (the members' to-one, with an ordering column, runs per instance).
                    XCTAssertEqual(
                        report.mappings.first { $0.entityMappingName == "\(owner)To\(owner)" }?.relationshipsBySQL, sql)
                }
            }
        }
    }

    /// A policy with single-row hooks that calls the defaults (Core Data's `super`).
    final class SingleRow: EntityMigrationPolicy {
        override func createDestinationInstances(
            forSource sInstance: ManagedObject, in mapping: EntityMapping, manager: MigrationManager
        ) throws {
            try super.createDestinationInstances(forSource: sInstance, in: mapping, manager: manager)
        }
        override func createRelationships(
            forDestination dInstance: ManagedObject, in mapping: EntityMapping, manager: MigrationManager
        ) throws {
            try super.createRelationships(forDestination: dInstance, in: mapping, manager: manager)
        }
    }

    /// A policy with the batch hook: Core Data's default for each batch; stage 2 the default.
    final class Batch: EntityMigrationPolicy {
        override var createsDestinationInstancesInBatches: Bool { true }
        override func createDestinationInstances(
            forSourceBatch batch: SourceBatch, in mapping: EntityMapping, manager: MigrationManager
        ) throws {
            try batch.applyDefault()
        }
    }

    /// A policy that changes the order after the default: its order wins.
    final class Reversing: EntityMigrationPolicy {
        override func createRelationships(
            forDestination dInstance: ManagedObject, in mapping: EntityMapping, manager: MigrationManager
        ) throws {
            try super.createRelationships(forDestination: dInstance, in: mapping, manager: manager)
            guard let items = dInstance.entity.relationship(named: "items") else { return }
            let members = try dInstance.value(for: items).elements.compactMap { $0.object }
            try dInstance.setValue(.collection(members.reversed().map { .object($0) }), for: items)
        }
    }

    func testPoliciesWithSingleRowAndBatchHooksKeepTheSourceOrder() throws {
        for owner in ["List", "Basket"] {
            let (v1, v2) = try models(owner: owner)
            let source = try makeSource(owner: owner, v1)
            for membersFirst in [false, true] {
                for (name, factory) in [
                    ("SingleRow", { SingleRow() as EntityMigrationPolicy }),
                    ("Batch", { Batch() as EntityMigrationPolicy }),
                ] {
                    let mapping = try MappingModel(
                        json:
                            Self.mappingJSON(owner: owner, membersFirst: membersFirst, policy: name))
                    let manager = try MigrationManager(sourceModel: v1, destinationModel: v2, mappingModel: mapping)
                    manager.registerPolicy(named: name, factory)
                    let path = scratch.file("\(owner)-\(membersFirst)-\(name).sqlite")
                    _ = try manager.migrateStore(from: source, to: path)
                    try checkKeepsOrder(
                        path, v2, owner: owner, "\(owner), members first \(membersFirst), policy \(name)")
                }
            }
        }
    }

    func testAPolicyThatReordersDecidesTheOrder() throws {
        let (v1, v2) = try models(owner: "List")
        let source = try makeSource(owner: "List", v1)
        for membersFirst in [false, true] {
            let mapping = try MappingModel(
                json:
                    Self.mappingJSON(owner: "List", membersFirst: membersFirst, policy: "Reversing"))
            let manager = try MigrationManager(sourceModel: v1, destinationModel: v2, mappingModel: mapping)
            manager.registerPolicy(named: "Reversing") { Reversing() }
            let path = scratch.file("reversing-\(membersFirst).sqlite")
            _ = try manager.migrateStore(from: source, to: path)
            XCTAssertEqual(
                try lists(path, v2, owner: "List").items, Self.items.mapValues { Array($0.reversed()) },
                "members first \(membersFirst)")
        }
    }

    /// Core Data's inferred mapping (`destinationInstancesForSourceRelationshipNamed:sourceInstances:`
    /// on both sides), per instance and with SQL.
    func testInferredMappingsKeepTheSourceOrder() throws {
        for owner in ["List", "Basket"] {
            let (v1, v2) = try models(owner: owner)
            let source = try makeSource(owner: owner, v1)
            let mapping = try MappingModel.inferred(from: v1, to: v2)
            XCTAssertTrue(
                mapping.entityMappings.contains {
                    $0.relationshipMappings.contains {
                        $0.valueExpressionText?.contains(
                            "destinationInstancesForSourceRelationshipNamed:sourceInstances:") == true
                    }
                })
            for sql in [false, true] {
                let manager = try MigrationManager(sourceModel: v1, destinationModel: v2, mappingModel: mapping)
                manager.pushDownSQL = sql
                let path = scratch.file("inferred-\(owner)-\(sql).sqlite")
                _ = try manager.migrateStore(from: source, to: path)
                try checkKeepsOrder(path, v2, owner: owner, "inferred, \(owner), SQL \(sql)")
            }
        }
    }
}
