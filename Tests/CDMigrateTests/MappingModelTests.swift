import XCTest

@testable import CDMigrate

final class MappingModelTests: XCTestCase {
    static let sourceJSON = """
        {"name": "v1", "entities": [
          {"name": "Note", "attributes": [{"name": "title", "type": "string"}, {"name": "body", "type": "string"}],
           "relationships": [{"name": "tags", "destination": "Tag", "inverse": "notes", "toMany": true}]},
          {"name": "Tag", "attributes": [{"name": "label", "type": "string"}],
           "relationships": [{"name": "notes", "destination": "Note", "inverse": "tags", "toMany": true}]}
        ]}
        """
    static let destinationJSON = """
        {"name": "v2", "entities": [
          {"name": "Note", "attributes": [{"name": "title", "type": "string"}, {"name": "text", "type": "string"}],
           "relationships": [{"name": "tags", "destination": "Tag", "inverse": "notes", "toMany": true}]},
          {"name": "Tag", "attributes": [{"name": "name", "type": "string"}],
           "relationships": [{"name": "notes", "destination": "Note", "inverse": "tags", "toMany": true}]}
        ]}
        """

    func models() throws -> (ManagedObjectModel, ManagedObjectModel) {
        (try ManagedObjectModel(json: Self.sourceJSON), try ManagedObjectModel(json: Self.destinationJSON))
    }

    func testReadsXcodeSourceExpressionAndBothPropertyMappingForms() throws {
        let mapping = try MappingModel(
            json:
                """
                {"name": "m", "entityMappings": [
                  {"name": "NoteToNote", "type": "transform", "destinationEntity": "Note",
                   "sourceExpression": "FETCH(FUNCTION($manager, \\"fetchRequestForSourceEntityNamed:predicateString:\\", \\"Note\\", \\"title != nil\\"), $manager.sourceContext, NO)",
                   "attributeMappings": [{"name": "title", "valueExpression": "$source.title"}, {"name": "text", "valueExpression": "FUNCTION($source, \\"valueForKey:\\", \\"body\\")"}],
                   "relationshipMappings": {"tags": "FUNCTION($manager, \\"destinationInstancesForSourceRelationshipNamed:sourceInstances:\\", \\"tags\\", FUNCTION($source, \\"valueForKey:\\", \\"tags\\"))"}},
                  {"name": "TagToTag", "sourceEntity": "Tag", "destinationEntity": "Tag", "predicate": "TRUEPREDICATE",
                   "attributeMappings": {"name": "$source.label"}, "userInfo": {"modelVersion": 2}}
                ]}
                """)
        let (source, destination) = try models()
        let bound = try mapping.validate(sourceModel: source, destinationModel: destination)
        let note = try XCTUnwrap(bound.entityMapping(named: "NoteToNote"))
        XCTAssertEqual(note.sourceEntityName, "Note")
        XCTAssertEqual(note.sourceExpression?.entityName, "Note")
        XCTAssertEqual(note.mappingType, .transform)
        XCTAssertEqual(note.attributeMappings.map { $0.name }, ["title", "text"])
        XCTAssertEqual(note.relationshipMappings.map { $0.name }, ["tags"])
        XCTAssertTrue(note.sourceEntity === source.entity(named: "Note"))
        let tag = try XCTUnwrap(bound.entityMapping(named: "TagToTag"))
        guard case .integer(2)? = tag.userInfo["modelVersion"] else {
            return XCTFail("modelVersion is \(String(describing: tag.userInfo["modelVersion"]))")
        }
        XCTAssertEqual(tag.sourceExpression?.entityName, "Tag")
        XCTAssertTrue(bound.warnings.isEmpty)
    }

    func testSyntaxErrorsCarryPathAndOffset() {
        XCTAssertThrowsError(
            try MappingModel(
                json:
                    """
                    {"entityMappings": [{"name": "A", "sourceEntity": "Note", "destinationEntity": "Note",
                      "attributeMappings": [{"name": "title", "valueExpression": "$source.title +"}]}]}
                    """)
        ) { error in
            let e = error as? MigrationError
            XCTAssertEqual(e?.code, .expressionSyntax)
            XCTAssertEqual(e?.path, "$.entityMappings[0].attributeMappings[0].valueExpression")
            XCTAssertNotNil(e?.offset)
            XCTAssertTrue(e?.message.contains("A.title") ?? false, e?.message ?? "")
        }
    }

    func testUnknownKeysAndMissingNamesAreReported() {
        XCTAssertThrowsError(
            try MappingModel(
                json:
                    """
                    {"entityMappings": [{"nam": "A", "sourceEntity": "Note"}], "extra": 1}
                    """)
        ) { error in
            let e = error as? MigrationError
            XCTAssertEqual(e?.code, .invalidMapping)
            let paths = Set((e?.underlying ?? []).compactMap { $0.path })
            XCTAssertTrue(paths.contains("$.extra"), "\(paths)")
            XCTAssertTrue(paths.contains("$.entityMappings[0].nam"), "\(paths)")
            XCTAssertTrue(paths.contains("$.entityMappings[0].name"), "\(paths)")
        }
    }

    func testValidationNamesEveryUnknownEntityPropertyAndMapping() throws {
        let mapping = try MappingModel(
            json:
                """
                {"entityMappings": [
                  {"name": "NoteToNote", "sourceEntity": "Note", "destinationEntity": "Note", "predicate": "TRUEPREDICATE",
                   "attributeMappings": {"titel": "$source.title", "text": "$source.bdy", "tags": "$source.tags"},
                   "relationshipMappings": {"tags": "FUNCTION($manager, \\"destinationInstancesForEntityMappingNamed:sourceInstances:\\", \\"TagToTags\\", $source.tags)"}},
                  {"name": "X", "sourceEntity": "Nope", "destinationEntity": "Tag", "predicate": "TRUEPREDICATE"},
                  {"name": "TagToTag", "sourceEntity": "Tag", "destinationEntity": "Tag", "predicate": "lable == 'x'"},
                  {"name": "X", "sourceEntity": "Tag", "destinationEntity": "Gone"}
                ]}
                """)
        let (source, destination) = try models()
        XCTAssertThrowsError(try mapping.validate(sourceModel: source, destinationModel: destination)) { error in
            let e = error as? MigrationError
            XCTAssertEqual(e?.code, .invalidMapping)
            let messages = (e?.underlying ?? []).map { $0.message }.joined(separator: "\n")
            XCTAssertTrue(
                messages.contains("no attribute 'titel'") && messages.contains("did you mean 'title'"), messages)
            XCTAssertTrue(
                messages.contains("has no property 'bdy'") && messages.contains("did you mean 'body'"), messages)
            XCTAssertTrue(messages.contains("'tags' is a relationship"), messages)
            XCTAssertTrue(messages.contains("entity mapping 'TagToTags'"), messages)
            XCTAssertTrue(messages.contains("source entity 'Nope'"), messages)
            XCTAssertTrue(messages.contains("destination entity 'Gone'"), messages)
            XCTAssertTrue(messages.contains("duplicate entity mapping name 'X'"), messages)
            XCTAssertTrue(messages.contains("entity 'Tag' has no property 'lable' (did you mean 'label'?)"), messages)
            XCTAssertTrue((e?.underlying ?? []).contains { $0.path == "$.entityMappings[2].predicate" }, messages)
            XCTAssertTrue((e?.underlying ?? []).allSatisfy { $0.path != nil })
        }
        let takesNothing = try MappingModel(
            json:
                """
                {"entityMappings": [{"name": "X", "sourceEntity": "Tag", "destinationEntity": "Tag"}]}
                """)
        let bound = try takesNothing.validate(sourceModel: source, destinationModel: destination)
        XCTAssertEqual(bound.warnings.count, 1, "the mapping without a source expression takes nothing and says so")
    }

    func testVersionHashMismatchSaysWhatChanged() throws {
        let (source, destination) = try models()
        let note = try XCTUnwrap(source.entity(named: "Note"))
        var oldSnapshot = EntityMapping.snapshot(of: note)
        oldSnapshot["body"] = nil
        oldSnapshot["subtitle"] = "string"
        oldSnapshot["title"] = "integer32"
        let snapshotJSON = JSON.object(oldSnapshot.sorted { $0.key < $1.key }.map { ($0.key, JSON.string($0.value)) })
            .serialized()
        let stale = String(repeating: "00", count: 32)
        let mapping = try MappingModel(
            json:
                """
                {"entityMappings": [{"name": "NoteToNote", "sourceEntity": "Note", "destinationEntity": "Note", "predicate": "TRUEPREDICATE",
                  "sourceEntityVersionHash": "\(stale)", "sourceEntityProperties": \(snapshotJSON)}]}
                """)
        XCTAssertThrowsError(try mapping.validate(sourceModel: source, destinationModel: destination)) { error in
            let message = (error as? MigrationError)?.message ?? ""
            XCTAssertTrue(message.contains("source entity 'Note'"), message)
            XCTAssertTrue(message.contains("attribute 'body' added"), message)
            XCTAssertTrue(message.contains("attribute 'subtitle' removed"), message)
            XCTAssertTrue(message.contains("attribute 'title' changed from integer32 to string"), message)
        }
        let current = VersionHash.hex(note.versionHash)
        let fresh = try MappingModel(
            json:
                """
                {"entityMappings": [{"name": "NoteToNote", "sourceEntity": "Note", "destinationEntity": "Note", "predicate": "TRUEPREDICATE",
                  "sourceEntityVersionHash": "\(current)"}]}
                """)
        XCTAssertNoThrow(try fresh.validate(sourceModel: source, destinationModel: destination))
    }
}
