import Foundation
import ReferenceMigrations
import XCTest

@testable import CDMigrate

/// Entity and property mappings' userInfo keeps each value's type (as NSEntityMapping.userInfo
/// does) from the mapping JSON, an Xcode mapping model's `userinfodata` and a `.cdm`, and the JSON
/// writer writes them back typed.
final class MappingUserInfoTests: XCTestCase {
    /// Type and text of every entry: `Value`'s `==` takes 2 and 2.0 and true and 1 as equal.
    func typed(_ info: [String: Value]) -> [String: String] {
        info.mapValues { "\($0.typeName) \(MappingUserInfo.text($0))" }
    }

    static let mixed: [String: String] = [
        "text": "string 2", "count": "integer 2", "ratio": "double 0.5", "whole": "double 2", "flag": "boolean YES",
        "when": "date 2024-05-01T12:00:00Z", "bytes": "binary AQID",
    ]

    func testJSONKeepsStringsNumbersBooleansDatesAndDataApartAndWritesThemBack() throws {
        let mapping = try MappingModel(
            json:
                """
                {"entityMappings": [{"name": "NoteToNote", "sourceEntity": "Note", "destinationEntity": "Note",
                  "userInfo": {"text": "2", "count": 2, "ratio": 0.5, "whole": 2.0, "flag": true,
                               "when": {"date": "2024-05-01T12:00:00Z"}, "bytes": {"data": "AQID"}},
                  "attributeMappings": [{"name": "title", "valueExpression": "$source.title", "userInfo": {"max": 40, "unit": "40"}}]}]}
                """)
        let note = try XCTUnwrap(mapping.entityMapping(named: "NoteToNote"))
        XCTAssertEqual(typed(note.userInfo), Self.mixed)
        XCTAssertEqual(typed(note.attributeMappings[0].userInfo), ["max": "integer 40", "unit": "string 40"])

        let text = mapping.jsonText()
        XCTAssertTrue(text.contains(#""count": 2,"#), text)
        XCTAssertTrue(text.contains(#""text": "2""#), text)
        XCTAssertTrue(text.contains(#""whole": 2.0"#), text)
        XCTAssertTrue(text.contains(#""flag": true"#), text)
        let again = try MappingModel(json: text)
        XCTAssertEqual(typed(try XCTUnwrap(again.entityMapping(named: "NoteToNote")).userInfo), Self.mixed)
        XCTAssertEqual(
            typed(try XCTUnwrap(again.entityMapping(named: "NoteToNote")).attributeMappings[0].userInfo),
            ["max": "integer 40", "unit": "string 40"])
    }

    func testJSONDecimalsUUIDsURIsAndUnroundedDatesSurviveAWriteAndARead() throws {
        let mapping = try MappingModel(
            json:
                """
                {"entityMappings": [{"name": "A", "sourceEntity": "Note", "destinationEntity": "Note",
                  "userInfo": {"price": {"decimal": "12.30"}, "id": {"uuid": "00112233-4455-6677-8899-AABBCCDDEEFF"},
                               "home": {"uri": "https://example.org/x"}, "instant": {"date": 0.0001}}}]}
                """)
        let expected = [
            "price": "decimal 12.30", "id": "UUID 00112233-4455-6677-8899-AABBCCDDEEFF",
            "home": "URI https://example.org/x", "instant": "date 2001-01-01T00:00:00Z",
        ]
        XCTAssertEqual(typed(try XCTUnwrap(mapping.entityMapping(named: "A")).userInfo), expected)
        let again = try MappingModel(json: mapping.jsonText())
        let info = try XCTUnwrap(again.entityMapping(named: "A")).userInfo
        XCTAssertEqual(typed(info), expected)
        guard case .date(let d)? = info["instant"] else {
            return XCTFail("not a date: \(String(describing: info["instant"]))")
        }
        XCTAssertEqual(d, 0.0001)
    }

    func testJSONUserInfoValuesOfNoKnownFormAreErrorsNamingThem() {
        for (value, problem) in [
            ("[1, 2]", "must be a string, number, boolean"), (#"{"date": "yesterday"}"#, "not an ISO 8601 date"),
            (#"{"data": "**"}"#, "not base64"), (#"{"colour": "red"}"#, "must be a string, number, boolean"),
            ("null", "must be"),
        ] {
            XCTAssertThrowsError(
                try MappingModel(
                    json:
                        """
                        {"entityMappings": [{"name": "A", "sourceEntity": "Note", "destinationEntity": "Note", "userInfo": {"bad": \(value)}}]}
                        """), value
            ) { error in
                let e = error as? MigrationError
                let all = ([e].compactMap { $0 } + (e?.underlying ?? []))
                XCTAssertTrue(
                    all.contains {
                        $0.message.contains("'bad'") && $0.message.contains(problem)
                            && ($0.path ?? "").hasSuffix("userInfo.bad")
                    },
                    "\(value): \(all.map { "\($0.path ?? "-"): \($0.message)" })")
            }
        }
    }

    // MARK: Xcode mapping models

    /// An NSDictionary archive, as the mapping editor keeps userInfo, in base64.
    func userInfoArchive(
        _ entries: [(String, PropertyListValue)],
        build: ((KeyedArchiveBuilder) -> [(PropertyListValue, PropertyListValue)])? = nil
    ) -> String {
        let b = KeyedArchiveBuilder()
        var pairs = entries.map { (b.string($0.0), $0.1) }
        if let build { pairs += build(b) }
        return Data(b.archive(root: b.dictionary(pairs))).base64EncodedString(options: .lineLength64Characters)
    }

    /// A copy of UnCloudNotes' v2→v3 mapping model with `userinfodata` on NoteToNote and its title mapping.
    func document(entity: String, title: String?) throws -> String {
        let original =
            TestPaths.fixtures + "/xcode/UnCloudNotes/UnCloudNotesMappingModel_v2_to_v3.xcmappingmodel/xcmapping.xml"
        var text = try String(contentsOfFile: original, encoding: .utf8)
        let entityAnchor = "<object type=\"XDDEVENTITYMAPPING\" id=\"z102\">"
        let titleAnchor = "<attribute name=\"name\" type=\"string\">title</attribute>"
        XCTAssertTrue(text.contains(entityAnchor) && text.contains(titleAnchor))
        text = text.replacingOccurrences(
            of: entityAnchor,
            with: entityAnchor + "\n        <attribute name=\"userinfodata\" type=\"binary\">\(entity)</attribute>")
        if let title {
            text = text.replacingOccurrences(
                of: titleAnchor,
                with: titleAnchor + "\n        <attribute name=\"userinfodata\" type=\"binary\">\(title)</attribute>")
        }
        let directory = try TemporaryDirectory.make(prefix: "cdmigrate-userinfo")
        addTeardownBlock { TemporaryDirectory.remove(directory) }
        let path = directory + "/UserInfo.xcmappingmodel"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        try text.write(toFile: path + "/xcmapping.xml", atomically: true, encoding: .utf8)
        return path
    }

    func testXcodeMappingUserInfoIsReadWithItsTypesAndRoundTripsThroughJSON() throws {
        let when = try XCTUnwrap(DateConversion.parseISO8601("2024-05-01T12:00:00Z"))
        let entity = userInfoArchive([
            ("text", .string("2")), ("count", .integer(2)), ("ratio", .real(0.5)), ("whole", .real(2)),
            ("flag", .bool(true)),
        ]) { b in
            [
                (b.string("when"), b.instance(["NSDate"], [("NS.time", .real(when))])),
                (b.string("bytes"), b.instance(["NSData"], [("NS.data", .data([1, 2, 3]))])),
            ]
        }
        let path = try document(entity: entity, title: userInfoArchive([("max", .integer(40))]))
        let mapping = try XcodeMappingModelReader.read(path: path, sourceModel: nil, destinationModel: nil)
        let note = try XCTUnwrap(mapping.entityMapping(named: "NoteToNote"))
        XCTAssertEqual(typed(note.userInfo), Self.mixed)
        XCTAssertEqual(typed(try XCTUnwrap(note.attributeMapping(named: "title")).userInfo), ["max": "integer 40"])
        XCTAssertTrue(try XCTUnwrap(note.attributeMapping(named: "body")).userInfo.isEmpty)
        XCTAssertEqual(mapping.entityMappings.count, 2)
        for other in mapping.entityMappings where other.name != "NoteToNote" {
            XCTAssertTrue(other.userInfo.isEmpty, other.name)
        }
        XCTAssertFalse(mapping.warnings.contains { $0.contains("userinfodata") }, "\(mapping.warnings)")

        let again = try MappingModel(json: mapping.jsonText())
        XCTAssertEqual(typed(try XCTUnwrap(again.entityMapping(named: "NoteToNote")).userInfo), Self.mixed)
        XCTAssertEqual(
            typed(try XCTUnwrap(again.entityMapping(named: "NoteToNote")?.attributeMapping(named: "title")).userInfo),
            ["max": "integer 40"])
    }

    func testDamagedXcodeUserInfoIsAnErrorNamingTheObject() throws {
        let notBase64 = try document(entity: "**not base64**", title: nil)
        XCTAssertThrowsError(try XcodeMappingModelReader.read(path: notBase64, sourceModel: nil, destinationModel: nil))
        { error in
            let e = error as? MigrationError
            XCTAssertEqual(e?.code, .invalidMapping)
            XCTAssertTrue(
                (e?.message.contains("z102") ?? false) && (e?.message.contains("userinfodata") ?? false),
                e?.message ?? "")
        }
        let b = KeyedArchiveBuilder()
        let array = Data(b.archive(root: b.array([b.string("x")]))).base64EncodedString()
        XCTAssertThrowsError(
            try XcodeMappingModelReader.read(
                path: try document(entity: array, title: nil), sourceModel: nil, destinationModel: nil)
        ) { error in
            XCTAssertTrue((error as? MigrationError)?.message.contains("not a dictionary") ?? false, "\(error)")
        }
        let nested = userInfoArchive([]) { b in [(b.string("list"), b.array([b.string("x")]))] }
        XCTAssertThrowsError(
            try XcodeMappingModelReader.read(
                path: try document(entity: nested, title: nil), sourceModel: nil, destinationModel: nil)
        ) { error in
            let message = (error as? MigrationError)?.message ?? ""
            XCTAssertTrue(message.contains("'list'") && message.contains("z102"), message)
        }
    }

    /// An Xcode mapping model declares intended losses through the entity mapping's User Info, as
    /// the mapping JSON does (docs/loss-report.md); a name the source entity lacks is refused.
    func testTheIntendedLossesKeyIsReadFromAnXcodeMappingModel() throws {
        let path = try document(
            entity: userInfoArchive([("cdmigrate.intendedLosses", .string("displayIndex, colour"))]), title: nil)
        let mapping = try XcodeMappingModelReader.read(path: path, sourceModel: nil, destinationModel: nil)
        let note = try XCTUnwrap(mapping.entityMapping(named: "NoteToNote"))
        XCTAssertEqual(IntendedLosses.names(of: note), ["displayIndex", "colour"])
        XCTAssertThrowsError(
            try mapping.validate(
                sourceModel: try UnCloudNotes.model(version: 2), destinationModel: try UnCloudNotes.model(version: 3))
        ) { error in
            let all =
                ([(error as? MigrationError)?.message ?? ""]
                + ((error as? MigrationError)?.underlying.map { $0.message } ?? [])).joined(separator: "\n")
            XCTAssertTrue(
                all.contains("'cdmigrate.intendedLosses' names 'colour', which source entity 'Note' does not have"), all
            )
            XCTAssertFalse(all.contains("names 'displayIndex'"), all)
        }
    }
}
