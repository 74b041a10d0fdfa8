import XCTest

@testable import CDMigrate

final class MigrationManagerTests: XCTestCase {
    static let v1 = """
        {"name": "Notes", "versionIdentifier": "1", "entities": [
          {"name": "Note", "attributes": [
             {"name": "title", "type": "string", "optional": false},
             {"name": "body", "type": "string"},
             {"name": "created", "type": "date"},
             {"name": "category", "type": "string"}],
           "relationships": [{"name": "tags", "destination": "Tag", "inverse": "notes", "toMany": true},
                             {"name": "folder", "destination": "Folder", "inverse": "notes"}]},
          {"name": "Tag", "attributes": [{"name": "label", "type": "string"}],
           "relationships": [{"name": "notes", "destination": "Note", "inverse": "tags", "toMany": true}]},
          {"name": "Folder", "attributes": [{"name": "name", "type": "string"}],
           "relationships": [{"name": "notes", "destination": "Note", "inverse": "folder", "toMany": true, "ordered": true}]}
        ]}
        """
    static let v2 = """
        {"name": "Notes", "versionIdentifier": "2", "entities": [
          {"name": "Note", "attributes": [
             {"name": "title", "type": "string", "optional": false},
             {"name": "text", "type": "string"},
             {"name": "shout", "type": "string"},
             {"name": "created1970", "type": "double"},
             {"name": "priority", "type": "integer16", "default": 3}],
           "relationships": [{"name": "tags", "destination": "Tag", "inverse": "notes", "toMany": true},
                             {"name": "folder", "destination": "Folder", "inverse": "notes"},
                             {"name": "category", "destination": "Category", "inverse": "notes"}]},
          {"name": "Tag", "attributes": [{"name": "name", "type": "string"}],
           "relationships": [{"name": "notes", "destination": "Note", "inverse": "tags", "toMany": true}]},
          {"name": "Folder", "attributes": [{"name": "name", "type": "string"}],
           "relationships": [{"name": "notes", "destination": "Note", "inverse": "folder", "toMany": true, "ordered": true}]},
          {"name": "Category", "attributes": [{"name": "name", "type": "string", "optional": false}],
           "relationships": [{"name": "notes", "destination": "Note", "inverse": "category", "toMany": true}]}
        ]}
        """
    static let mapping = """
        {"name": "v1-to-v2", "entityMappings": [
          {"name": "NoteToNote", "type": "transform", "sourceEntity": "Note", "destinationEntity": "Note",
           "sourceExpression": "FETCH(FUNCTION($manager, \\"fetchRequestForSourceEntityNamed:predicateString:\\", \\"Note\\", \\"TRUEPREDICATE\\"), $manager.sourceContext, NO)",
           "attributeMappings": {
             "title": "$source.title",
             "text": "FUNCTION($source, \\"valueForKey:\\", \\"body\\")",
             "shout": "FUNCTION($source.title, \\"uppercaseString\\")",
             "created1970": "FUNCTION($source.created, \\"timeIntervalSince1970\\")"},
           "relationshipMappings": {
             "tags": "FUNCTION($manager, \\"destinationInstancesForSourceRelationshipNamed:sourceInstances:\\", \\"tags\\", FUNCTION($source, \\"valueForKey:\\", \\"tags\\"))"}},
          {"name": "TagToTag", "sourceEntity": "Tag", "destinationEntity": "Tag", "predicate": "TRUEPREDICATE",
           "attributeMappings": {"name": "$source.label"},
           "relationshipMappings": {"notes": "FUNCTION($manager, \\"destinationInstancesForEntityMappingNamed:sourceInstances:\\", \\"NoteToNote\\", $source.notes)"}},
          {"name": "FolderToFolder", "sourceEntity": "Folder", "destinationEntity": "Folder", "predicate": "TRUEPREDICATE",
           "attributeMappings": {"name": "$source.name"},
           "relationshipMappings": {"notes": "FUNCTION($manager, \\"destinationInstancesForEntityMappingNamed:sourceInstances:\\", \\"NoteToNote\\", $source.notes)"}}
        ]}
        """

    var scratch: ScratchDirectory!
    var source: ManagedObjectModel!
    var destination: ManagedObjectModel!

    override func setUpWithError() throws {
        scratch = ScratchDirectory()
        source = try ManagedObjectModel(json: Self.v1)
        destination = try ManagedObjectModel(json: Self.v2)
    }

    /// 30 notes, 4 tags (note i has tags i%4 and (i+1)%4), 3 folders (ordered, notes in reverse order of creation).
    func makeSource(notes: Int = 30) throws -> String {
        let path = scratch.file("source.sqlite")
        try makeStore(path, source) { store in
            let tags = try (0..<4).map { try insert(store, "Tag", ["label": .string("tag\($0)")]) }
            let folders = try (0..<3).map { try insert(store, "Folder", ["name": .string("folder\($0)")]) }
            var created: [ManagedObject] = []
            for i in 0..<notes {
                let note = try insert(
                    store, "Note",
                    [
                        "title": .string("Note \(i)"), "body": i % 5 == 0 ? .null : .string("Body \(i)"),
                        "created": .date(Double(i) * 86400), "category": .string(["home", "work", "misc"][i % 3]),
                    ])
                try note.add([tags[i % 4], tags[(i + 1) % 4]], to: note.entity.relationship(named: "tags")!)
                created.append(note)
            }
            for note in created.reversed() {
                let i = Int((try note.value(forKey: "title")).stringValue!.split(separator: " ")[1])!
                try folders[i % 3].add([note], to: folders[i % 3].entity.relationship(named: "notes")!)
            }
        }
        return path
    }

    func testDefaultPolicyCopiesAttributesAndRepointsRelationships() throws {
        let sourcePath = try makeSource()
        let before = fileBytes(sourcePath)
        let manager = try MigrationManager(
            sourceModel: source, destinationModel: destination, mappingModel: try MappingModel(json: Self.mapping))
        let destinationPath = scratch.file("destination.sqlite")
        let report = try manager.migrateStore(from: sourcePath, to: destinationPath)
        XCTAssertEqual(fileBytes(sourcePath), before, "the source is never modified")
        XCTAssertEqual(
            try FileManager.default.contentsOfDirectory(atPath: scratch.path).filter { $0.contains(".cdmigrate-") }, [],
            "no temporary or lock file is left")

        let store = try PersistentStore.open(at: destinationPath, model: destination)
        defer { store.close() }
        let notes = try fetchAll(store, "Note")
        XCTAssertEqual(notes.count, 30)
        for note in notes {
            let title = try note.value(forKey: "title").stringValue ?? ""
            let i = Int(title.split(separator: " ").last ?? "") ?? -1
            XCTAssertEqual(try note.value(forKey: "text"), i % 5 == 0 ? .null : .string("Body \(i)"))
            XCTAssertEqual(try note.value(forKey: "shout"), .string(title.uppercased()))
            XCTAssertEqual(try note.value(forKey: "created1970"), .double(Double(i) * 86400 + 978_307_200))
            XCTAssertEqual(try note.value(forKey: "priority"), .integer(3), "unmapped attributes keep their default")
            let tagNames = Set(
                try note.value(forKey: "tags").elements.compactMap { try $0.object?.value(forKey: "name").stringValue })
            XCTAssertEqual(tagNames, ["tag\(i % 4)", "tag\((i + 1) % 4)"])
            XCTAssertEqual(try note.value(forKeyPath: "folder.name"), .string("folder\(i % 3)"))
            XCTAssertEqual(try note.value(forKey: "category"), .null)
        }
        // The ordered relationship keeps the source's order (reverse creation).
        for folder in try fetchAll(store, "Folder") {
            let titles = try folder.value(forKey: "notes").elements.compactMap {
                try $0.object?.value(forKey: "title").stringValue
            }
            let numbers = titles.compactMap { Int($0.split(separator: " ").last ?? "") }
            // Only Folder.notes is mapped (not Note.folder, which would append in note order), so the
            // ordered relationship keeps the source's order: reverse creation.
            XCTAssertEqual(numbers, numbers.sorted(by: >), "ordered to-many keeps the source order")
            XCTAssertEqual(numbers.count, 10)
        }
        XCTAssertEqual(report.mappings.map { $0.sourceInstances }, [30, 4, 3])
        XCTAssertEqual(report.mappings.map { $0.associations }, [30, 4, 3])
        XCTAssertTrue(report.untakenSourceInstances.isEmpty)
    }

    final class RecordingPolicy: EntityMigrationPolicy {
        static var log: [String] = []
        override func begin(_ mapping: EntityMapping, manager: MigrationManager) throws {
            Self.log.append("begin \(mapping.name)")
        }
        override func createDestinationInstances(
            forSource sInstance: ManagedObject, in mapping: EntityMapping, manager: MigrationManager
        ) throws {
            Self.log.append("create \(mapping.name)")
            try super.createDestinationInstances(forSource: sInstance, in: mapping, manager: manager)
        }
        override func endInstanceCreation(forMapping mapping: EntityMapping, manager: MigrationManager) throws {
            Self.log.append("endInstanceCreation \(mapping.name)")
        }
        override func createRelationships(
            forDestination dInstance: ManagedObject, in mapping: EntityMapping, manager: MigrationManager
        ) throws {
            Self.log.append("relationships \(mapping.name)")
            try super.createRelationships(forDestination: dInstance, in: mapping, manager: manager)
        }
        override func endRelationshipCreation(forMapping mapping: EntityMapping, manager: MigrationManager) throws {
            Self.log.append("endRelationshipCreation \(mapping.name)")
        }
        override func performCustomValidation(forMapping mapping: EntityMapping, manager: MigrationManager) throws {
            Self.log.append("validate \(mapping.name)")
        }
        override func end(_ mapping: EntityMapping, manager: MigrationManager) throws {
            Self.log.append("end \(mapping.name)")
        }
    }

    func testHooksRunInCoreDataOrderWithOnePolicyObjectPerMapping() throws {
        let sourcePath = try makeSource(notes: 2)
        let text = Self.mapping.replacingOccurrences(
            of: "\"type\": \"transform\",", with: "\"type\": \"custom\", \"policy\": \"Recording\","
        )
        .replacingOccurrences(
            of: "\"name\": \"FolderToFolder\",", with: "\"name\": \"FolderToFolder\", \"policy\": \"Recording\",")
        let manager = try MigrationManager(
            sourceModel: source, destinationModel: destination, mappingModel: try MappingModel(json: text))
        var made = 0
        manager.registerPolicy(named: "Recording") {
            made += 1
            return RecordingPolicy()
        }
        RecordingPolicy.log = []
        try manager.migrateStore(from: sourcePath, to: scratch.file("d.sqlite"))
        XCTAssertEqual(made, 2, "one policy object per entity mapping, for all three stages")
        XCTAssertEqual(
            RecordingPolicy.log,
            [
                "begin NoteToNote", "create NoteToNote", "create NoteToNote", "endInstanceCreation NoteToNote",
                "begin FolderToFolder", "create FolderToFolder", "create FolderToFolder", "create FolderToFolder",
                "endInstanceCreation FolderToFolder",
                "relationships NoteToNote", "relationships NoteToNote", "endRelationshipCreation NoteToNote",
                "relationships FolderToFolder", "relationships FolderToFolder", "relationships FolderToFolder",
                "endRelationshipCreation FolderToFolder",
                "validate NoteToNote", "end NoteToNote", "validate FolderToFolder", "end FolderToFolder",
            ])
    }

    /// A policy written with Core Data's spelling of the first hook, as ported from an app.
    final class CoreDataSpellingPolicy: EntityMigrationPolicy {
        static var begun: [String] = []
        override func begin(_ mapping: EntityMapping, with manager: MigrationManager) throws {
            Self.begun.append(mapping.name)
        }
    }

    func testBeginWithCoreDataLabelStillRuns() throws {
        let sourcePath = try makeSource(notes: 1)
        let text = Self.mapping.replacingOccurrences(
            of: "\"type\": \"transform\",", with: "\"type\": \"custom\", \"policy\": \"Ported\",")
        let manager = try MigrationManager(
            sourceModel: source, destinationModel: destination, mappingModel: try MappingModel(json: text))
        manager.registerPolicy(named: "Ported") { CoreDataSpellingPolicy() }
        CoreDataSpellingPolicy.begun = []
        try manager.migrateStore(from: sourcePath, to: scratch.file("d.sqlite"))
        XCTAssertEqual(CoreDataSpellingPolicy.begun, ["NoteToNote"])
    }
}
