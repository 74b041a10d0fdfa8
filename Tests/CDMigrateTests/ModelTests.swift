import XCTest

@testable import CDMigrate

final class ModelTests: XCTestCase {
    /// Notes with attachments, one kind of attachment inheriting from another.
    static let attachments = """
        {"name": "M", "entities": [
          {"name": "Attachment", "attributes": [{"name": "dateCreated", "type": "date"}],
           "relationships": [{"name": "note", "destination": "Note", "inverse": "attachments"}]},
          {"name": "ImageAttachment", "parent": "Attachment", "attributes": [{"name": "width", "type": "float"}]},
          {"name": "Note", "attributes": [{"name": "title", "type": "string", "optional": false}],
           "relationships": [{"name": "attachments", "destination": "Attachment", "inverse": "note", "toMany": true}]}
        ]}
        """

    func testLoadsEntitiesWithInheritance() throws {
        let model = try ManagedObjectModel(json: Self.attachments)
        let image = try XCTUnwrap(model.entity(named: "ImageAttachment"))
        XCTAssertEqual(image.attributes.map { $0.name }, ["dateCreated", "width"])
        XCTAssertEqual(image.relationships.map { $0.name }, ["note"])
        XCTAssertEqual(model.entitiesInStoreOrder.map { $0.name }, ["Attachment", "ImageAttachment", "Note"])
        XCTAssertEqual(image.versionHash.count, 32)
        XCTAssertTrue(image.isKind(of: try XCTUnwrap(model.entity(named: "Attachment"))))
    }
}
