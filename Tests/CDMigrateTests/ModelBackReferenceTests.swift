import XCTest

@testable import CDMigrate

/// A model's entities and properties reach the model and each other (`parent`, `model`,
/// `subentities`, `entity`, `destinationEntity`, `inverseRelationship`) while the model lives, and
/// find none once it has gone away, as weak references would — without making the entities
/// targets of weak references.
final class ModelBackReferenceTests: XCTestCase {
    private static let json = ModelTests.attachments

    func testLinksAnswerWhileTheModelLives() throws {
        let model = try ManagedObjectModel(json: Self.json)
        let attachment = try XCTUnwrap(model.entity(named: "Attachment"))
        let image = try XCTUnwrap(model.entity(named: "ImageAttachment"))
        let note = try XCTUnwrap(model.entity(named: "Note"))
        XCTAssertTrue(image.model === model)
        XCTAssertTrue(image.parent === attachment)
        XCTAssertEqual(attachment.subentities.map { $0.name }, ["ImageAttachment"])
        XCTAssertTrue(image.rootEntity === attachment)
        let width = try XCTUnwrap(image.attribute(named: "width"))
        XCTAssertTrue(width.entity === image)
        // An inherited attribute answers its declaring entity.
        XCTAssertTrue(try XCTUnwrap(image.attribute(named: "dateCreated")).entity === attachment)
        let toNote = try XCTUnwrap(attachment.relationship(named: "note"))
        let toAttachments = try XCTUnwrap(note.relationship(named: "attachments"))
        XCTAssertTrue(toNote.destinationEntity === note)
        XCTAssertTrue(toNote.inverseRelationship === toAttachments)
        XCTAssertTrue(toAttachments.inverseRelationship === toNote)
    }

    /// `init(json:)` and `init(contentsOf:)` take over the model a reader built, which then goes
    /// away: the entities answer the model they were handed to.
    func testAdoptedEntitiesAnswerTheAdoptingModel() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "cdmigrate-back-references-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("M.model.json").path
        try Self.json.write(toFile: path, atomically: true, encoding: .utf8)
        for model in [try ManagedObjectModel(json: Self.json), try ManagedObjectModel(contentsOf: path)] {
            for entity in model.entities {
                XCTAssertTrue(entity.model === model, entity.name)
                for property in entity.attributes as [PropertyDescription] + entity.relationships {
                    XCTAssertNotNil(property.entity, "\(entity.name).\(property.name)")
                }
            }
            XCTAssertTrue(model.entity(named: "ImageAttachment")?.parent === model.entity(named: "Attachment"))
        }
    }

    func testPartsThatOutliveTheModelFindNone() throws {
        var image: EntityDescription?
        var attachment: EntityDescription?
        var width: AttributeDescription?
        var toNote: RelationshipDescription?
        weak var released: ManagedObjectModel?
        do {
            let model = try ManagedObjectModel(json: Self.json)
            released = model
            image = model.entity(named: "ImageAttachment")
            attachment = model.entity(named: "Attachment")
            width = image?.attribute(named: "width")
            toNote = attachment?.relationship(named: "note")
            XCTAssertNotNil(image?.parent)
        }
        XCTAssertNil(released, "nothing else holds the model")
        let kept = try XCTUnwrap(image)
        XCTAssertNil(kept.model)
        XCTAssertNil(kept.parent)
        XCTAssertTrue(kept.rootEntity === kept)
        XCTAssertEqual(try XCTUnwrap(attachment).subentities.count, 0)
        XCTAssertNil(try XCTUnwrap(width).entity)
        XCTAssertNil(try XCTUnwrap(toNote).destinationEntity)
        XCTAssertNil(try XCTUnwrap(toNote).inverseRelationship)
        // What the entity holds itself is still there.
        XCTAssertEqual(kept.name, "ImageAttachment")
        XCTAssertEqual(kept.attributes.map { $0.name }, ["dateCreated", "width"])
    }

    /// Entities given to a model that refuses them answer no model and no links afterwards.
    func testEntitiesOfARefusedModelFindNone() throws {
        let child = EntityDescription(
            name: "Child", parent: "Base", attributes: [AttributeDescription(name: "x", type: .integer64)],
            relationships: [
                RelationshipDescription(name: "owner", destination: "Owner", inverse: "missing", isToMany: false)
            ])
        let base = EntityDescription(name: "Base")
        let owner = EntityDescription(name: "Owner")
        XCTAssertThrowsError(try ManagedObjectModel(entities: [child, base, owner]))
        XCTAssertNil(child.model)
        XCTAssertNil(child.parent)
        XCTAssertEqual(base.subentities.count, 0)
        XCTAssertNil(try XCTUnwrap(child.attribute(named: "x")).entity)
        XCTAssertNil(child.ownRelationships[0].destinationEntity)
    }

    /// Entities made in code answer nothing before a model links them.
    func testUnlinkedEntitiesAnswerNothing() {
        let entity = EntityDescription(
            name: "Loose", parent: "Base", attributes: [AttributeDescription(name: "x", type: .string)])
        XCTAssertNil(entity.model)
        XCTAssertNil(entity.parent)
        XCTAssertEqual(entity.subentities.count, 0)
        XCTAssertNil(entity.ownAttributes[0].entity)
    }
}
