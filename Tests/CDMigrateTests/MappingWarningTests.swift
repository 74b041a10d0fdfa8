import XCTest

@testable import CDMigrate

/// Warnings for silent traps, before a run (`MigrationManager.warnings`, the `validate` path) and in
/// the report after one.
final class MappingWarningTests: XCTestCase {
    static let v1 = """
        {"name": "Notes", "versionIdentifier": "1", "entities": [
          {"name": "Note", "attributes": [{"name": "title", "type": "string"}, {"name": "body", "type": "string"},
                                          {"name": "scratch", "type": "string", "transient": true}],
           "relationships": [{"name": "folder", "destination": "Folder", "inverse": "notes", "toMany": false}]},
          {"name": "Folder", "attributes": [{"name": "name", "type": "string"}],
           "relationships": [{"name": "notes", "destination": "Note", "inverse": "folder", "toMany": true}]}
        ]}
        """
    static let v2 = v1.replacingOccurrences(of: "\"versionIdentifier\": \"1\"", with: "\"versionIdentifier\": \"2\"")

    var scratch: ScratchDirectory!
    override func setUp() { scratch = ScratchDirectory() }

    func mapping(
        noteExtra: String = "", noteMappings: String = "\"attributeMappings\": {\"title\": \"$source.title\"}",
        folderPredicate: String = "TRUEPREDICATE"
    ) throws -> MappingModel {
        try MappingModel(
            json:
                """
                {"entityMappings": [
                  {"name": "FolderToFolder", "sourceEntity": "Folder", "destinationEntity": "Folder", "predicate": "\(folderPredicate)",
                   "attributeMappings": {"name": "$source.name"}},
                  {"name": "NoteToNote", "sourceEntity": "Note", "destinationEntity": "Note", "predicate": "TRUEPREDICATE",
                   \(noteMappings) \(noteExtra)}
                ]}
                """)
    }

    func testUnfilledDestinationPropertiesWithASourceCounterpartAreNamedBeforeARun() throws {
        let source = try ManagedObjectModel(json: Self.v1)
        let destination = try ManagedObjectModel(json: Self.v2)
        let bound = try mapping().validate(sourceModel: source, destinationModel: destination)
        XCTAssertEqual(
            bound.warnings,
            [
                "entity mapping 'FolderToFolder': destination relationship 'notes' is filled by no mapping while the source entity 'Folder' has a property of that name",
                "entity mapping 'NoteToNote': destination attribute 'body' is filled by no mapping while the source entity 'Note' has a property of that name",
                "entity mapping 'NoteToNote': destination relationship 'folder' is filled by no mapping while the source entity 'Note' has a property of that name",
            ])
        let manager = try MigrationManager(
            sourceModel: source, destinationModel: destination, mappingModel: try mapping())
        XCTAssertEqual(manager.warnings, bound.warnings)
        // A custom policy may fill them itself: no warning.
        let policy = try mapping(noteExtra: ", \"entityMigrationPolicyClassName\": \"NotePolicy\"").validate(
            sourceModel: source, destinationModel: destination)
        XCTAssertEqual(policy.warnings.filter { $0.contains("NoteToNote") }, [])
        // Everything mapped: nothing to say (not the transient attribute, nor Folder.notes, which
        // is set as the inverse of Note.folder).
        let full = try mapping(
            noteMappings: """
                "attributeMappings": {"title": "$source.title", "body": "$source.body"},
                  "relationshipMappings": {"folder": "FUNCTION($manager, \\"destinationInstancesForEntityMappingNamed:sourceInstances:\\", \\"FolderToFolder\\", $source.folder)"}
                """.replacingOccurrences(of: "\n", with: " "))
        XCTAssertEqual(try full.validate(sourceModel: source, destinationModel: destination).warnings, [])
    }

    func testAModelWhoseWrittenVersionHashDiffersIsWarnedBeforeARun() throws {
        let written = Self.v1.replacingOccurrences(
            of: "{\"name\": \"Folder\", \"attributes\"",
            with:
                "{\"name\": \"Folder\", \"versionHash\": \"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\", \"attributes\""
        )
        let source = try ManagedObjectModel(json: written)
        let destination = try ManagedObjectModel(json: Self.v2)
        XCTAssertEqual(source.warnings.count, 1, "\(source.warnings)")
        let manager = try MigrationManager(
            sourceModel: source, destinationModel: destination, mappingModel: try mapping())
        XCTAssertTrue(
            manager.warnings.contains { $0.hasPrefix("source model 'Notes': ") && $0.contains("versionHash") },
            "\(manager.warnings)")
    }

    func testAnEntityMappingThatTookNoInstancesIsReportedAfterARun() throws {
        let source = try ManagedObjectModel(json: Self.v1)
        let destination = try ManagedObjectModel(json: Self.v2)
        let path = scratch.file("notes.sqlite")
        try makeStore(path, source) { store in
            let folder = try insert(store, "Folder", ["name": .string("Inbox")])
            let note = try insert(store, "Note", ["title": .string("a"), "body": .string("b")])
            try note.setValue(.object(folder), forKey: "folder")
        }
        let manager = try MigrationManager(
            sourceModel: source, destinationModel: destination,
            mappingModel: try mapping(folderPredicate: "name == 'Archive'"))
        let report = try manager.migrateStore(from: path, to: scratch.file("out.sqlite"))
        XCTAssertTrue(
            report.warnings.contains(
                "entity mapping 'FolderToFolder' took no source instances: its source expression matched none of the store's 1 'Folder' instances"
            ), "\(report.warnings)")
        XCTAssertFalse(report.warnings.contains { $0.contains("'NoteToNote' took no") })
        XCTAssertEqual(report.untakenSourceInstances.map { $0.entityName }, ["Folder"])
        // The warnings known before the run come first.
        XCTAssertEqual(Array(report.warnings.prefix(manager.warnings.count)), manager.warnings)
    }
}
