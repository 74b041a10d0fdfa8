import XCTest

@testable import CDMigrate

/// What a policy sees of its migration, as Core Data's policies do: the manager's source and
/// destination models (version identifiers, entities by name), its mapping model and current
/// entity mapping, and property mappings whose value expression the policy may change before
/// calling `super`, for the rest of that pass only.
final class PolicyMigrationViewTests: XCTestCase {
    static let v1 = """
        {"name": "Notes", "versionIdentifier": "1", "entities": [
          {"name": "Note", "attributes": [{"name": "title", "type": "string"}, {"name": "body", "type": "string", "optional": true}]}
        ]}
        """
    static let v2 = v1.replacingOccurrences(of: "\"versionIdentifier\": \"1\"", with: "\"versionIdentifier\": \"2\"")

    static let mappingJSON = """
        {"name": "Notes1to2", "entityMappings": [
          {"name": "NoteToNote", "type": "custom", "sourceEntity": "Note", "destinationEntity": "Note", "predicate": "TRUEPREDICATE",
           "entityMigrationPolicyClassName": "VersionedNotePolicy", "userInfo": {"rule": "title"},
           "attributeMappings": [{"name": "title", "valueExpression": "$source.title", "userInfo": {"limit": 3}},
                                 {"name": "body", "valueExpression": "$source.body"}]}
        ]}
        """

    /// Branches on the source model's version, reads the entity's attributes, and changes the
    /// title mapping in `begin` (when `rewrite` says so) before the default runs.
    final class VersionedNotePolicy: EntityMigrationPolicy {
        let rewrite: Bool
        var seen: [String] = []
        init(rewrite: Bool) { self.rewrite = rewrite }

        override func begin(_ mapping: EntityMapping, manager: MigrationManager) throws {
            seen.append(
                "versions \(manager.sourceModel.versionIdentifiers.sorted()) → \(manager.destinationModel.versionIdentifiers.sorted())"
            )
            seen.append(
                "attributes \(manager.sourceModel.entitiesByName["Note"]?.attributes.map { $0.name }.sorted() ?? [])")
            seen.append(
                "mapping model \(manager.mappingModel.name ?? "-") current \(manager.currentEntityMapping?.name ?? "-") \(manager.currentEntityMapping === mapping)"
            )
            seen.append(
                "mapping \(mapping.mappingType) \(mapping.sourceEntityName ?? "-")→\(mapping.destinationEntityName ?? "-") rule \(mapping.userInfo["rule"].map(MappingUserInfo.text) ?? "-")"
            )
            let title = try XCTUnwrap(mapping.attributeMapping(named: "title"))
            seen.append(
                "title \(title.valueExpressionText ?? "-") limit \(title.userInfo["limit"].map(MappingUserInfo.text) ?? "-")"
            )
            if rewrite && manager.sourceModel.versionIdentifiers.contains("1") {
                try title.setValueExpression("FUNCTION($source.title, \"uppercaseString\")")
            }
        }
    }

    var scratch: ScratchDirectory!
    override func setUp() { scratch = ScratchDirectory() }

    func makeSource() throws -> (ManagedObjectModel, ManagedObjectModel, String) {
        let source = try ManagedObjectModel(json: Self.v1)
        let destination = try ManagedObjectModel(json: Self.v2)
        let path = scratch.file("notes.sqlite")
        try makeStore(path, source) { store in
            for title in ["alpha", "beta", "gamma"] {
                try insert(store, "Note", ["title": .string(title), "body": .string(title + "!")])
            }
        }
        return (source, destination, path)
    }

    func titles(_ path: String, _ model: ManagedObjectModel) throws -> [String] {
        let store = try PersistentStore.open(at: path, model: model)
        defer { store.close() }
        return try fetchAll(store, "Note").compactMap { try $0.value(forKey: "title").stringValue }.sorted()
    }

    func testAPolicyBranchingOnTheSourceVersionChangesAPropertyMappingForEveryInstanceOfThatRunOnly() throws {
        let (source, destination, path) = try makeSource()
        let mappingModel = try MappingModel(json: Self.mappingJSON)
        let manager = try MigrationManager(
            sourceModel: source, destinationModel: destination, mappingModel: mappingModel)
        var policies: [VersionedNotePolicy] = []
        var rewrite = true
        manager.registerPolicy(named: "VersionedNotePolicy") {
            let policy = VersionedNotePolicy(rewrite: rewrite)
            policies.append(policy)
            return policy
        }
        try manager.migrateStore(from: path, to: scratch.file("first.sqlite"))
        XCTAssertEqual(try titles(scratch.file("first.sqlite"), destination), ["ALPHA", "BETA", "GAMMA"])
        XCTAssertEqual(
            policies[0].seen,
            [
                "versions [\"1\"] → [\"2\"]",
                "attributes [\"body\", \"title\"]",
                "mapping model Notes1to2 current NoteToNote true",
                "mapping custom Note→Note rule title",
                "title $source.title limit 3",
            ])

        // The change lasted for that run only: the manager's mapping, and the mapping model it was given, are as declared.
        XCTAssertEqual(
            manager.mappingModel.entityMapping(named: "NoteToNote")?.attributeMapping(named: "title")?
                .valueExpressionText, "$source.title")
        XCTAssertEqual(
            mappingModel.entityMapping(named: "NoteToNote")?.attributeMapping(named: "title")?.valueExpressionText,
            "$source.title")
        rewrite = false
        try manager.migrateStore(from: path, to: scratch.file("second.sqlite"))
        XCTAssertEqual(policies[1].seen.last, "title $source.title limit 3")
        XCTAssertEqual(try titles(scratch.file("second.sqlite"), destination), ["alpha", "beta", "gamma"])
    }

    func testAnExpressionChangedAfterTheFirstInstanceAppliesToTheInstancesAfterIt() throws {
        final class MidwayPolicy: EntityMigrationPolicy {
            override func createDestinationInstances(
                forSource sInstance: ManagedObject, in mapping: EntityMapping, manager: MigrationManager
            ) throws {
                try super.createDestinationInstances(forSource: sInstance, in: mapping, manager: manager)
                // From the second instance on, every title is a constant.
                mapping.attributeMapping(named: "title")?.valueExpression = .constant(.string("later"))
            }
        }
        let (source, destination, path) = try makeSource()
        let manager = try MigrationManager(
            sourceModel: source, destinationModel: destination,
            mappingModel: try MappingModel(json: Self.mappingJSON))
        manager.registerPolicy(named: "VersionedNotePolicy") { MidwayPolicy() }
        try manager.migrateStore(from: path, to: scratch.file("out.sqlite"))
        XCTAssertEqual(try titles(scratch.file("out.sqlite"), destination), ["alpha", "later", "later"])
        XCTAssertEqual(
            manager.mappingModel.entityMapping(named: "NoteToNote")?.attributeMapping(named: "title")?
                .valueExpressionText, "$source.title")
    }

    func testAPolicyChangingAnotherMappingOfItsPassReachesTheSQLPathAndNotTheNextPass() throws {
        final class RetitlingPolicy: EntityMigrationPolicy {
            override func begin(_ mapping: EntityMapping, manager: MigrationManager) throws {
                guard manager.currentPass == 0 else { return }
                try manager.mappingModel.entityMapping(named: "OtherNotes")?.attributeMapping(named: "title")?
                    .setValueExpression("$source.body")
            }
        }
        let (source, destination, path) = try makeSource()
        let passJSON = """
            {"name": "Split", "entityMappings": [
              {"name": "FirstNotes", "sourceEntity": "Note", "destinationEntity": "Note", "predicate": "title == 'alpha'",
               "entityMigrationPolicyClassName": "RetitlingPolicy", "attributeMappings": {"title": "$source.title"}},
              {"name": "OtherNotes", "sourceEntity": "Note", "destinationEntity": "Note", "predicate": "title == 'beta'",
               "attributeMappings": {"title": "$source.title"}}
            ]}
            """
        // The same mapping model runs as two passes: what the first pass's policy changed, the second does not see.
        let model = try MappingModel(json: passJSON)
        let manager = try MigrationManager(
            sourceModel: source, destinationModel: destination, mappingModels: [model, model])
        manager.registerPolicy(named: "RetitlingPolicy") { RetitlingPolicy() }
        let report = try manager.migrateStore(from: path, to: scratch.file("out.sqlite"))
        XCTAssertEqual(try titles(scratch.file("out.sqlite"), destination), ["alpha", "alpha", "beta", "beta!"])
        XCTAssertEqual(
            report.mappings.filter { $0.entityMappingName == "OtherNotes" }.map { $0.instancesBySQL }, [true, true])
    }

    func testARelationshipMappingChangedInBeginAppliesToTheRelationshipsStageOfThatRunOnly() throws {
        final class DetachingPolicy: EntityMigrationPolicy {
            var detach = true
            override func begin(_ mapping: EntityMapping, manager: MigrationManager) throws {
                if detach {
                    try manager.mappingModel.entityMapping(named: "NoteToNote")?.relationshipMapping(named: "folder")?
                        .setValueExpression(nil)
                }
            }
        }
        let json = """
            {"name": "Notes", "versionIdentifier": "%@", "entities": [
              {"name": "Note", "attributes": [{"name": "title", "type": "string"}],
               "relationships": [{"name": "folder", "destination": "Folder", "inverse": "notes", "toMany": false}]},
              {"name": "Folder", "attributes": [{"name": "name", "type": "string"}],
               "relationships": [{"name": "notes", "destination": "Note", "inverse": "folder", "toMany": true}]}]}
            """
        let source = try ManagedObjectModel(json: json.replacingOccurrences(of: "%@", with: "1"))
        let destination = try ManagedObjectModel(json: json.replacingOccurrences(of: "%@", with: "2"))
        let mapping = try MappingModel(
            json:
                """
                {"entityMappings": [
                  {"name": "FolderToFolder", "sourceEntity": "Folder", "destinationEntity": "Folder", "predicate": "TRUEPREDICATE",
                   "entityMigrationPolicyClassName": "DetachingPolicy", "attributeMappings": {"name": "$source.name"}},
                  {"name": "NoteToNote", "sourceEntity": "Note", "destinationEntity": "Note", "predicate": "TRUEPREDICATE",
                   "attributeMappings": {"title": "$source.title"},
                   "relationshipMappings": {"folder": "FUNCTION($manager, \\"destinationInstancesForEntityMappingNamed:sourceInstances:\\", \\"FolderToFolder\\", $source.folder)"}}
                ]}
                """)
        let path = scratch.file("folders.sqlite")
        try makeStore(path, source) { store in
            let inbox = try insert(store, "Folder", ["name": .string("Inbox")])
            for title in ["a", "b"] {
                try insert(store, "Note", ["title": .string(title)]).setValue(.object(inbox), forKey: "folder")
            }
        }
        let manager = try MigrationManager(sourceModel: source, destinationModel: destination, mappingModel: mapping)
        let policy = DetachingPolicy()
        manager.registerPolicy(named: "DetachingPolicy") { policy }
        func folders(_ name: String) throws -> [String] {
            let store = try PersistentStore.open(at: scratch.file(name), model: destination)
            defer { store.close() }
            return try fetchAll(store, "Note").map { note in
                guard case .object(let folder)? = try? note.value(forKey: "folder") else { return "-" }
                return try folder.value(forKey: "name").stringValue ?? "?"
            }
        }
        try manager.migrateStore(from: path, to: scratch.file("detached.sqlite"))
        XCTAssertEqual(try folders("detached.sqlite"), ["-", "-"])
        policy.detach = false
        try manager.migrateStore(from: path, to: scratch.file("attached.sqlite"))
        XCTAssertEqual(try folders("attached.sqlite"), ["Inbox", "Inbox"])
    }

    func testAnExpressionThatDoesNotParseIsRefusedAndTheMappingKeepsItsOwn() throws {
        let source = try ManagedObjectModel(json: Self.v1)
        let destination = try ManagedObjectModel(json: Self.v2)
        let manager = try MigrationManager(
            sourceModel: source, destinationModel: destination,
            mappingModel: try MappingModel(json: Self.mappingJSON))
        let title = try XCTUnwrap(
            manager.mappingModel.entityMapping(named: "NoteToNote")?.attributeMapping(named: "title"))
        XCTAssertThrowsError(try title.setValueExpression("$source.title +")) { error in
            let error = error as? MigrationError
            XCTAssertEqual(error?.code, .expressionSyntax)
            XCTAssertTrue(error?.message.contains("property mapping 'title'") == true, "\(String(describing: error))")
        }
        XCTAssertEqual(title.valueExpressionText, "$source.title")
        XCTAssertEqual(source.versionIdentifiers, ["1"])
        XCTAssertEqual(
            try ManagedObjectModel(
                json: Self.v1.replacingOccurrences(of: "\"versionIdentifier\": \"1\", ", with: "")
            ).versionIdentifiers, [])
    }
}
