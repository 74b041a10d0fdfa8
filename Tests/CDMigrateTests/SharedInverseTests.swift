import Foundation
import XCTest

@testable import CDMigrate

/// Models in which two relationships name the same inverse, which momc compiles and Core Data
/// runs: the model loads with a warning, the relationship its inverse does not answer is kept
/// without an inverse (its own storage, no inverse maintenance) and its version hash still names it.
final class SharedInverseTests: XCTestCase {
    /// Note.folder ↔ Folder.notes, and Note.originalFolder (to-one) and Folder.pinned (to-many)
    /// both naming an inverse that answers another relationship.
    static let json =
        #"{"name": "M", "entities": [{"name": "Folder", "attributes": [{"name": "name", "type": "string"}], "relationships": [{"name": "notes", "destination": "Note", "inverse": "folder", "toMany": true}, {"name": "pinned", "destination": "Note", "inverse": "folder", "toMany": true}]}, {"name": "Note", "attributes": [{"name": "title", "type": "string"}], "relationships": [{"name": "folder", "destination": "Folder", "inverse": "notes"}, {"name": "originalFolder", "destination": "Folder", "inverse": "notes"}]}]}"#

    func testTheModelLoadsWithAWarningAndKeepsTheStrayRelationshipsOneSided() throws {
        let model = try ManagedObjectModel(json: Self.json)
        let folder = try XCTUnwrap(model.entity(named: "Folder"))
        let note = try XCTUnwrap(model.entity(named: "Note"))
        XCTAssertTrue(note.relationship(named: "folder")?.inverseRelationship === folder.relationship(named: "notes"))
        XCTAssertTrue(folder.relationship(named: "notes")?.inverseRelationship === note.relationship(named: "folder"))
        XCTAssertNil(note.relationship(named: "originalFolder")?.inverseRelationship)
        XCTAssertNil(folder.relationship(named: "pinned")?.inverseRelationship)
        XCTAssertEqual(
            note.relationship(named: "originalFolder")?.inverseName, "notes",
            "the declared name stays, for the version hash")
        XCTAssertTrue(
            model.warnings.contains {
                $0.contains(
                    "relationship 'Note.originalFolder' names inverse 'Folder.notes', but that one's inverse is 'Note.folder'"
                )
            }, "\(model.warnings)")
        XCTAssertTrue(
            model.warnings.contains {
                $0.contains(
                    "relationship 'Folder.pinned' names inverse 'Note.folder', but that one's inverse is 'Folder.notes'"
                )
            }, "\(model.warnings)")
    }

    func testTheVersionHashStillNamesTheDeclaredInverse() throws {
        let shared = try ManagedObjectModel(json: Self.json)
        let without = try ManagedObjectModel(
            json: Self.json.replacingOccurrences(
                of: #"{"name": "originalFolder", "destination": "Folder", "inverse": "notes"}"#,
                with: #"{"name": "originalFolder", "destination": "Folder"}"#))
        XCTAssertNotEqual(
            shared.entity(named: "Note")?.versionHash, without.entity(named: "Note")?.versionHash,
            "the inverse name is part of the hash, as Core Data hashes it")
        XCTAssertEqual(shared.entity(named: "Folder")?.versionHash, without.entity(named: "Folder")?.versionHash)
    }

    func testEachRelationshipKeepsItsOwnValuesInAStoreAndAMigration() throws {
        let scratch = ScratchDirectory()
        let model = try ManagedObjectModel(json: Self.json)
        try makeStore(scratch.file("a.sqlite"), model) { store in
            let home = try insert(store, "Folder", ["name": "home"])
            let work = try insert(store, "Folder", ["name": "work"])
            let n1 = try insert(
                store, "Note", ["title": "n1", "folder": .object(home), "originalFolder": .object(work)])
            let n2 = try insert(store, "Note", ["title": "n2", "folder": .object(home)])
            try home.setValue(.collection([.object(n2)]), forKey: "pinned")
            _ = n1
        }
        let mapping = try MappingModel.inferred(from: model, to: model)
        try MigrationManager(sourceModel: model, destinationModel: model, mappingModel: mapping).migrateStore(
            from: scratch.file("a.sqlite"), to: scratch.file("b.sqlite"))
        for path in ["a.sqlite", "b.sqlite"] {
            let store = try PersistentStore.open(at: scratch.file(path), model: model)
            defer { store.close() }
            func names(_ value: Value, _ key: String) throws -> Set<String> {
                Set(try value.elements.compactMap { try $0.object?.value(forKey: key).stringValue })
            }
            let folders = Dictionary(
                uniqueKeysWithValues: try fetchAll(store, "Folder").map {
                    (try $0.value(forKey: "name").stringValue ?? "?", $0)
                })
            let notes = Dictionary(
                uniqueKeysWithValues: try fetchAll(store, "Note").map {
                    (try $0.value(forKey: "title").stringValue ?? "?", $0)
                })
            let home = try XCTUnwrap(folders["home"])
            let work = try XCTUnwrap(folders["work"])
            XCTAssertEqual(try names(home.value(forKey: "notes"), "title"), ["n1", "n2"], path)
            XCTAssertEqual(try names(home.value(forKey: "pinned"), "title"), ["n2"], path)
            XCTAssertEqual(
                try names(work.value(forKey: "notes"), "title"), [], "originalFolder does not fill notes: \(path)")
            XCTAssertEqual(try notes["n1"]?.value(forKey: "originalFolder").object?.value(forKey: "name"), "work", path)
            XCTAssertNil(try notes["n2"]?.value(forKey: "originalFolder").object, path)
            XCTAssertEqual(try notes["n2"]?.value(forKey: "folder").object?.value(forKey: "name"), "home", path)
        }
    }

    func testAnXcodeModelWithASharedInverseLoads() throws {
        let xml = #"""
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel">
                <entity name="Folder"><relationship name="notes" toMany="YES" deletionRule="Nullify" destinationEntity="Note" inverseName="folder" inverseEntity="Note"/></entity>
                <entity name="Note">
                    <relationship name="folder" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Folder" inverseName="notes" inverseEntity="Folder"/>
                    <relationship name="lastFolder" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Folder" inverseName="notes" inverseEntity="Folder"/>
                </entity>
            </model>
            """#
        let model = try XcodeModelReader.model(
            document: try XMLElement.parse(bytes: Array(xml.utf8), name: "t.xcdatamodel/contents"),
            file: "t.xcdatamodel/contents", name: "t")
        XCTAssertNil(model.entity(named: "Note")?.relationship(named: "lastFolder")?.inverseRelationship)
        XCTAssertTrue(
            model.warnings.contains { $0.contains("'Note.lastFolder' names inverse 'Folder.notes'") },
            "\(model.warnings)")
    }
}
