import XCTest

@testable import CDMigrate

/// `ManagedObjectModel.jsonText()`: what it writes reads back into the same model, with the same
/// version hashes computed from the JSON alone.
final class ModelJSONTests: XCTestCase {
    /// Compares everything ModelReader reads, and the hashes Core Data computes.
    func assertSameModel(
        _ a: ManagedObjectModel, _ b: ManagedObjectModel, _ what: String, file: StaticString = #filePath,
        line: UInt = #line
    ) {
        XCTAssertEqual(a.entities.map(\.name), b.entities.map(\.name), what, file: file, line: line)
        XCTAssertEqual(a.versionIdentifier, b.versionIdentifier, what, file: file, line: line)
        XCTAssertEqual(a.versionHash, b.versionHash, "\(what): model hash", file: file, line: line)
        for (x, y) in zip(a.entities, b.entities) {
            let name = "\(what) \(x.name)"
            XCTAssertEqual(x.parentName, y.parentName, name, file: file, line: line)
            XCTAssertEqual(x.isAbstract, y.isAbstract, name, file: file, line: line)
            XCTAssertEqual(x.managedObjectClassName, y.managedObjectClassName, name, file: file, line: line)
            XCTAssertEqual(x.renamingIdentifier, y.renamingIdentifier, name, file: file, line: line)
            XCTAssertEqual(x.userInfo, y.userInfo, name, file: file, line: line)
            XCTAssertEqual(x.uniquenessConstraints, y.uniquenessConstraints, name, file: file, line: line)
            XCTAssertEqual(x.versionHash, y.versionHash, "\(name): entity hash", file: file, line: line)
            XCTAssertEqual(x.ownAttributes.map(\.name), y.ownAttributes.map(\.name), name, file: file, line: line)
            for (p, q) in zip(x.ownAttributes, y.ownAttributes) {
                let property = "\(name).\(p.name)"
                XCTAssertEqual(p.attributeType, q.attributeType, property, file: file, line: line)
                XCTAssertEqual(p.isOptional, q.isOptional, property, file: file, line: line)
                XCTAssertEqual(p.isTransient, q.isTransient, property, file: file, line: line)
                XCTAssertEqual(p.defaultValue, q.defaultValue, property, file: file, line: line)
                XCTAssertEqual(p.minValue, q.minValue, property, file: file, line: line)
                XCTAssertEqual(p.maxValue, q.maxValue, property, file: file, line: line)
                XCTAssertEqual(
                    p.allowsExternalBinaryDataStorage, q.allowsExternalBinaryDataStorage, property, file: file,
                    line: line)
                XCTAssertEqual(p.valueTransformerName, q.valueTransformerName, property, file: file, line: line)
                XCTAssertEqual(p.renamingIdentifier, q.renamingIdentifier, property, file: file, line: line)
                XCTAssertEqual(p.versionHash, q.versionHash, "\(property): hash", file: file, line: line)
            }
            XCTAssertEqual(x.ownRelationships.map(\.name), y.ownRelationships.map(\.name), name, file: file, line: line)
            for (p, q) in zip(x.ownRelationships, y.ownRelationships) {
                let property = "\(name).\(p.name)"
                XCTAssertEqual(p.destinationEntityName, q.destinationEntityName, property, file: file, line: line)
                XCTAssertEqual(p.inverseName, q.inverseName, property, file: file, line: line)
                XCTAssertEqual(p.isToMany, q.isToMany, property, file: file, line: line)
                XCTAssertEqual(p.isOrdered, q.isOrdered, property, file: file, line: line)
                XCTAssertEqual(p.isOptional, q.isOptional, property, file: file, line: line)
                XCTAssertEqual(p.deleteRule, q.deleteRule, property, file: file, line: line)
                XCTAssertEqual(p.minCount, q.minCount, property, file: file, line: line)
                XCTAssertEqual(p.maxCount, q.maxCount, property, file: file, line: line)
                XCTAssertEqual(p.versionHash, q.versionHash, "\(property): hash", file: file, line: line)
            }
        }
    }

    /// The hashes written are only a record: read back, Core Data's recipe on the JSON alone gives
    /// them again (no "differs from Core Data's" warning).
    func assertRoundTrip(_ model: ManagedObjectModel, _ what: String) throws {
        let back = try ManagedObjectModel(json: model.jsonText())
        assertSameModel(model, back, what)
        XCTAssertEqual(back.warnings.filter { $0.contains("versionHash") }, [], what)
    }

    func testUnCloudNotesVersionsRoundTrip() throws {
        let bundle = try XcodeModelBundle.versions(
            contentsOf: TestPaths.fixtures + "/xcode/UnCloudNotes/UnCloudNotesDataModel.xcdatamodeld")
        XCTAssertEqual(bundle.versionNames.count, 4)
        for name in bundle.versionNames {
            try assertRoundTrip(try XCTUnwrap(bundle.models[name]), "UnCloudNotes \(name)")
        }
    }

    func testXcodeServerSourceAndCompiledModelsRoundTrip() throws {
        for version in ["1_0_0", "1_1_0", "2_0_0"] {
            let folder = TestPaths.fixtures + "/xcode/XcodeServer/\(version)"
            let source = try ManagedObjectModel(contentsOf: folder + "/XcodeServer.xcdatamodeld")
            try assertRoundTrip(source, "XcodeServer \(version)")
            let compiled = try CompiledModelBundle(contentsOf: folder + "/XcodeServer.momd_precompiled")
            try assertRoundTrip(compiled.currentModel, "XcodeServer \(version) compiled")
            // The JSON carries the hashes Xcode's compiler recorded.
            let json = try JSON.parse(compiled.currentModel.jsonText())
            let recorded = try XCTUnwrap(compiled.versionHashes[compiled.currentVersionName])
            for entity in json["entities"]?.arrayValue ?? [] {
                let name = try XCTUnwrap(entity["name"]?.stringValue)
                XCTAssertEqual(
                    entity["versionHash"]?.stringValue, recorded[name].map(Base64.encode), "\(version) \(name)")
            }
        }
    }

    func testDefaultsInheritanceAndOptionsRoundTrip() throws {
        let text = """
            {"name": "Notes", "versionIdentifier": "2", "entities": [
              {"name": "Attachment", "abstract": true, "className": "Attachment", "uniquenessConstraints": [["identifier"]],
               "attributes": [{"name": "dateCreated", "type": "date", "default": "2001-01-02T00:00:00Z"},
                              {"name": "identifier", "type": "uuid", "optional": false, "default": "123E4567-E89B-12D3-A456-426614174000"}],
               "relationships": [{"name": "note", "destination": "Note", "inverse": "attachments", "optional": false, "deleteRule": "deny"}]},
              {"name": "ImageAttachment", "parent": "Attachment", "versionHashModifier": "2",
               "attributes": [{"name": "width", "type": "integer32", "default": 0, "minValue": 0, "maxValue": 4096},
                              {"name": "scale", "type": "float", "default": 1.5},
                              {"name": "thumbnail", "type": "binary", "default": "iVBORw0KGgo=", "allowsExternalBinaryDataStorage": true},
                              {"name": "cache", "type": "transformable", "transient": true, "valueTransformerName": "T"}]},
              {"name": "Note", "renamingIdentifier": "Memo", "userInfo": {"owner": "notes-team"},
               "attributes": [{"name": "title", "type": "string", "optional": false, "default": ""},
                              {"name": "price", "type": "decimal", "default": "9.99"},
                              {"name": "pinned", "type": "boolean", "default": false, "renamingIdentifier": "flagged"},
                              {"name": "link", "type": "uri", "default": "https://example.com"}],
               "relationships": [{"name": "attachments", "destination": "Attachment", "inverse": "note", "toMany": true,
                                  "ordered": true, "deleteRule": "cascade", "minCount": 1, "maxCount": 5}]}
            ]}
            """
        try assertRoundTrip(try ManagedObjectModel(json: text), "hand-written")
    }
}
