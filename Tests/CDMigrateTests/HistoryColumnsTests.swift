import Foundation
import XCTest

@testable import CDMigrate

/// `ACHANGE.ZCOLUMNS`, the bit vector of the properties a persistent-history change touched, is
/// re-encoded through an inferred step that changes the entity's slots (docs/store-layout.md).
final class HistoryColumnsTests: XCTestCase {
    var scratch: ScratchDirectory!
    override func setUp() { scratch = ScratchDirectory() }

    static let v1 = """
        {"entities": [{"name": "Note", "attributes": [{"name": "body", "type": "string"}, {"name": "title", "type": "string"}]},
                      {"name": "Tag", "attributes": [{"name": "label", "type": "string"}, {"name": "weight", "type": "int64"}]}]}
        """
    /// Note: body removed, title renamed heading, subtitle added. Tag unchanged.
    static let v2 = """
        {"entities": [{"name": "Note", "attributes": [{"name": "heading", "type": "string", "renamingIdentifier": "title"},
                                                      {"name": "subtitle", "type": "string"}]},
                      {"name": "Tag", "attributes": [{"name": "label", "type": "string"}, {"name": "weight", "type": "int64"}]}]}
        """

    func testSlotsFollowCoreDatasGroupsAndBitOrder() throws {
        let model = try ManagedObjectModel(
            json: """
                {"entities": [{"name": "A", "attributes": [{"name": "z", "type": "string"}, {"name": "b", "type": "int64"}],
                               "relationships": [{"name": "items", "destination": "B", "inverse": "owner", "toMany": true},
                                                 {"name": "peer", "destination": "B", "inverse": "peers"}]},
                              {"name": "B", "relationships": [{"name": "owner", "destination": "A", "inverse": "items"},
                                                              {"name": "peers", "destination": "A", "inverse": "peer", "toMany": true}]}]}
                """)
        let slots = HistoryColumnSlots(
            entity: try XCTUnwrap(model.entity(named: "A")), layout: StoreLayout(model: model))
        XCTAssertEqual(slots.names, ["peer", "b", "z", "items"])
        XCTAssertEqual(slots.bits(for: ["peer", "items"]), [0x90])
        XCTAssertEqual(slots.properties(in: [0x60]), ["b", "z"])
    }

    func testAnInferredStepReencodesTheChangedColumnsOfAnEntityItReshapes() throws {
        let v1 = try ManagedObjectModel(json: Self.v1)
        let v2 = try ManagedObjectModel(json: Self.v2)
        let path = scratch.file("h.sqlite")
        try makeStore(path, v1) { store in
            try insert(store, "Note", ["title": .string("t"), "body": .string("b")])
            try insert(store, "Tag", ["label": .string("l")])
        }
        let note = v1.entity(named: "Note")?.entityNumber ?? 0
        let tag = v1.entity(named: "Tag")?.entityNumber ?? 0
        let database = try SQLiteDatabase(path: path, mode: .readWrite)
        // v1 Note slots: body, title. Tag: label, weight.
        try database.exec(
            """
            CREATE TABLE ACHANGE ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZCHANGETYPE INTEGER, ZENTITY INTEGER, ZENTITYPK INTEGER, ZTRANSACTIONID INTEGER, ZCOLUMNS BLOB );
            INSERT INTO Z_PRIMARYKEY VALUES (16001, 'CHANGE', 0, 4);
            INSERT INTO ACHANGE VALUES (1, 16001, 1, 1, \(note), 1, 1, X'40'), (2, 16001, 1, 1, \(note), 1, 1, X'C0'),
                                       (3, 16001, 1, 1, \(tag), 1, 1, X'40'), (4, 16001, 1, 0, \(note), 1, 1, NULL);
            """)
        database.close()
        let manager = try MigrationManager(
            sourceModel: v1, destinationModel: v2, mappingModel: try MappingModel.inferred(from: v1, to: v2))
        let out = scratch.file("h2.sqlite")
        try manager.migrateStore(from: path, to: out)
        let result = try SQLiteDatabase(path: out, mode: .readOnly)
        defer { result.close() }
        let columns = try result.rows("SELECT Z_PK, hex(ZCOLUMNS) FROM ACHANGE ORDER BY Z_PK").map {
            "\($0[0].integer ?? 0):\($0[1].text ?? "NULL")"
        }
        // v2 Note slots: heading, subtitle. title → heading (bit 0); body is gone.
        XCTAssertEqual(columns, ["1:80", "2:80", "3:40", "4:"])
    }
}
