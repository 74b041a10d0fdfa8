import Foundation
import ReferenceMigrations
import XCTest

@testable import CDMigrate

/// Compiled mapping models (`.cdm`): XcodeServer's, compiled by Xcode, read into the same mapping as
/// its `.xcmappingmodel` source; expressions and user info decoded from archives written by hand.
final class CompiledMappingModelTests: XCTestCase {
    static let xcodeServer = TestPaths.fixtures + "/xcode/XcodeServer/"

    func model(_ version: String) throws -> ManagedObjectModel {
        try ManagedObjectModel(contentsOf: Self.xcodeServer + version + "/XcodeServer.xcdatamodeld")
    }

    /// Everything an entity mapping says, one comparable line per part.
    func lines(_ m: EntityMapping) -> [String] {
        func hex(_ bytes: [UInt8]?) -> String { bytes.map { $0.map { String(format: "%02x", $0) }.joined() } ?? "-" }
        var lines = [
            "\(m.name) \(m.mappingType.rawValue) \(m.sourceEntityName ?? "-") -> \(m.destinationEntityName ?? "-") policy=\(m.entityMigrationPolicyClassName ?? "-")",
            "  hashes \(hex(m.sourceEntityVersionHash)) \(hex(m.destinationEntityVersionHash))",
            "  source \(m.sourceExpressionText ?? "-")",
            "  userInfo \(m.userInfo.sorted { $0.key < $1.key })",
        ]
        for p in m.attributeMappings {
            lines.append(
                "  attribute \(p.name) = \(p.valueExpressionText ?? "-") \(p.userInfo.sorted { $0.key < $1.key })")
        }
        for p in m.relationshipMappings {
            lines.append(
                "  relationship \(p.name) = \(p.valueExpressionText ?? "-") \(p.userInfo.sorted { $0.key < $1.key })")
        }
        return lines
    }

    func checkCompiledEqualsSource(from sourceVersion: String, to version: String) throws {
        let source = try model(sourceVersion)
        let destination = try model(version)
        let compiled = try MappingModel(
            contentsOf:
                Self.xcodeServer + version + "/MappingModel.cdm_precompiled", sourceModel: source,
            destinationModel: destination)
        let written = try MappingModel(
            contentsOf: Self.xcodeServer + version + "/MappingModel.xcmappingmodel", sourceModel: source,
            destinationModel: destination)
        XCTAssertEqual(compiled.entityMappings.count, 23)
        XCTAssertEqual(compiled.entityMappings.map { $0.name }, written.entityMappings.map { $0.name })
        for (c, w) in zip(compiled.entityMappings, written.entityMappings) {
            XCTAssertEqual(lines(c), lines(w), c.name)
            // The hashes Xcode recorded are the models' (Apple's recipe, computed here).
            XCTAssertNotNil(c.sourceEntityVersionHash, c.name)
            XCTAssertEqual(
                c.sourceEntityVersionHash, source.entity(named: c.sourceEntityName ?? "")?.versionHash, c.name)
            XCTAssertEqual(
                c.destinationEntityVersionHash, destination.entity(named: c.destinationEntityName ?? "")?.versionHash,
                c.name)
            XCTAssertNotNil(c.sourceExpression, c.name)
        }
    }

    func testXcodeServer1_1_0CompiledMappingEqualsItsXcodeSource() throws {
        try checkCompiledEqualsSource(from: "1_0_0", to: "1_1_0")
    }

    func testXcodeServer2_0_0CompiledMappingEqualsItsXcodeSource() throws {
        try checkCompiledEqualsSource(from: "1_1_0", to: "2_0_0")
    }

    func testCompiledMappingReadsWithoutModelsAndIsNamedAfterTheFile() throws {
        let mapping = try MappingModel(contentsOf: Self.xcodeServer + "2_0_0/MappingModel.cdm_precompiled")
        XCTAssertEqual(mapping.name, "MappingModel")
        XCTAssertEqual(mapping.entityMappings.first?.name, "CommitContributorToManagedCommitContributor")
        XCTAssertEqual(mapping.entityMappings.first?.mappingType, .transform)
        XCTAssertEqual(mapping.entityMappings.reduce(0) { $0 + $1.attributeMappings.count }, 162)
        XCTAssertEqual(mapping.entityMappings.reduce(0) { $0 + $1.relationshipMappings.count }, 108)
    }

    /// An archive of one entity mapping with the given value expression and user info.
    func archive(
        expression: (KeyedArchiveBuilder) -> PropertyListValue, userInfo: [(String, PropertyListValue)] = [],
        root rootClass: String = "NSMappingModel"
    ) -> [UInt8] {
        let b = KeyedArchiveBuilder()
        let value = expression(b)
        let property = b.instance(
            ["NSPropertyMapping"],
            [
                ("NSDestinationPropertyName", b.string("title")), ("NSValueExpression", value),
                ("NSUserInfo", b.dictionary(userInfo.map { (b.string($0.0), $0.1) })),
            ])
        let entity = b.instance(
            ["NSEntityMapping"],
            [
                ("NSMappingName", b.string("NoteToNote")), ("NSMappingType", .integer(5)),
                ("NSSourceEntityName", b.string("Note")), ("NSDestinationEntityName", b.string("Note")),
                ("NSAttributeMappings", b.array([property])),
                ("NSUserInfo", b.dictionary(userInfo.map { (b.string($0.0), $0.1) })),
            ])
        let root = b.instance([rootClass], [("NSEntityMappings", b.array([entity]))])
        return b.archive(root: root)
    }

    func variable(_ b: KeyedArchiveBuilder, _ name: String) -> PropertyListValue {
        b.instance(["NSVariableExpression", "NSExpression"], [("NSVariable", b.string(name))])
    }

    func keyPath(_ b: KeyedArchiveBuilder, _ base: PropertyListValue, _ key: String) -> PropertyListValue {
        let specifier = b.instance(["NSKeyPathSpecifierExpression", "NSExpression"], [("NSKeyPath", b.string(key))])
        return b.instance(
            ["NSKeyPathExpression", "NSFunctionExpression", "NSExpression"],
            [
                ("NSOperand", base), ("NSSelectorName", b.string("valueForKeyPath:")),
                ("NSArguments", b.array([specifier], chain: ["NSMutableArray", "NSArray"])),
            ])
    }

    func constant(_ b: KeyedArchiveBuilder, _ value: PropertyListValue) -> PropertyListValue {
        b.instance(["NSConstantValueExpression", "NSExpression"], [("NSConstantValue", value)])
    }

    func testTypedInExpressionsDecodeExactly() throws {
        // FUNCTION($source.title, "stringByAppendingString:", " (1)")
        let function = archive { b in
            b.instance(
                ["NSFunctionExpression", "NSExpression"],
                [
                    ("NSOperand", self.keyPath(b, self.variable(b, "source"), "title")),
                    ("NSSelectorName", b.string("stringByAppendingString:")),
                    ("NSArguments", b.array([self.constant(b, b.string(" (1)"))])),
                ])
        }
        let mapping = try CompiledMappingModelReader.mapping(fromArchive: function, name: nil, what: "test")
        let property = try XCTUnwrap(mapping.entityMappings.first?.attributeMappings.first)
        XCTAssertEqual(property.valueExpressionText, #"FUNCTION($source.title, "stringByAppendingString:", " (1)")"#)
        XCTAssertNotNil(property.valueExpression)

        // uppercase:($source.title), a built-in function, and a constant aggregate with a number and YES.
        let builtin = archive { b in
            b.instance(
                ["NSFunctionExpression", "NSExpression"],
                [
                    ("NSOperand", self.constant(b, b.string("NSPredicateUtilities"))),
                    ("NSSelectorName", b.string("uppercase:")),
                    ("NSArguments", b.array([self.keyPath(b, self.variable(b, "source"), "title")])),
                ])
        }
        XCTAssertEqual(
            try CompiledMappingModelReader.mapping(fromArchive: builtin, name: nil, what: "test").entityMappings.first?
                .attributeMappings.first?.valueExpressionText,
            "uppercase:($source.title)")
        let aggregate = archive { b in
            b.instance(
                ["NSAggregateExpression", "NSExpression"],
                [
                    (
                        "NSCollection",
                        b.array([
                            self.constant(b, .integer(2)), self.constant(b, .bool(true)),
                            self.constant(b, b.string("2")),
                        ])
                    )
                ])
        }
        XCTAssertEqual(
            try CompiledMappingModelReader.mapping(fromArchive: aggregate, name: nil, what: "test").entityMappings
                .first?.attributeMappings.first?.valueExpressionText,
            #"{2, YES, "2"}"#)
    }

    /// A copy of UnCloudNotes' v2→v3 document whose 'title' mapping (z105) holds a typed-in
    /// expression as Xcode keeps one: `valueexpressiondata`, an archived NSExpression in base64.
    func documentWithTypedInExpression(_ encoded: String) throws -> String {
        let original =
            TestPaths.fixtures + "/xcode/UnCloudNotes/UnCloudNotesMappingModel_v2_to_v3.xcmappingmodel/xcmapping.xml"
        let text = try String(contentsOfFile: original, encoding: .utf8)
        let anchor = "<attribute name=\"name\" type=\"string\">title</attribute>"
        XCTAssertTrue(text.contains(anchor))
        let changed = text.replacingOccurrences(
            of: anchor,
            with: anchor + "\n        <attribute name=\"valueexpressiondata\" type=\"binary\">\(encoded)</attribute>")
        let directory = try TemporaryDirectory.make(prefix: "cdmigrate-typed-in")
        addTeardownBlock { TemporaryDirectory.remove(directory) }
        let path = directory + "/Typed.xcmappingmodel"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        try changed.write(toFile: path + "/xcmapping.xml", atomically: true, encoding: .utf8)
        return path
    }

    func testTypedInExpressionOfAnXcodeMappingIsDecodedExactly() throws {
        let b = KeyedArchiveBuilder()
        let root = b.instance(
            ["NSFunctionExpression", "NSExpression"],
            [
                ("NSOperand", keyPath(b, variable(b, "source"), "title")),
                ("NSSelectorName", b.string("stringByAppendingString:")),
                ("NSArguments", b.array([constant(b, b.string(" (copy)"))])),
            ])
        let encoded = Data(b.archive(root: root)).base64EncodedString(options: .lineLength64Characters)
        let mapping = try XcodeMappingModelReader.read(
            path: try documentWithTypedInExpression(encoded), sourceModel: nil, destinationModel: nil)
        let title = try XCTUnwrap(mapping.entityMapping(named: "NoteToNote")?.attributeMapping(named: "title"))
        XCTAssertEqual(title.valueExpressionText, #"FUNCTION($source.title, "stringByAppendingString:", " (copy)")"#)
        XCTAssertNotNil(title.valueExpression)
        // The others keep their generated expressions, and nothing is reported as not understood.
        XCTAssertEqual(
            mapping.entityMapping(named: "NoteToNote")?.attributeMapping(named: "body")?.valueExpressionText,
            "$source.body")
        XCTAssertFalse(mapping.warnings.contains { $0.contains("valueexpressiondata") }, "\(mapping.warnings)")

        XCTAssertThrowsError(
            try XcodeMappingModelReader.read(
                path: try documentWithTypedInExpression("not*base64"), sourceModel: nil, destinationModel: nil)
        ) { error in
            let e = error as? MigrationError
            XCTAssertEqual(e?.code, .invalidMapping)
            XCTAssertTrue(e?.message.contains("z105") ?? false, e?.message ?? "")
        }
    }

    func testUserInfoValuesKeepTheTypesTheyWereArchivedAsAndRoundTripThroughJSON() throws {
        let bytes = archive(
            expression: { self.constant($0, .integer(1)) },
            userInfo: [
                ("text", .string("2")), ("count", .integer(2)), ("flag", .bool(true)), ("ratio", .real(0.5)),
                ("whole", .real(2)), ("bytes", .data([1, 2, 3])),
            ])
        let mapping = try CompiledMappingModelReader.mapping(fromArchive: bytes, name: nil, what: "test")
        func typed(_ info: [String: Value]?) -> [String: String] {
            (info ?? [:]).mapValues { "\($0.typeName) \(MappingUserInfo.text($0))" }
        }
        let expected = [
            "text": "string 2", "count": "integer 2", "flag": "boolean YES", "ratio": "double 0.5", "whole": "double 2",
            "bytes": "binary AQID",
        ]
        XCTAssertEqual(typed(mapping.entityMappings.first?.userInfo), expected)
        XCTAssertEqual(typed(mapping.entityMappings.first?.attributeMappings.first?.userInfo), expected)
        let again = try MappingModel(json: mapping.jsonText())
        XCTAssertEqual(typed(again.entityMappings.first?.userInfo), expected)
        XCTAssertEqual(typed(again.entityMappings.first?.attributeMappings.first?.userInfo), expected)
    }

    func testDamagedArchivesAreErrorsNamingTheObject() throws {
        let wrongRoot = archive(expression: { self.variable($0, "source") }, root: "NSManagedObjectModel")
        XCTAssertThrowsError(
            try CompiledMappingModelReader.mapping(fromArchive: wrongRoot, name: nil, what: "the test mapping")
        ) { error in
            let e = error as? MigrationError
            XCTAssertEqual(e?.code, .invalidMapping)
            XCTAssertTrue(e?.message.contains("not an NSMappingModel") ?? false, e?.message ?? "")
        }
        let unknown = archive { b in b.instance(["NSTernaryExpression", "NSExpression"], []) }
        XCTAssertThrowsError(
            try CompiledMappingModelReader.mapping(fromArchive: unknown, name: nil, what: "the test mapping")
        ) { error in
            XCTAssertTrue((error as? MigrationError)?.message.contains("NSTernaryExpression") ?? false)
        }
        XCTAssertThrowsError(try CompiledMappingModelReader.mapping(fromArchive: [0x62, 0x70], name: nil, what: "x")) {
            error in
            XCTAssertEqual((error as? MigrationError)?.code, .invalidMapping)
        }
        // Every prefix of a real .cdm is an error, never a trap.
        let real = try FileIO.readBytes(path: Self.xcodeServer + "1_1_0/MappingModel.cdm_precompiled")
        for length in stride(from: 0, to: real.count, by: max(1, real.count / 97)) {
            XCTAssertThrowsError(
                try CompiledMappingModelReader.mapping(fromArchive: Array(real[..<length]), name: nil, what: "x"))
        }
    }
}
