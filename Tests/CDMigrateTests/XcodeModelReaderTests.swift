import Foundation
import XCTest

@testable import CDMigrate

/// Xcode's model files (`.xcdatamodeld`, `.xcdatamodel/contents`) read into the engine's model.
final class XcodeModelReaderTests: XCTestCase {
    static let uncloudNotes = TestPaths.fixtures + "/xcode/UnCloudNotes/UnCloudNotesDataModel.xcdatamodeld"

    func read(_ xml: String, file: String = "test.xcdatamodel/contents") throws -> ManagedObjectModel {
        let document = try XMLElement.parse(bytes: Array(xml.utf8), name: file)
        return try XcodeModelReader.model(document: document, file: file, name: "test")
    }

    func testEveryFixtureModelLoads() throws {
        let renames = try XcodeModelBundle.versions(
            contentsOf: TestPaths.fixtures + "/apple-stores/renames/Model.xcdatamodeld")
        XCTAssertEqual(renames.models.count, 5)
        XCTAssertEqual(renames.currentVersionName, "v2.0.0", "from .xccurrentversion")
        for version in ["1_0_0", "1_1_0", "2_0_0"] {
            let bundle = try XcodeModelBundle.versions(
                contentsOf: TestPaths.fixtures + "/xcode/XcodeServer/\(version)/XcodeServer.xcdatamodeld")
            XCTAssertEqual(bundle.versionNames, ["XcodeServer"])
            XCTAssertEqual(bundle.currentModel?.entities.count, 23)
            XCTAssertEqual(bundle.currentModel?.name, "XcodeServer")
        }
        let notes = try XcodeModelBundle.versions(contentsOf: Self.uncloudNotes)
        XCTAssertEqual(
            notes.versionNames,
            [
                "UnCloudNotesDataModel", "UnCloudNotesDataModel_v2", "UnCloudNotesDataModel_v3",
                "UnCloudNotesDataModel_v4",
            ])
        XCTAssertEqual(notes.currentVersionName, "UnCloudNotesDataModel_v4")
        XCTAssertEqual(notes.currentModel?.entity(named: "ImageAttachment")?.parent?.name, "Attachment")
        XCTAssertEqual(notes.currentModel?.entity(named: "ImageAttachment")?.managedObjectClassName, ".ImageAttachment")
        XCTAssertEqual(
            notes.currentModel?.entity(named: "ImageAttachment")?.attribute(named: "image")?.valueTransformerName,
            "ImageTransformer")
    }

    func testModelFileEntryPointsTakeXcodeFiles() throws {
        let bundle = TestPaths.fixtures + "/apple-stores/renames/Model.xcdatamodeld"
        let current = try ManagedObjectModel(contentsOf: bundle + "/")
        XCTAssertNotNil(
            current.entity(named: "BasicEntity")?.attribute(named: "v2_0_0_name"), "a bundle gives its current version")
        let version = try ManagedObjectModel(contentsOf: bundle + "/v1.1.0.xcdatamodel")
        XCTAssertNotNil(version.entity(named: "BasicEntity")?.attribute(named: "v1_1_0_name"))
        XCTAssertEqual(version.name, "v1.1.0")
        let contents = try ManagedObjectModel(contentsOf: bundle + "/v1.2.0.xcdatamodel/contents")
        XCTAssertEqual(contents.name, "v1.2.0")
        XCTAssertNotNil(contents.entity(named: "BasicEntity")?.attribute(named: "v1_2_0_name"))
        XCTAssertThrowsError(try ManagedObjectModel(contentsOf: TestPaths.fixtures + "/no-such.xcdatamodel")) { error in
            XCTAssertEqual((error as? MigrationError)?.code, .io)
        }
    }

    func testRenamesCarryElementIDsAsRenamingIdentifiers() throws {
        let bundle = try XcodeModelBundle.versions(
            contentsOf: TestPaths.fixtures + "/apple-stores/renames/Model.xcdatamodeld")
        let chain = [
            ("v1.0.0", "v1_0_0_name", nil), ("v1.1.0", "v1_1_0_name", "v1_0_0_name"),
            ("v1.1.2", "v1_1_2_name", "v1_1_0_name"),
            ("v1.2.0", "v1_2_0_name", "v1_1_2_name"), ("v2.0.0", "v2_0_0_name", "v1_2_0_name"),
        ]
        for (version, name, previous) in chain {
            let attribute = bundle.model(named: version)?.entity(named: "BasicEntity")?.attribute(named: name)
            XCTAssertNotNil(attribute, version)
            XCTAssertEqual(attribute?.renamingIdentifier, previous, version)
            XCTAssertEqual(attribute?.isOptional, true)
        }
    }

    /// The hand-written JSON models of reference migration 4 against Xcode's own files.
    func testUnCloudNotesXMLEqualsTheJSONModels() throws {
        let bundle = try XcodeModelBundle.versions(contentsOf: Self.uncloudNotes)
        let versions = [
            ("UnCloudNotesDataModel", 1), ("UnCloudNotesDataModel_v2", 2), ("UnCloudNotesDataModel_v3", 3),
            ("UnCloudNotesDataModel_v4", 4),
        ]
        for (name, number) in versions {
            let xml = try XCTUnwrap(bundle.model(named: name))
            let json = try ManagedObjectModel(
                contentsOf: TestPaths.repository + "/examples/4-uncloudnotes/UnCloudNotes_v\(number).model.json")
            XCTAssertEqual(Set(xml.entitiesByName.keys), Set(json.entitiesByName.keys), name)
            for entity in xml.entities {
                let other = try XCTUnwrap(json.entity(named: entity.name))
                XCTAssertEqual(entity.parent?.name, other.parent?.name)
                XCTAssertEqual(entity.isAbstract, other.isAbstract)
                XCTAssertEqual(
                    Set(entity.attributes.map { $0.name }), Set(other.attributes.map { $0.name }),
                    "\(name) \(entity.name)")
                for a in entity.attributes {
                    let b = try XCTUnwrap(other.attribute(named: a.name), "\(name) \(entity.name).\(a.name)")
                    let where_ = "\(name) \(entity.name).\(a.name)"
                    XCTAssertEqual(a.attributeType, b.attributeType, where_)
                    XCTAssertEqual(a.isOptional, b.isOptional, where_)
                    XCTAssertEqual(a.isTransient, b.isTransient, where_)
                    XCTAssertEqual(a.defaultValue, b.defaultValue, where_)
                    XCTAssertEqual(a.minValue, b.minValue, where_)
                    XCTAssertEqual(a.maxValue, b.maxValue, where_)
                    XCTAssertEqual(a.renamingIdentifier, b.renamingIdentifier, where_)
                    XCTAssertEqual(a.versionHash, b.versionHash, where_)
                }
                XCTAssertEqual(Set(entity.relationships.map { $0.name }), Set(other.relationships.map { $0.name }))
                for r in entity.relationships {
                    let s = try XCTUnwrap(other.relationship(named: r.name))
                    XCTAssertEqual(r.destinationEntityName, s.destinationEntityName)
                    XCTAssertEqual(r.inverseName, s.inverseName)
                    XCTAssertEqual(r.isToMany, s.isToMany)
                    XCTAssertEqual(r.isOrdered, s.isOrdered)
                    XCTAssertEqual(r.deleteRule, s.deleteRule)
                    XCTAssertEqual(r.minCount, s.minCount)
                    XCTAssertEqual(r.maxCount, s.maxCount)
                    XCTAssertEqual(r.isOptional, s.isOptional)
                    XCTAssertEqual(r.versionHash, s.versionHash)
                }
                XCTAssertEqual(entity.versionHash, other.versionHash, "\(name) \(entity.name)")
                XCTAssertEqual(entity.entityNumber, other.entityNumber)
            }
            XCTAssertEqual(xml.versionHash, json.versionHash, name)
            XCTAssertEqual(xml.versionHashesDigest, json.versionHashesDigest, name)
        }
    }

    func testEveryAttributeTypeSpellingAndSetting() throws {
        let model = try read(
            """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model userDefinedModelVersionIdentifier="Release 2">
                <entity name="All" representedClassName="AllClass" elementID="Everything" versionHashModifier="e1" isAbstract="NO">
                    <attribute name="i16" attributeType="Integer 16" defaultValueString="-3" minValueString="-5" maxValueString="10"/>
                    <attribute name="i32" optional="YES" attributeType="Integer 32"/>
                    <attribute name="i64" optional="YES" attributeType="Integer 64" defaultValueString="0"/>
                    <attribute name="dec" optional="YES" attributeType="Decimal" defaultValueString="12.50"/>
                    <attribute name="dbl" optional="YES" attributeType="Double" defaultValueString="0.5"/>
                    <attribute name="flt" optional="YES" attributeType="Float" defaultValueString="1.5"/>
                    <attribute name="str" optional="YES" attributeType="String" defaultValueString="hello" minValueString="1" maxValueString="20"/>
                    <attribute name="flag" optional="YES" attributeType="Boolean" defaultValueString="YES"/>
                    <attribute name="when" optional="YES" attributeType="Date" defaultDateTimeInterval="86400" minDateTimeInterval="0"/>
                    <attribute name="blob" optional="YES" attributeType="Binary" allowsExternalBinaryDataStorage="YES" preserveAfterDeletion="YES"/>
                    <attribute name="uid" optional="YES" attributeType="UUID" defaultValueString="123E4567-E89B-12D3-A456-426614174000"/>
                    <attribute name="link" optional="YES" attributeType="URI"/>
                    <attribute name="thing" optional="YES" attributeType="Transformable" valueTransformerName="NSSecureUnarchiveFromData" elementID="oldThing" versionHashModifier="v2">
                        <userInfo><entry key="owner" value="me"/><entry key="empty"/></userInfo>
                    </attribute>
                    <attribute name="oid" optional="YES" transient="YES" attributeType="ObjectID"/>
                    <attribute name="whatever" optional="YES" transient="YES" attributeType="Undefined"/>
                    <attribute name="place" optional="YES" transient="YES" attributeType="Composite" composite="Place"/>
                    <relationship name="parts" optional="YES" toMany="YES" ordered="YES" minCount="1" maxCount="5" deletionRule="Cascade" destinationEntity="Part" inverseName="owner" inverseEntity="Part"/>
                    <relationship name="keeper" maxCount="1" deletionRule="Deny" destinationEntity="Part"/>
                    <userInfo><entry key="table" value="all"/></userInfo>
                    <uniquenessConstraints>
                        <uniquenessConstraint><constraint value="str"/><constraint value="i16"/></uniquenessConstraint>
                    </uniquenessConstraints>
                    <fetchIndex name="byStr"><fetchIndexElement property="str" type="Binary" order="ascending"/></fetchIndex>
                    <fetchedProperty name="recent" optional="YES"><fetchRequest name="fetchedPropertyFetchRequest" entity="Part"/></fetchedProperty>
                </entity>
                <entity name="Part">
                    <relationship name="owner" optional="YES" maxCount="1" deletionRule="No Action" destinationEntity="All" inverseName="parts" inverseEntity="All"/>
                </entity>
                <fetchRequest name="bigParts" entity="Part" predicateString="owner != nil"/>
                <configuration name="Cloud"><memberEntity name="Part"/></configuration>
                <composite name="Place"><attribute name="x" attributeType="Double"/></composite>
                <elements><element name="All" positionX="0" positionY="0" width="128" height="44"/></elements>
            </model>
            """)
        XCTAssertEqual(model.versionIdentifier, "Release 2")
        let all = try XCTUnwrap(model.entity(named: "All"))
        XCTAssertEqual(all.managedObjectClassName, "AllClass")
        XCTAssertEqual(all.renamingIdentifier, "Everything")
        XCTAssertEqual(all.versionHashModifier, "e1")
        XCTAssertEqual(all.userInfo, ["table": "all"])
        XCTAssertEqual(all.uniquenessConstraints, [["str", "i16"]])
        XCTAssertEqual(
            all.attributes.map { $0.attributeType.coreDataCode },
            [100, 200, 300, 400, 500, 600, 700, 800, 900, 1000, 1100, 1200, 1800, 2000, 0, 2100])
        func attribute(_ name: String) throws -> AttributeDescription {
            try XCTUnwrap(all.attribute(named: name), name)
        }
        XCTAssertEqual(try attribute("i16").isOptional, false, "absent optional is NO")
        XCTAssertEqual(try attribute("i16").defaultValue, .integer(-3))
        XCTAssertEqual(try attribute("i16").minValue, -5)
        XCTAssertEqual(try attribute("i16").maxValue, 10)
        XCTAssertEqual(try attribute("i64").defaultValue, .integer(0))
        XCTAssertEqual(try attribute("dec").defaultValue, .decimal("12.50"))
        XCTAssertEqual(try attribute("dbl").defaultValue, .double(0.5))
        XCTAssertEqual(try attribute("flt").defaultValue, .double(1.5))
        XCTAssertEqual(try attribute("str").defaultValue, .string("hello"))
        XCTAssertEqual(try attribute("str").maxValue, 20)
        XCTAssertEqual(try attribute("flag").defaultValue, .bool(true))
        XCTAssertEqual(try attribute("when").defaultValue, .date(86400))
        XCTAssertEqual(try attribute("when").minValue, 0)
        XCTAssertTrue(try attribute("blob").allowsExternalBinaryDataStorage)
        XCTAssertTrue(try attribute("blob").preservesValueInHistoryOnDeletion)
        XCTAssertEqual(
            try attribute("uid").defaultValue,
            .uuid([0x12, 0x3E, 0x45, 0x67, 0xE8, 0x9B, 0x12, 0xD3, 0xA4, 0x56, 0x42, 0x66, 0x14, 0x17, 0x40, 0x00]))
        XCTAssertEqual(try attribute("thing").valueTransformerName, "NSSecureUnarchiveFromData")
        XCTAssertEqual(try attribute("thing").renamingIdentifier, "oldThing")
        XCTAssertEqual(try attribute("thing").versionHashModifier, "v2")
        XCTAssertEqual(try attribute("thing").userInfo, ["owner": "me", "empty": ""])
        XCTAssertTrue(try attribute("oid").isTransient)
        let parts = try XCTUnwrap(all.relationship(named: "parts"))
        XCTAssertEqual([parts.isToMany, parts.isOrdered, parts.isOptional], [true, true, true])
        XCTAssertEqual([parts.minCount, parts.maxCount], [1, 5])
        XCTAssertEqual(parts.deleteRule, .cascade)
        XCTAssertEqual(parts.inverseRelationship?.name, "owner")
        let keeper = try XCTUnwrap(all.relationship(named: "keeper"))
        XCTAssertEqual([keeper.isToMany, keeper.isOptional], [false, false])
        XCTAssertEqual([keeper.minCount, keeper.maxCount], [0, 1])
        XCTAssertEqual(keeper.deleteRule, .deny)
        XCTAssertEqual(model.entity(named: "Part")?.relationship(named: "owner")?.deleteRule, .noAction)
        XCTAssertEqual(
            model.fetchRequestTemplates["bigParts"],
            FetchRequestTemplate(name: "bigParts", entityName: "Part", predicateFormat: "owner != nil"))
        XCTAssertEqual(model.configurations, ["Cloud": ["Part"]])
        // Nothing silently lost: what has no place in the model is a warning naming file and line.
        let warnings = model.warnings.joined(separator: "\n")
        XCTAssertFalse(warnings.contains("byStr"), "fetch indexes are kept: \(warnings)")
        XCTAssertEqual(all.fetchIndexes, [FetchIndexDescription(name: "byStr", elements: [.init(propertyName: "str")])])
        XCTAssertEqual(
            all.attribute(named: "str")?.isIndexed, true,
            "a one-property fetch index indexes its property, as Xcode compiles it")
        XCTAssertTrue(warnings.contains("<fetchedProperty name=\"recent\">"), warnings)
        XCTAssertTrue(warnings.contains("<composite name=\"Place\">"), warnings)
        XCTAssertEqual(model.warnings.count, 2, warnings)
    }

    func testXcodeAndJSONModelsOfTheSameSchemaAreEqual() throws {
        let xml = try read(
            """
            <model>
                <entity name="Note">
                    <attribute name="title" attributeType="String" defaultValueString="x" versionHashModifier="2"/>
                    <attribute name="data" optional="YES" attributeType="Binary" allowsExternalBinaryDataStorage="YES"/>
                    <relationship name="tags" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Tag" inverseName="notes" inverseEntity="Tag"/>
                    <uniquenessConstraints><uniquenessConstraint><constraint value="title"/></uniquenessConstraint></uniquenessConstraints>
                </entity>
                <entity name="Tag">
                    <relationship name="notes" optional="YES" toMany="YES" ordered="YES" deletionRule="Cascade" destinationEntity="Note" inverseName="tags" inverseEntity="Note"/>
                </entity>
            </model>
            """)
        let json = try ManagedObjectModel(
            json: """
                {"entities": [
                  {"name": "Note", "uniquenessConstraints": [["title"]],
                   "attributes": [{"name": "title", "type": "string", "optional": false, "default": "x", "versionHashModifier": "2"},
                                  {"name": "data", "type": "binary", "allowsExternalBinaryDataStorage": true}],
                   "relationships": [{"name": "tags", "destination": "Tag", "inverse": "notes", "toMany": true}]},
                  {"name": "Tag", "relationships": [{"name": "notes", "destination": "Note", "inverse": "tags", "toMany": true, "ordered": true, "deleteRule": "cascade"}]}]}
                """)
        XCTAssertEqual(xml.entityVersionHashes, json.entityVersionHashes)
        XCTAssertEqual(xml.versionHashesDigest, json.versionHashesDigest)
        XCTAssertEqual(
            xml.entity(named: "Note")?.attribute(named: "title")?.defaultValue,
            json.entity(named: "Note")?.attribute(named: "title")?.defaultValue)
    }

    // MARK: Errors name the file, the element and its line

    func assertError(_ xml: String, mentions: [String], file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try read(xml), file: file, line: line) { error in
            guard let error = error as? MigrationError else {
                return XCTFail("not a MigrationError", file: file, line: line)
            }
            XCTAssertEqual(error.code, .invalidModel, file: file, line: line)
            let text = error.description
            for part in mentions {
                XCTAssertTrue(text.contains(part), "'\(part)' missing from: \(text)", file: file, line: line)
            }
        }
    }

    func testReadingErrorsNameFileElementAndLine() {
        assertError(
            """
            <model>
                <entity name="Note">
                    <attribute name="title" attributeType="Text"/>
                </entity>
            </model>
            """,
            mentions: [
                "'test.xcdatamodel/contents' line 3", "<attribute name=\"title\">", "unknown attributeType 'Text'",
            ])
        assertError(
            """
            <model>
                <entity name="Note">
                    <attribute name="title" optional="maybe" attributeType="String"/>
                </entity>
            </model>
            """, mentions: ["line 3", "'optional' must be YES or NO"])
        assertError(
            """
            <model>
                <entity name="Note">
                    <relationship name="r" maxCount="1" deletionRule="Explode" destinationEntity="Note"/>
                </entity>
            </model>
            """, mentions: ["line 3", "<relationship name=\"r\">", "unknown deletionRule 'Explode'"])
        assertError("<plist/>", mentions: ["not an Xcode model", "<plist>"])
        assertError("<model><entity/></model>", mentions: ["line 1", "<entity>", "'name' is required"])
    }

    func testValidationErrorsNameFileElementAndLine() {
        assertError(
            """
            <model>
                <entity name="Note">
                    <attribute name="body" attributeType="String"/>

                    <relationship name="folder" maxCount="1" destinationEntity="Folder" inverseName="notes"/>
                </entity>
            </model>
            """,
            mentions: [
                "'test.xcdatamodel/contents' line 5", "<relationship name=\"folder\">", "points to entity 'Folder'",
                "test.xcdatamodel/contents:5",
            ])
        assertError(
            """
            <model>
                <entity name="Note">
                    <attribute name="body" attributeType="Undefined"/>
                </entity>
            </model>
            """, mentions: ["line 3", "<attribute name=\"body\">", "must be transient"])
        assertError(
            """
            <model>
                <entity name="Note" parentEntity="Missing"/>
            </model>
            """, mentions: ["line 2", "<entity name=\"Note\">", "'Missing'"])
    }

    func testCurrentVersionFileErrors() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "cdmigrate-xccv-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let marker = directory.appendingPathComponent(".xccurrentversion").path
        try "<plist version=\"1.0\">\n<dict>\n<key>Other</key><string>x</string>\n</dict>\n</plist>".write(
            toFile: marker, atomically: true, encoding: .utf8)
        XCTAssertNil(
            try XcodeModelBundle.currentVersion(file: marker), "a dictionary naming no version reads as no file")
        try "<plist version=\"1.0\">\n<dict>\n<key>_XCCurrentVersionName</key>\n</dict>\n</plist>".write(
            toFile: marker, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try XcodeModelBundle.currentVersion(file: marker)) { error in
            XCTAssertTrue("\(error)".contains("line 3"), "\(error)")
            XCTAssertTrue("\(error)".contains("_XCCurrentVersionName"), "\(error)")
        }
        try "<array/>".write(toFile: marker, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try XcodeModelBundle.currentVersion(file: marker)) { error in
            XCTAssertTrue("\(error)".contains("not a property list"), "\(error)")
        }
        XCTAssertThrowsError(try XcodeModelBundle.versions(contentsOf: directory.path)) { error in
            XCTAssertTrue("\(error)".contains("no model version"), "\(error)")
        }
    }

    /// Xcode leaves `<uniquenessConstraint/>` when a constraint row is added in the editor and
    /// never filled (a shipped photo app's current model has one on its User entity); momc builds
    /// the model. It constrains nothing: the reader leaves it out with a warning naming the line,
    /// and the entity hashes as it would without it (empty constraints are not hashed), so stores
    /// the app wrote are still recognised.
    func testEmptyUniquenessConstraintIsLeftOutWithAWarning() throws {
        func xml(_ constraints: String) -> String {
            """
            <model>
                <entity name="User" representedClassName="User" syncable="YES">
                    <attribute name="name" attributeType="String" defaultValueString=""/>
                    <attribute name="id" attributeType="Integer 16" defaultValueString="0" usesScalarValueType="YES"/>\(constraints)
                </entity>
                <entity name="Album" representedClassName="Album" syncable="YES">
                    <attribute name="uuid" attributeType="String" defaultValueString=""/>
                    <uniquenessConstraints>
                        <uniquenessConstraint>
                            <constraint value="uuid"/>
                        </uniquenessConstraint>
                    </uniquenessConstraints>
                </entity>
            </model>
            """
        }
        let empty = try read(
            xml(
                """

                            <uniquenessConstraints>
                                <uniquenessConstraint/>
                            </uniquenessConstraints>
                """))
        let none = try read(xml(""))
        let user = try XCTUnwrap(empty.entity(named: "User"))
        XCTAssertEqual(user.uniquenessConstraints, [])
        XCTAssertEqual(empty.entity(named: "Album")?.uniquenessConstraints, [["uuid"]], "filled constraints stay")
        let warnings = empty.warnings.joined(separator: "\n")
        XCTAssertTrue(warnings.contains("line 6"), warnings)
        XCTAssertTrue(warnings.contains("empty uniqueness constraint of entity 'User'"), warnings)
        XCTAssertEqual(empty.warnings.count, 1, warnings)
        XCTAssertEqual(user.versionHash, none.entity(named: "User")?.versionHash)
        XCTAssertEqual(empty.versionHashesDigest, none.versionHashesDigest)
        // A constraint that names a property that is not there is still an error.
        assertError(
            xml(
                """

                            <uniquenessConstraints>
                                <uniquenessConstraint>
                                    <constraint value="nmae"/>
                                </uniquenessConstraint>
                            </uniquenessConstraints>
                """), mentions: ["'nmae'", "not one of its properties"])
    }

}
