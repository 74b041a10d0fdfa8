import Foundation
import XCTest

@testable import CDMigrate

final class ModelValidationTests: XCTestCase {
    // MARK: Helpers

    func modelError(_ json: String, file: StaticString = #filePath, line: UInt = #line) -> MigrationError? {
        do {
            _ = try ManagedObjectModel(json: json)
            XCTFail("the model loaded", file: file, line: line)
            return nil
        } catch let error as MigrationError {
            return error
        } catch {
            XCTFail("not a MigrationError: \(error)", file: file, line: line)
            return nil
        }
    }

    /// The error, or one of its underlying ones, is `.invalidModel` at `path` and mentions every text.
    func assertProblem(
        _ json: String, path: String, mentions texts: [String], file: StaticString = #filePath, line: UInt = #line
    ) {
        guard let error = modelError(json, file: file, line: line) else { return }
        XCTAssertEqual(error.code, .invalidModel, "\(error)", file: file, line: line)
        let candidates = [error] + error.underlying
        guard let problem = candidates.first(where: { $0.path == path }) else {
            return XCTFail("no problem at \(path): \(error)", file: file, line: line)
        }
        XCTAssertEqual(problem.code, .invalidModel, file: file, line: line)
        for text in texts {
            XCTAssertTrue(
                problem.message.contains(text), "'\(text)' not in: \(problem.message)", file: file, line: line)
        }
    }

    func entity(_ name: String, _ attributes: String = "", _ relationships: String = "", extra: String = "") -> String {
        "{\"name\": \"\(name)\", \"attributes\": [\(attributes)], \"relationships\": [\(relationships)]\(extra)}"
    }

    func model(_ entities: String...) -> String {
        "{\"name\": \"M\", \"entities\": [\(entities.joined(separator: ","))]}"
    }

    func attributeModel(_ type: String, _ defaultJSON: String) -> String {
        model(entity("E", "{\"name\": \"a\", \"type\": \"\(type)\", \"default\": \(defaultJSON)}"))
    }

    // MARK: Bad input

    func testNotJSONReportsLineAndColumn() {
        guard let error = modelError("{\"name\": \"M\",\n  \"entities\": [\n    {\"name\": }\n]}") else { return }
        XCTAssertEqual(error.code, .invalidJSON)
        XCTAssertTrue(error.message.contains("line 3"), error.message)
        XCTAssertTrue(error.message.contains("column"), error.message)
        guard let duplicate = modelError("{\"name\": \"M\", \"entities\": [], \"name\": \"N\"}") else { return }
        XCTAssertEqual(duplicate.code, .invalidJSON)
        XCTAssertTrue(duplicate.message.contains("duplicate"), duplicate.message)
    }

    func testRootProblems() {
        assertProblem("[]", path: "$", mentions: ["must be a JSON object"])
        assertProblem("{\"name\": \"M\"}", path: "$.entities", mentions: ["entities"])
        assertProblem("{\"entities\": null}", path: "$.entities", mentions: ["entities"])
        assertProblem("{\"entities\": [], \"entites\": []}", path: "$.entites", mentions: ["unknown key 'entites'"])
        assertProblem(model("3"), path: "$.entities[0]", mentions: ["entity must be a JSON object"])
    }

    func testUnknownAttributeType() {
        assertProblem(
            model(entity("Note", "{\"name\": \"title\", \"type\": \"text\"}")),
            path: "$.entities[0].attributes[0].type", mentions: ["Note.title", "unknown type 'text'", "integer16"])
        assertProblem(
            model(entity("Note", "{\"name\": \"title\"}")),
            path: "$.entities[0].attributes[0].type", mentions: ["Note.title", "'type' is required"])
        assertProblem(
            model(entity("Note", "{\"type\": \"string\"}")),
            path: "$.entities[0].attributes[0].name", mentions: ["Note", "'name' is required"])
    }

    func testRelationshipToMissingEntity() {
        assertProblem(
            model(entity("Note", "", "{\"name\": \"folder\", \"destination\": \"Folder\"}")),
            path: "$.entities[0].relationships[0].destination",
            mentions: ["Note.folder", "'Folder'", "not in the model"])
    }

    func testAMissingInverseIsAnErrorAndOneNotPointingBackAWarning() throws {
        assertProblem(
            model(
                entity("Note", "", "{\"name\": \"folder\", \"destination\": \"Folder\", \"inverse\": \"notes\"}"),
                entity("Folder")),
            path: "$.entities[0].relationships[0].inverse", mentions: ["Note.folder", "'notes'", "Folder"])
        let json = model(
            entity(
                "Note", "",
                """
                {"name": "folder", "destination": "Folder", "inverse": "notes"},
                {"name": "other", "destination": "Folder"}
                """),
            entity(
                "Folder", "",
                "{\"name\": \"notes\", \"destination\": \"Note\", \"inverse\": \"other\", \"toMany\": true}"))
        // As momc and Core Data: loaded, each side that is not answered kept without an inverse.
        let loaded = try ManagedObjectModel(json: json)
        XCTAssertTrue(
            loaded.warnings.contains {
                $0.contains("'Note.folder' names inverse 'Folder.notes', but that one's inverse is 'Note.other'")
            }, "\(loaded.warnings)")
        XCTAssertTrue(
            loaded.warnings.contains {
                $0.contains("'Folder.notes' names inverse 'Note.other', but that one's inverse is not set")
            }, "\(loaded.warnings)")
        XCTAssertNil(loaded.entity(named: "Note")?.relationship(named: "folder")?.inverseRelationship)
        XCTAssertNil(loaded.entity(named: "Folder")?.relationship(named: "notes")?.inverseRelationship)
    }

    func testInheritanceCycle() {
        guard
            let error = modelError(
                model(
                    entity("A", extra: ", \"parent\": \"B\""), entity("B", extra: ", \"parent\": \"C\""),
                    entity("C", extra: ", \"parent\": \"A\""), entity("D")))
        else { return }
        XCTAssertEqual(error.code, .invalidModel)
        XCTAssertEqual(
            error.underlying.map { $0.path }, ["$.entities[0].parent", "$.entities[1].parent", "$.entities[2].parent"])
        XCTAssertTrue(error.underlying[0].message.contains("'A'") && error.underlying[0].message.contains("cycle"))
        assertProblem(
            model(entity("A", extra: ", \"parent\": \"A\"")), path: "$.entities[0].parent", mentions: ["'A'", "cycle"])
        assertProblem(
            model(entity("A", extra: ", \"parent\": \"Z\"")), path: "$.entities[0].parent",
            mentions: ["'A'", "'Z'", "not in the model"])
    }

    func testDuplicateNames() {
        assertProblem(
            model(entity("Note"), entity("Folder"), entity("Note")), path: "$.entities[2].name",
            mentions: ["duplicate entity name 'Note'"])
        assertProblem(
            model(entity("Note", "{\"name\": \"t\", \"type\": \"string\"}, {\"name\": \"t\", \"type\": \"date\"}")),
            path: "$.entities[0].attributes[1].name", mentions: ["Note", "duplicate property name 't'"])
        assertProblem(
            model(
                entity(
                    "Note", "{\"name\": \"t\", \"type\": \"string\"}", "{\"name\": \"t\", \"destination\": \"Note\"}")),
            path: "$.entities[0].relationships[0].name", mentions: ["Note", "'t'"])
        let inherited = model(
            entity("Attachment", "{\"name\": \"date\", \"type\": \"date\"}"),
            entity("Image", "{\"name\": \"date\", \"type\": \"date\"}", extra: ", \"parent\": \"Attachment\""))
        assertProblem(inherited, path: "$.entities[1].attributes[0].name", mentions: ["Image", "'date'", "inherited"])
    }

    func testInvalidNames() {
        assertProblem(model(entity("1Note")), path: "$.entities[0].name", mentions: ["'1Note'"])
        assertProblem(
            model(entity("Note", "{\"name\": \"has space\", \"type\": \"string\"}")),
            path: "$.entities[0].attributes[0].name", mentions: ["'has space'", "Note"])
    }

    func testDefaultOfWrongTypeOrRange() {
        let cases: [(String, String, String)] = [
            ("integer16", "32768", "does not fit in integer16"), ("integer16", "-32769", "integer16"),
            ("integer32", "2147483648", "integer32"), ("integer16", "\"1\"", "expected an integer"),
            ("integer64", "1.5", "integer"),
            ("boolean", "1", "true or false"), ("string", "5", "string"), ("date", "\"yesterday\"", "ISO 8601"),
            ("date", "\"2017-02-30\"", "ISO 8601"), ("binary", "\"***\"", "base64"), ("uuid", "\"not-a-uuid\"", "UUID"),
            ("uuid", "\"123e4567e89b-12d3-a456-4266-14174000\"", "UUID"), ("decimal", "\"nan\"", "numeric"),
            ("decimal", "true", "numeric"), ("float", "1e39", "float"), ("double", "\"1\"", "number"),
            ("uri", "[]", "string"),
        ]
        for (type, value, text) in cases {
            assertProblem(
                attributeModel(type, value), path: "$.entities[0].attributes[0].default", mentions: ["E.a", text])
        }
    }

    func testUnknownKeysAreReported() {
        assertProblem(
            model(entity("Note", "{\"name\": \"t\", \"type\": \"string\", \"optinal\": false}")),
            path: "$.entities[0].attributes[0].optinal", mentions: ["unknown key 'optinal'", "Note.t"])
        assertProblem(
            model(entity("Note", "", "{\"name\": \"r\", \"destination\": \"Note\", \"tomany\": true}")),
            path: "$.entities[0].relationships[0].tomany", mentions: ["'tomany'", "Note.r"])
        assertProblem(
            model(entity("Note", extra: ", \"abstarct\": true")), path: "$.entities[0].abstarct",
            mentions: ["'abstarct'", "Note"])
    }

    func testWrongKeyTypes() {
        assertProblem(
            model(entity("Note", extra: ", \"abstract\": \"yes\"")), path: "$.entities[0].abstract",
            mentions: ["true or false"])
        assertProblem(
            model(
                entity("Note", extra: ", \"attributes\": {}").replacingOccurrences(of: "\"attributes\": [], ", with: "")
            ),
            path: "$.entities[0].attributes", mentions: ["array"])
        assertProblem(
            model(entity("Note", extra: ", \"versionHash\": \"abcd\"")), path: "$.entities[0].versionHash",
            mentions: ["32 bytes"])
        assertProblem(
            model(entity("Note", extra: ", \"userInfo\": {\"k\": [1]}")), path: "$.entities[0].userInfo.k",
            mentions: ["'k'"])
        assertProblem(
            model(entity("Note", "", "{\"name\": \"r\", \"destination\": \"Note\", \"deleteRule\": \"Cascade\"}")),
            path: "$.entities[0].relationships[0].deleteRule", mentions: ["Note.r", "'Cascade'", "cascade"])
    }

    func testOrderedToOneAndBadCounts() {
        func rel(_ body: String) -> String {
            model(entity("Note", "", "{\"name\": \"r\", \"destination\": \"Note\", \(body)}"))
        }
        assertProblem(
            rel("\"ordered\": true"), path: "$.entities[0].relationships[0].ordered",
            mentions: ["Note.r", "ordered but not to-many"])
        assertProblem(
            rel("\"toMany\": true, \"minCount\": 5, \"maxCount\": 2"), path: "$.entities[0].relationships[0].minCount",
            mentions: ["Note.r", "5", "2"])
        assertProblem(
            rel("\"toMany\": true, \"minCount\": -1"), path: "$.entities[0].relationships[0].minCount",
            mentions: ["Note.r", "-1"])
        assertProblem(
            rel("\"maxCount\": 3"), path: "$.entities[0].relationships[0].maxCount",
            mentions: ["Note.r", "to-one", "3"])
        assertProblem(rel("\"minCount\": 2"), path: "$.entities[0].relationships[0].minCount", mentions: ["Note.r"])
        assertProblem(
            rel("\"toMany\": true, \"maxCount\": 1.5"), path: "$.entities[0].relationships[0].maxCount",
            mentions: ["integer"])
        assertProblem(
            model(entity("Note", "{\"name\": \"n\", \"type\": \"integer32\", \"minValue\": 5, \"maxValue\": 1}")),
            path: "$.entities[0].attributes[0].minValue", mentions: ["Note.n", "5", "1"])
    }

    func testSeveralProblemsReportedTogether() {
        let json = model(
            entity(
                "Note",
                """
                {"name": "a", "type": "text"}, {"name": "b", "type": "integer16", "default": 99999}, {"name": "c", "type": "string", "typo": 1}
                """, extra: ", \"abstract\": 3"))
        guard let error = modelError(json) else { return }
        XCTAssertEqual(error.code, .invalidModel)
        XCTAssertTrue(error.message.contains("'M'"), error.message)
        XCTAssertTrue(error.message.contains("4 problems"), error.message)
        XCTAssertEqual(
            Set(error.underlying.compactMap { $0.path }),
            [
                "$.entities[0].abstract", "$.entities[0].attributes[0].type", "$.entities[0].attributes[1].default",
                "$.entities[0].attributes[2].typo",
            ])
        XCTAssertTrue(error.underlying.allSatisfy { $0.code == .invalidModel })
        XCTAssertTrue(error.description.contains("typo"))

        // Whole-model problems are collected too.
        guard
            let linked = modelError(
                model(
                    entity(
                        "Note", "",
                        """
                        {"name": "a", "destination": "X"}, {"name": "b", "destination": "Y"}
                        """), entity("Note")))
        else { return }
        XCTAssertEqual(linked.underlying.count, 3, "\(linked)")
    }

    // MARK: Good models

    func testEveryAttributeTypeWithDefaults() throws {
        let m = try ManagedObjectModel(
            json: model(
                entity(
                    "E",
                    """
                    {"name": "i16", "type": "Integer 16", "default": -32768},
                    {"name": "i32", "type": "int32", "default": 2147483647},
                    {"name": "i64", "type": "integer64", "default": -9223372036854775808},
                    {"name": "dec", "type": "decimal", "default": "12.50"},
                    {"name": "decNumber", "type": "Decimal", "default": 3},
                    {"name": "dbl", "type": "double", "default": 2.5},
                    {"name": "flt", "type": "float", "default": 1},
                    {"name": "str", "type": "String", "default": "héllo\\u0000x"},
                    {"name": "flag", "type": "bool", "default": true},
                    {"name": "isoDate", "type": "date", "default": "2017-09-12T12:55:13.695477Z"},
                    {"name": "isoOffset", "type": "date", "default": "2017-09-12T14:55:13+02:00"},
                    {"name": "numDate", "type": "date", "default": 526913713.695477},
                    {"name": "bin", "type": "Binary Data", "default": "AAEC/w=="},
                    {"name": "trans", "type": "transformable", "default": "AAEC_w"},
                    {"name": "uid", "type": "UUID", "default": "123e4567-e89b-12d3-a456-426614174000"},
                    {"name": "uid2", "type": "uuid", "default": "123E4567E89B12D3A456426614174000"},
                    {"name": "link", "type": "URI", "default": "x-coredata://S/E/p1"},
                    {"name": "none", "type": "string", "default": null}
                    """)))
        let e = try XCTUnwrap(m.entity(named: "E"))
        func d(_ name: String) -> Value { e.attribute(named: name)?.defaultValue ?? .string("missing") }
        XCTAssertEqual(e.attribute(named: "i16")?.attributeType, .integer16)
        XCTAssertEqual(d("i16"), .integer(-32768))
        XCTAssertEqual(d("i32"), .integer(2_147_483_647))
        XCTAssertEqual(d("i64"), .integer(Int64.min))
        XCTAssertEqual(d("dec"), .decimal("12.50"))
        XCTAssertEqual(d("decNumber"), .decimal("3"))
        XCTAssertEqual(d("dbl"), .double(2.5))
        XCTAssertEqual(d("flt"), .double(1))
        XCTAssertEqual(d("str"), .string("héllo\u{0}x"))
        XCTAssertEqual(d("flag"), .bool(true))
        guard case .date(let iso) = d("isoDate"), case .date(let offset) = d("isoOffset"),
            case .date(let number) = d("numDate")
        else {
            return XCTFail("dates")
        }
        XCTAssertEqual(iso, 526_913_713.695477, accuracy: 1e-6)
        XCTAssertEqual(offset, 526_913_713, accuracy: 1e-9)
        XCTAssertEqual(number, 526_913_713.695477)
        XCTAssertEqual(d("bin"), .binary([0, 1, 2, 255]))
        XCTAssertEqual(d("trans"), .binary([0, 1, 2, 255]))
        let uuid: [UInt8] = [
            0x12, 0x3E, 0x45, 0x67, 0xE8, 0x9B, 0x12, 0xD3, 0xA4, 0x56, 0x42, 0x66, 0x14, 0x17, 0x40, 0x00,
        ]
        XCTAssertEqual(d("uid"), .uuid(uuid))
        XCTAssertEqual(d("uid2"), .uuid(uuid))
        XCTAssertEqual(d("link"), .uri("x-coredata://S/E/p1"))
        XCTAssertEqual(d("none"), .null)
        XCTAssertEqual(
            e.attributes.map { $0.attributeType.coreDataCode },
            [100, 200, 300, 400, 400, 500, 600, 700, 800, 900, 900, 900, 1000, 1800, 1100, 1100, 1200, 700])
    }

    func testEntityNumberingInCoreDataOrder() throws {
        let m = try ManagedObjectModel(
            json: model(
                entity("Folder"), entity("IMAPAccount", extra: ", \"parent\": \"Account\""), entity("Attachment"),
                entity("Account"), entity("EWSFolder", extra: ", \"parent\": \"Folder\""),
                entity("EWSAccount", extra: ", \"parent\": \"Account\""),
                entity("GmailAccount", extra: ", \"parent\": \"IMAPAccount\""),
                entity("LocalAccount", extra: ", \"parent\": \"Account\"")))
        XCTAssertEqual(
            m.entitiesInStoreOrder.map { $0.name },
            [
                "Account", "EWSAccount", "IMAPAccount", "GmailAccount", "LocalAccount", "Attachment", "Folder",
                "EWSFolder",
            ])
        XCTAssertEqual(m.entitiesInStoreOrder.map { $0.entityNumber }, Array(1...8))
        XCTAssertEqual(m.entity(named: "GmailAccount")?.rootEntity.name, "Account")
        XCTAssertEqual(m.entities.map { $0.name }.first, "Folder", "declaration order is kept in entities")
    }

    func testInheritedPropertyOrderAndIndexes() throws {
        let m = try ManagedObjectModel(
            json: model(
                entity(
                    "Child", "{\"name\": \"c1\", \"type\": \"string\"}",
                    "{\"name\": \"cr\", \"destination\": \"Other\"}",
                    extra: ", \"parent\": \"Base\""),
                entity(
                    "Base", "{\"name\": \"b2\", \"type\": \"string\"}, {\"name\": \"b1\", \"type\": \"date\"}",
                    "{\"name\": \"br\", \"destination\": \"Other\", \"inverse\": \"bases\"}"),
                entity(
                    "Other", "",
                    "{\"name\": \"bases\", \"destination\": \"Base\", \"inverse\": \"br\", \"toMany\": true}"),
                entity("GrandChild", "{\"name\": \"g\", \"type\": \"integer16\"}", extra: ", \"parent\": \"Child\"")))
        let base = try XCTUnwrap(m.entity(named: "Base"))
        let child = try XCTUnwrap(m.entity(named: "Child"))
        let grand = try XCTUnwrap(m.entity(named: "GrandChild"))
        XCTAssertEqual(grand.attributes.map { $0.name }, ["b2", "b1", "c1", "g"])
        XCTAssertEqual(grand.attributes.map { $0.index }, [0, 1, 2, 3])
        XCTAssertEqual(grand.relationships.map { $0.name }, ["br", "cr"])
        XCTAssertTrue(child.attribute(named: "b1") === base.attribute(named: "b1"))
        XCTAssertTrue(grand.attribute(named: "b1")?.entity === base)
        XCTAssertEqual(child.relationship(named: "cr")?.index, 1)
        XCTAssertEqual(m.entity(named: "Other")?.relationship(named: "bases")?.inverseRelationship?.name, "br")
        XCTAssertEqual(base.relationship(named: "br")?.maxCount, 1)
        XCTAssertEqual(m.entity(named: "Other")?.relationship(named: "bases")?.maxCount, 0)
        XCTAssertEqual(base.subentities.map { $0.name }, ["Child"])
        XCTAssertTrue(grand.isKind(of: base))
        XCTAssertFalse(base.isKind(of: grand))
    }

    // MARK: Version hashes

    func hashes(_ attributes: String, extra: String = "") throws -> (
        entity: [UInt8], attribute: [UInt8], model: [UInt8]
    ) {
        let m = try ManagedObjectModel(json: model(entity("Note", attributes, extra: extra), entity("Other")))
        let note = try XCTUnwrap(m.entity(named: "Note"))
        return (note.versionHash, note.attributes.first?.versionHash ?? [], m.versionHash)
    }

    func testVersionHashes() throws {
        let plain = try hashes("{\"name\": \"title\", \"type\": \"string\"}")
        XCTAssertEqual(plain.entity.count, 32)
        XCTAssertEqual(plain.attribute.count, 32)
        XCTAssertEqual(plain.model.count, 32)
        XCTAssertEqual(
            try hashes("{\"name\": \"title\", \"type\": \"string\"}").entity, plain.entity, "stable across loads")

        // Structural changes change the hash.
        XCTAssertNotEqual(try hashes("{\"name\": \"title\", \"type\": \"date\"}").entity, plain.entity)
        XCTAssertNotEqual(
            try hashes("{\"name\": \"title\", \"type\": \"string\", \"optional\": false}").entity, plain.entity)
        XCTAssertNotEqual(
            try hashes("{\"name\": \"title\", \"type\": \"string\"}, {\"name\": \"body\", \"type\": \"string\"}")
                .entity, plain.entity)
        XCTAssertNotEqual(
            try hashes("{\"name\": \"title\", \"type\": \"string\", \"versionHashModifier\": \"2\"}").entity,
            plain.entity)
        XCTAssertNotEqual(
            try hashes("{\"name\": \"title\", \"type\": \"string\"}", extra: ", \"abstract\": true").entity,
            plain.entity)
        XCTAssertNotEqual(
            try hashes("{\"name\": \"title\", \"type\": \"string\", \"allowsExternalBinaryDataStorage\": true}").entity,
            plain.entity)
        XCTAssertNotEqual(
            try hashes("{\"name\": \"title\", \"type\": \"string\", \"preservesValueInHistoryOnDeletion\": true}")
                .entity, plain.entity)
        XCTAssertNotEqual(
            try hashes(
                "{\"name\": \"title\", \"type\": \"string\"}", extra: ", \"uniquenessConstraints\": [[\"title\"]]"
            ).entity, plain.entity)
        XCTAssertEqual(
            try hashes("{\"name\": \"title\", \"type\": \"string\", \"valueTransformerName\": \"T\"}").entity,
            plain.entity)
        XCTAssertEqual(
            try hashes("{\"name\": \"title\", \"type\": \"string\"}", extra: ", \"className\": \"NoteClass\"").entity,
            plain.entity)

        // Changes Core Data needs no migration for keep it.
        for same in [
            "{\"name\": \"title\", \"type\": \"string\", \"renamingIdentifier\": \"name\"}",
            "{\"name\": \"title\", \"type\": \"string\", \"userInfo\": {\"k\": \"v\"}}",
            "{\"name\": \"title\", \"type\": \"string\", \"default\": \"x\"}",
            "{\"name\": \"title\", \"type\": \"String\", \"comment\": \"c\"}",
        ] {
            XCTAssertEqual(try hashes(same).entity, plain.entity, same)
        }
        XCTAssertEqual(
            try hashes("{\"name\": \"title\", \"type\": \"string\"}", extra: ", \"renamingIdentifier\": \"Memo\"")
                .entity, plain.entity)
    }

    func testVersionHashOfSubentityFollowsParent() throws {
        func childHash(_ parentAttribute: String) throws -> [UInt8] {
            let m = try ManagedObjectModel(
                json: model(entity("P", parentAttribute), entity("C", extra: ", \"parent\": \"P\"")))
            return try XCTUnwrap(m.entity(named: "C")).versionHash
        }
        XCTAssertNotEqual(
            try childHash("{\"name\": \"a\", \"type\": \"string\"}"),
            try childHash("{\"name\": \"a\", \"type\": \"date\"}"))
    }

    func testTypesWithoutStorageMustBeTransientAndConstraintsNameProperties() throws {
        for type in ["undefined", "objectID", "Composite"] {
            assertProblem(
                model(entity("Note", "{\"name\": \"x\", \"type\": \"\(type)\"}")),
                path: "$.entities[0].attributes[0].type", mentions: ["must be transient"])
            XCTAssertNoThrow(
                try ManagedObjectModel(
                    json: model(entity("Note", "{\"name\": \"x\", \"type\": \"\(type)\", \"transient\": true}"))))
        }
        assertProblem(
            model(
                entity(
                    "Note", "{\"name\": \"title\", \"type\": \"string\"}",
                    extra: ", \"uniquenessConstraints\": [[\"nmae\"]]")),
            path: "$.entities[0].uniquenessConstraints[0]", mentions: ["'nmae'", "not one of its properties"])
        assertProblem(
            model(entity("Note", extra: ", \"uniquenessConstraints\": [\"title\"]")),
            path: "$.entities[0].uniquenessConstraints[0]", mentions: ["array of property names"])
    }

    func testExplicitVersionHashes() throws {
        let bytes: [UInt8] = (0..<32).map { UInt8($0 * 7 & 0xFF) }
        let hex = VersionHash.hex(bytes)
        let base64 = Base64.encode(bytes)
        for text in [hex, hex.uppercased(), base64] {
            let m = try ManagedObjectModel(
                json: model(
                    entity(
                        "Note", "{\"name\": \"t\", \"type\": \"string\", \"versionHash\": \"\(text)\"}",
                        extra: ", \"versionHash\": \"\(text)\"")))
            let note = try XCTUnwrap(m.entity(named: "Note"))
            XCTAssertEqual(note.versionHash, bytes, text)
            XCTAssertEqual(note.attribute(named: "t")?.versionHash, bytes, text)
            XCTAssertEqual(m.entityVersionHashes["Note"], bytes)
            XCTAssertEqual(m.warnings.count, 2, "entity and attribute hashes differ from Core Data's: \(m.warnings)")
        }
        // The Apple-written store's BasicEntity hash, as base64 from its metadata.
        let apple = "sm18bCK1M9WnAVtqd1RcG7Ke57yR2xrq2MANgN9iySw="
        let m = try ManagedObjectModel(json: model(entity("BasicEntity", extra: ", \"versionHash\": \"\(apple)\"")))
        XCTAssertEqual(m.entity(named: "BasicEntity")?.versionHash.prefix(4), [0xB2, 0x6D, 0x7C, 0x6C])
        assertProblem(
            model(entity("Note", extra: ", \"versionHash\": \"\(String(hex.dropLast(2)))\"")),
            path: "$.entities[0].versionHash", mentions: ["32 bytes"])
        assertProblem(
            model(entity("Note", extra: ", \"versionHash\": \"\(String(repeating: "０", count: 64))\"")),
            path: "$.entities[0].versionHash", mentions: ["32 bytes"])
    }

    func testDocumentedExampleLoads() throws {
        let docs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
            .appendingPathComponent("docs/model-format.md")
        let text = try String(contentsOf: docs, encoding: .utf8)
        let start = try XCTUnwrap(text.range(of: "```json\n"))
        let end = try XCTUnwrap(text.range(of: "```", range: start.upperBound..<text.endIndex))
        let m = try ManagedObjectModel(json: String(text[start.upperBound..<end.lowerBound]))
        XCTAssertEqual(m.entitiesInStoreOrder.map { $0.name }, ["Attachment", "ImageAttachment", "Note"])
        XCTAssertEqual(
            m.entity(named: "ImageAttachment")?.attributes.map { $0.name },
            ["dateCreated", "identifier", "width", "thumbnail"])
        XCTAssertEqual(m.entity(named: "Note")?.versionHash.prefix(2), [0xB2, 0x6D])
        XCTAssertEqual(m.warnings.count, 1, "the explicit hash differs from Core Data's: \(m.warnings)")
        XCTAssertTrue(m.warnings.first?.contains("entity 'Note'") ?? false)
    }
}
