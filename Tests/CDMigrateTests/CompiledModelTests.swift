import Foundation
import XCTest

@testable import CDMigrate

/// Compiled models (`.mom`, `.momd`) read through the keyed-archive reader.
final class CompiledModelTests: XCTestCase {
    static let xcodeServerVersions = ["1_0_0", "1_1_0", "2_0_0"]

    static func bundlePath(_ version: String) -> String {
        TestPaths.fixtures + "/xcode/XcodeServer/\(version)/XcodeServer.momd_precompiled"
    }

    /// VersionInfo.plist's entity names, read straight from the property list.
    func versionInfoEntityNames(_ version: String) throws -> Set<String> {
        let plist = try BinaryPropertyList.decode(
            try FileIO.readBytes(path: CompiledModelTests.bundlePath(version) + "/VersionInfo.plist"))
        guard case .dictionary(let versions)? = plist["NSManagedObjectModel_VersionHashes"],
            case .dictionary(let entities)? = versions.first?.value
        else {
            XCTFail("no version hashes")
            return []
        }
        return Set(entities.map { $0.key })
    }

    // MARK: XcodeServer

    func testXcodeServerModelsHaveTheEntitiesOfTheirVersionInfo() throws {
        for version in CompiledModelTests.xcodeServerVersions {
            let bundle = try CompiledModelBundle(contentsOf: CompiledModelTests.bundlePath(version))
            XCTAssertEqual(bundle.currentVersionName, "XcodeServer")
            XCTAssertEqual(bundle.versionNames, ["XcodeServer"])
            let model = bundle.currentModel
            XCTAssertEqual(model.name, "XcodeServer")
            XCTAssertEqual(model.entities.count, 23, version)
            let expected = try versionInfoEntityNames(version)
            XCTAssertEqual(expected.count, 23)
            XCTAssertEqual(Set(model.entities.map { $0.name }), expected, version)
            XCTAssertEqual(Set(bundle.versionHashes["XcodeServer"]?.keys.map { $0 } ?? []), expected)
            XCTAssertTrue(bundle.versionHashes["XcodeServer"]?.values.allSatisfy { $0.count == 32 } ?? false)
        }
    }

    func testXcodeServerRelationshipsResolveWithTheirInverses() throws {
        // Counts from the Xcode sources (XcodeServer.xcdatamodel/contents): attributes,
        // relationships, to-many relationships.
        let expected: [String: (Int, Int, Int)] = [
            "1_0_0": (162, 106, 29), "1_1_0": (162, 108, 30), "2_0_0": (162, 108, 45),
        ]
        for version in CompiledModelTests.xcodeServerVersions {
            let model = try CompiledModelReader.model(
                contentsOf: CompiledModelTests.bundlePath(version) + "/XcodeServer.mom")
            let attributes = model.entities.flatMap { $0.ownAttributes }
            let relationships = model.entities.flatMap { $0.ownRelationships }
            XCTAssertEqual(attributes.count, expected[version]?.0, version)
            XCTAssertEqual(relationships.count, expected[version]?.1, version)
            XCTAssertEqual(relationships.filter { $0.isToMany }.count, expected[version]?.2, version)
            for r in relationships {
                let name = "\(r.entity?.name ?? "?").\(r.name)"
                let destination = try XCTUnwrap(r.destinationEntity, name)
                XCTAssertTrue(model.entity(named: destination.name) === destination)
                // Every relationship of this model has an inverse that points back.
                let inverse = try XCTUnwrap(r.inverseRelationship, name)
                XCTAssertTrue(inverse.inverseRelationship === r, name)
                XCTAssertEqual(r.maxCount, r.isToMany ? 0 : 1, name)
                XCTAssertFalse(r.isOrdered, name)
            }
            // Xcode writes the elements' own names as renaming identifiers: none remains.
            XCTAssertTrue(attributes.allSatisfy { $0.renamingIdentifier == nil })
            XCTAssertTrue(
                model.entities.allSatisfy { $0.renamingIdentifier == nil && $0.parent == nil && !$0.isAbstract })
        }
    }

    func testXcodeServerAttributesKeepTypesOptionalityAndDefaults() throws {
        let model = try ManagedObjectModel(contentsOf: CompiledModelTests.bundlePath("2_0_0") + "/XcodeServer.mom")
        func attribute(_ entity: String, _ name: String) throws -> AttributeDescription {
            try XCTUnwrap(model.entity(named: entity)?.attribute(named: name), "\(entity).\(name)")
        }
        let identifier = try attribute("ManagedBot", "identifier")
        XCTAssertEqual(identifier.attributeType, .string)
        XCTAssertFalse(identifier.isOptional)
        XCTAssertEqual(identifier.defaultValue, .string("f8cf876e03804ea585fe6cb54bcca396"))
        let access = try attribute("ManagedAsset", "allowAnonymousAccess")
        XCTAssertEqual(access.attributeType, .boolean)
        XCTAssertTrue(access.isOptional)
        XCTAssertEqual(access.defaultValue, .bool(false))
        XCTAssertEqual(try attribute("ManagedAsset", "size").attributeType, .integer32)
        XCTAssertEqual(try attribute("ManagedAsset", "size").defaultValue, .integer(0))
        XCTAssertEqual(try attribute("ManagedBot", "typeRawValue").attributeType, .integer16)
        XCTAssertEqual(try attribute("ManagedBot", "lastUpdate").attributeType, .date)
        XCTAssertEqual(try attribute("ManagedBot", "lastUpdate").defaultValue, .null)
        XCTAssertEqual(try attribute("ManagedIntegration", "testHierarchyData").attributeType, .binary)
        XCTAssertEqual(try attribute("ManagedIntegration", "duration").attributeType, .double)
        XCTAssertEqual(try attribute("ManagedIntegration", "duration").defaultValue, .double(0))
        let integrations = try XCTUnwrap(model.entity(named: "ManagedBot")?.relationship(named: "integrations"))
        XCTAssertTrue(integrations.isToMany)
        XCTAssertEqual(integrations.deleteRule, .cascade)
        XCTAssertEqual(integrations.destinationEntityName, "ManagedIntegration")
        XCTAssertEqual(integrations.inverseName, "bot")
        let server = try XCTUnwrap(model.entity(named: "ManagedBot")?.relationship(named: "server"))
        XCTAssertFalse(server.isToMany)
        XCTAssertEqual(server.deleteRule, .nullify)
        XCTAssertEqual(server.maxCount, 1)
        XCTAssertTrue(server.isOptional)
        // Entity numbers follow the names, as for any model.
        XCTAssertEqual(model.entitiesInStoreOrder.map { $0.name }, model.entities.map { $0.name }.sorted())
    }

    func testModelReaderOpensCompiledModelsByTheirExtension() throws {
        let folder = NSTemporaryDirectory() + "cdm-momd-\(UUID().uuidString)/Copy.momd"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: (folder as NSString).deletingLastPathComponent) }
        let source = CompiledModelTests.bundlePath("1_1_0")
        for file in ["VersionInfo.plist", "XcodeServer.mom"] {
            try FileManager.default.copyItem(atPath: source + "/" + file, toPath: folder + "/" + file)
        }
        let fromBundle = try ManagedObjectModel(contentsOf: folder)
        let fromFile = try ManagedObjectModel(contentsOf: folder + "/XcodeServer.mom")
        XCTAssertEqual(fromBundle.entities.count, 23)
        XCTAssertEqual(ModelStructure.lines(fromBundle), ModelStructure.lines(fromFile))
        // A bundle whose current version has no .mom is an error naming the file.
        try FileManager.default.removeItem(atPath: folder + "/XcodeServer.mom")
        XCTAssertThrowsError(try ManagedObjectModel(contentsOf: folder)) { error in
            XCTAssertEqual((error as? MigrationError)?.code, .io)
            XCTAssertTrue("\(error)".contains("XcodeServer.mom"), "\(error)")
        }
    }

    func testMappingModelArchivesOpenThroughTheKeyedArchiveReader() throws {
        for version in ["1_1_0", "2_0_0"] {
            let path = TestPaths.fixtures + "/xcode/XcodeServer/\(version)/MappingModel.cdm_precompiled"
            let archive = try KeyedArchive(bytes: try FileIO.readBytes(path: path), code: .invalidMapping, what: path)
            let root = try archive.object(try archive.topReference())
            XCTAssertEqual(root.className, "NSMappingModel")
            let mappings = try XCTUnwrap(try root.array("NSEntityMappings"))
            XCTAssertEqual(mappings.count, 23, version)
            let first = try archive.object(try XCTUnwrap(mappings.first?.reference))
            XCTAssertEqual(first.className, "NSEntityMapping")
            // Xcode's mapping types: 4 copy (1_1_0's mappings), 5 transform (2_0_0's, which rename the entities).
            XCTAssertEqual(try first.integer("NSMappingType"), version == "1_1_0" ? 4 : 5)
            guard case .data(let hash) = try first.value("NSSourceEntityVersionHash") else {
                return XCTFail("no source hash")
            }
            XCTAssertEqual(hash.count, 32)
            let classes = archive.classKeys()
            XCTAssertEqual(
                classes.first(where: { $0.className == "NSPropertyMapping" })?.keys,
                ["NSDestinationPropertyName", "NSPropertyTransforms", "NSUserInfo", "NSValueExpression"])
            XCTAssertEqual(classes.count, 12, "\(classes.map { $0.className })")
        }
    }

    // MARK: A hand-written archive with every flag

    /// An archive like momc's, with inheritance, an abstract entity, an ordered to-many, a
    /// transient, bounds, a renaming identifier, modifiers, user info, a transformer, external
    /// storage, and the parent's property listed again in the subentity (as a proxy and as itself).
    static func handWrittenModel(packedFlags: Bool) -> [UInt8] {
        let b = KeyedArchiveBuilder()
        let modelSlot = b.reserve()
        let parentSlot = b.reserve()
        let childSlot = b.reserve()
        let otherSlot = b.reserve()
        let attributeChain = ["NSAttributeDescription", "NSPropertyDescription"]
        let relationshipChain = ["NSRelationshipDescription", "NSPropertyDescription"]
        func flags(optional: Bool, transient: Bool = false, ordered: Bool = false) -> [(String, PropertyListValue)] {
            if packedFlags {
                var p: Int64 = 1 | 0x10 | 0x20
                if optional { p |= 2 }
                if transient { p |= 8 }
                if ordered { p |= 0x400 }
                return [("_P", .integer(p))]
            }
            var keys: [(String, PropertyListValue)] = []
            if optional { keys.append(("NSIsOptional", .bool(true))) }
            if transient { keys.append(("NSIsTransient", .bool(true))) }
            if ordered { keys.append(("NSIsOrdered", .bool(true))) }
            return keys
        }
        let title = b.instance(
            attributeChain,
            [
                ("NSPropertyName", b.string("title")), ("NSEntity", parentSlot), ("NSAttributeType", .integer(700)),
                ("NSDefaultValue", b.instance(["NSMutableString", "NSString"], [("NS.string", .string("untitled"))])),
                ("NSRenamingIdentifier", b.string("name")), ("NSVersionHashModifier", b.string("2")),
                (
                    "NSUserInfo",
                    b.dictionary(
                        [(b.string("note"), b.string("kept")), (b.string("weight"), .integer(3))],
                        chain: ["NSMutableDictionary", "NSDictionary"])
                ),
                ("NSAttributeValueClassName", b.string("NSString")), ("NSValueTransformerName", .uid(0)),
                ("NSFlagsKey", .integer(0)),
            ] + flags(optional: false))
        let cache = b.instance(
            attributeChain,
            [
                ("NSPropertyName", b.string("cache")), ("NSEntity", parentSlot), ("NSAttributeType", .integer(1000)),
                ("NSFlagsKey", .integer(4)),
            ] + flags(optional: true, transient: true))
        let colour = b.instance(
            attributeChain,
            [
                ("NSPropertyName", b.string("colour")), ("NSEntity", childSlot), ("NSAttributeType", .integer(1800)),
                ("NSValueTransformerName", b.string("NSSecureUnarchiveFromData")),
                ("NSDefaultValue", b.instance(["UIColor"], [("UIRed", .real(1))])),
            ] + flags(optional: true))
        let rank = b.instance(
            attributeChain,
            [
                ("NSPropertyName", b.string("rank")), ("NSEntity", childSlot), ("NSAttributeType", .integer(200)),
                ("NSDefaultValue", .integer(5)), ("NSFlagsKey", .integer(3)), ("NSMinValueName", .integer(1)),
                ("NSMaxValueName", .integer(10)),
            ] + flags(optional: true))
        let score = b.instance(
            attributeChain,
            [
                ("NSPropertyName", b.string("score")), ("NSEntity", childSlot), ("NSAttributeType", .integer(500)),
                ("NSDefaultValue", .real(1.5)),
            ] + flags(optional: true))
        let itemsSlot = b.reserve()
        let ownerSlot = b.reserve()
        b.instance(
            relationshipChain,
            [
                ("NSPropertyName", b.string("items")), ("NSEntity", parentSlot), ("NSDestinationEntity", otherSlot),
                ("_NSDestinationEntityName", b.string("Other")), ("NSInverseRelationship", ownerSlot),
                ("_NSInverseRelationshipName", b.string("owner")), ("NSMinCount", .integer(1)),
                ("NSMaxCount", .integer(0)),
                ("NSDeleteRule", .integer(2)),
            ] + flags(optional: true, ordered: true), slot: itemsSlot)
        b.instance(
            relationshipChain,
            [
                ("NSPropertyName", b.string("owner")), ("NSEntity", otherSlot), ("NSDestinationEntity", parentSlot),
                ("NSInverseRelationship", itemsSlot), ("NSMinCount", .integer(0)), ("NSMaxCount", .integer(1)),
                ("NSDeleteRule", .integer(3)),
            ] + flags(optional: false), slot: ownerSlot)
        let proxy = b.instance(
            ["_NSPropertyDescriptionProxy"], [("NSUnderlyingProperty", title), ("NSEntityDescription", childSlot)])
        let entityChain = ["NSEntityDescription"]
        let emptyUserInfo = b.dictionary([])
        b.instance(
            entityChain,
            [
                ("NSEntityName", b.string("Parent")), ("NSManagedObjectModel", modelSlot),
                ("NSIsAbstract", .bool(true)),
                ("NSSuperentity", .uid(0)),
                (
                    "NSSubentities",
                    b.dictionary([(b.string("Child"), childSlot)], chain: ["NSMutableDictionary", "NSDictionary"])
                ),
                (
                    "NSProperties",
                    b.dictionary([
                        (b.string("title"), title), (b.string("cache"), cache), (b.string("items"), itemsSlot),
                    ])
                ),
                ("NSUserInfo", emptyUserInfo), ("NSVersionHashModifier", b.string("p1")),
                ("NSRenamingIdentifier", b.string("Parent")),
            ], slot: parentSlot)
        b.instance(
            entityChain,
            [
                ("NSEntityName", b.string("Child")), ("NSManagedObjectModel", modelSlot), ("NSSuperentity", parentSlot),
                (
                    "NSProperties",
                    b.dictionary([
                        (b.string("title"), proxy), (b.string("cache"), cache), (b.string("colour"), colour),
                        (b.string("rank"), rank), (b.string("score"), score), (b.string("items"), itemsSlot),
                    ])
                ),
                ("NSUserInfo", b.dictionary([(b.string("role"), b.string("leaf"))])),
                ("NSRenamingIdentifier", b.string("OldChild")),
            ], slot: childSlot)
        b.instance(
            entityChain,
            [
                ("NSEntityName", b.string("Other")), ("NSManagedObjectModel", modelSlot),
                ("NSProperties", b.dictionary([(b.string("owner"), ownerSlot)])),
            ], slot: otherSlot)
        b.instance(
            ["NSManagedObjectModel"],
            [
                (
                    "NSEntities",
                    b.dictionary([
                        (b.string("Other"), otherSlot), (b.string("Child"), childSlot),
                        (b.string("Parent"), parentSlot),
                    ])
                ),
                ("NSVersionIdentifiers", b.array([b.string("v7")], chain: ["NSSet"])),
                ("NSFetchRequestTemplates", .uid(0)),
            ], slot: modelSlot)
        return b.archive(root: modelSlot)
    }

    /// The same model in the JSON format.
    static let handWrittenJSON = """
        {"name": "Hand", "versionIdentifier": "v7", "entities": [
          {"name": "Parent", "abstract": true, "versionHashModifier": "p1",
           "attributes": [
             {"name": "cache", "type": "binary", "transient": true},
             {"name": "title", "type": "string", "optional": false, "default": "untitled", "renamingIdentifier": "name",
              "versionHashModifier": "2", "userInfo": {"note": "kept", "weight": "3"}}],
           "relationships": [{"name": "items", "destination": "Other", "inverse": "owner", "toMany": true, "ordered": true,
                              "minCount": 1, "deleteRule": "cascade"}]},
          {"name": "Child", "parent": "Parent", "renamingIdentifier": "OldChild", "userInfo": {"role": "leaf"},
           "attributes": [
             {"name": "colour", "type": "transformable"},
             {"name": "rank", "type": "integer32", "default": 5, "minValue": 1, "maxValue": 10},
             {"name": "score", "type": "double", "default": 1.5}]},
          {"name": "Other", "relationships": [{"name": "owner", "destination": "Parent", "inverse": "items", "optional": false, "deleteRule": "deny"}]}
        ]}
        """

    func testAHandWrittenArchiveGivesTheModelItsJSONGives() throws {
        let json = try ManagedObjectModel(json: CompiledModelTests.handWrittenJSON)
        for packed in [true, false] {
            let model = try CompiledModelReader.model(
                fromArchive: CompiledModelTests.handWrittenModel(packedFlags: packed), name: "Hand")
            // Two attributes the JSON format has no words for.
            let colour = try XCTUnwrap(model.entity(named: "Child")?.attribute(named: "colour"))
            XCTAssertEqual(colour.valueTransformerName, "NSSecureUnarchiveFromData")
            XCTAssertTrue(
                try XCTUnwrap(model.entity(named: "Parent")?.attribute(named: "cache")).allowsExternalBinaryDataStorage)
            colour.valueTransformerName = nil
            model.entity(named: "Parent")?.attribute(named: "cache")?.allowsExternalBinaryDataStorage = false
            XCTAssertEqual(
                ModelStructure.lines(model), ModelStructure.lines(json),
                "packed flags: \(packed)\n" + ModelStructure.difference(model, json))
            XCTAssertEqual(model.versionIdentifier, "v7")
            // Inheritance: the subentity inherits, and lists only its own properties.
            let child = try XCTUnwrap(model.entity(named: "Child"))
            XCTAssertTrue(child.parent === model.entity(named: "Parent"))
            XCTAssertEqual(child.ownAttributes.map { $0.name }, ["colour", "rank", "score"])
            XCTAssertEqual(child.attributes.map { $0.name }, ["cache", "title", "colour", "rank", "score"])
            XCTAssertEqual(model.entity(named: "Parent")?.subentities.map { $0.name }, ["Child"])
            XCTAssertEqual(model.entitiesInStoreOrder.map { $0.name }, ["Other", "Parent", "Child"])
        }
    }

    func testArchiveProblemsNameTheObjectAndKey() throws {
        let b = KeyedArchiveBuilder()
        let entity = b.instance(["NSEntityDescription"], [("NSEntityName", .integer(3))])
        let root = b.instance(["NSManagedObjectModel"], [("NSEntities", b.dictionary([(b.string("E"), entity)]))])
        XCTAssertThrowsError(try CompiledModelReader.model(fromArchive: b.archive(root: root), what: "the test model"))
        { error in
            let e = error as? MigrationError
            XCTAssertEqual(e?.code, .invalidModel)
            XCTAssertTrue(e?.message.contains("the test model") ?? false, "\(error)")
            XCTAssertTrue(e?.message.contains("NSEntityDescription") ?? false, "\(error)")
            XCTAssertTrue(e?.message.contains("'NSEntityName'") ?? false, "\(error)")
        }
        // A root of another class.
        let other = KeyedArchiveBuilder()
        let mapping = other.instance(["NSMappingModel"], [])
        XCTAssertThrowsError(try CompiledModelReader.model(fromArchive: other.archive(root: mapping))) { error in
            XCTAssertTrue("\(error)".contains("NSMappingModel"), "\(error)")
        }
        // An unsupported attribute type names the attribute.
        let c = KeyedArchiveBuilder()
        let e2 = c.reserve()
        let odd = c.instance(
            ["NSAttributeDescription", "NSPropertyDescription"],
            [("NSPropertyName", c.string("odd")), ("NSEntity", e2), ("NSAttributeType", .integer(2100))])
        c.instance(
            ["NSEntityDescription"],
            [("NSEntityName", c.string("E")), ("NSProperties", c.dictionary([(c.string("odd"), odd)]))], slot: e2)
        let root3 = c.instance(["NSManagedObjectModel"], [("NSEntities", c.dictionary([(c.string("E"), e2)]))])
        XCTAssertThrowsError(try CompiledModelReader.model(fromArchive: c.archive(root: root3))) { error in
            XCTAssertTrue(
                "\(error)".contains("composite") && "\(error)".contains("E.odd"),
                "a stored composite attribute is named: \(error)")
        }
    }

    // MARK: Robustness

    /// Every truncation and many bit flips of a real .mom either decode or throw a MigrationError.
    func testDamagedCompiledModelsDecodeOrThrowMigrationErrors() throws {
        let bytes = try FileIO.readBytes(path: CompiledModelTests.bundlePath("1_0_0") + "/XcodeServer.mom")
        var errors = 0
        var decoded = 0
        func attempt(_ damaged: [UInt8]) {
            do {
                _ = try CompiledModelReader.model(fromArchive: damaged)
                decoded += 1
            } catch is MigrationError {
                errors += 1
            } catch {
                XCTFail("not a MigrationError: \(error)")
            }
        }
        // Truncations: every length up to 48, then every 499th.
        for length in Array(0..<48) + Array(stride(from: 48, to: bytes.count, by: 499)) {
            attempt(Array(bytes[0..<length]))
        }
        var generator = SplitMix64(seed: 7)
        for _ in 0..<150 {
            var damaged = bytes
            let flips = 1 + Int(generator.next() % 4)
            for _ in 0..<flips {
                let i = Int(generator.next() % UInt64(damaged.count))
                damaged[i] ^= UInt8(1 << (generator.next() % 8))
            }
            attempt(damaged)
        }
        // Flips in the trailer and offset table, where references are decided.
        for i in stride(from: max(0, bytes.count - 400), to: bytes.count, by: 3) {
            var d = bytes
            d[i] ^= 0xFF
            attempt(d)
        }
        print("damaged .mom: \(errors) errors, \(decoded) decoded")
        XCTAssertGreaterThan(errors, 200, "errors \(errors), decoded \(decoded)")
        XCTAssertGreaterThan(decoded, 0, "some flips (in strings, say) leave a readable model")
    }

    func testCyclicAndDeepContainersAreErrors() throws {
        // An array containing itself.
        let b = KeyedArchiveBuilder()
        let slot = b.reserve()
        b.instance(["NSArray"], [("NS.objects", .array([slot]))], slot: slot)
        let archive = try KeyedArchive(bytes: b.archive(root: slot), code: .invalidMapping, what: "the loop")
        XCTAssertThrowsError(try archive.decode(try archive.topReference())) { error in
            XCTAssertEqual((error as? MigrationError)?.code, .invalidMapping)
            XCTAssertTrue("\(error)".contains("contains itself"), "\(error)")
        }
        // Arrays nested 10 000 deep.
        let d = KeyedArchiveBuilder()
        var inner = d.string("bottom")
        for _ in 0..<10_000 { inner = d.array([inner]) }
        let deep = try KeyedArchive(bytes: d.archive(root: inner), code: .invalidModel, what: "the deep one")
        XCTAssertThrowsError(try deep.decode(try deep.topReference())) { error in
            XCTAssertTrue("\(error)".contains("deeper"), "\(error)")
        }
        // A shared (not cyclic) child decodes every time it is met.
        let s = KeyedArchiveBuilder()
        let shared = s.array([s.string("x")])
        let top = s.array([shared, shared])
        let sharing = try KeyedArchive(bytes: s.archive(root: top), code: .invalidModel, what: "sharing")
        XCTAssertEqual(
            try sharing.decode(try sharing.topReference()), .array([.array([.string("x")]), .array([.string("x")])]))
    }

    func testFoundationValuesDecode() throws {
        let b = KeyedArchiveBuilder()
        let uuid: [UInt8] = Array(0..<16)
        let base = b.instance(["NSURL"], [("NS.base", .uid(0)), ("NS.relative", b.string("https://example.com/a/"))])
        let root = b.dictionary(
            [
                (b.string("date"), b.instance(["NSDate"], [("NS.time", .real(12.5))])),
                (b.string("data"), b.instance(["NSMutableData", "NSData"], [("NS.data", .data([1, 2]))])),
                (b.string("uuid"), b.instance(["NSUUID"], [("NS.uuidbytes", .data(uuid))])),
                (b.string("url"), b.instance(["NSURL"], [("NS.base", base), ("NS.relative", b.string("b"))])),
                (b.string("null"), b.instance(["NSNull"], [])),
                (b.string("set"), b.array([.integer(1), .bool(true), .real(2.5)], chain: ["NSOrderedSet"])),
                (b.string("text"), b.instance(["NSMutableString", "NSString"], [("NS.string", .string("é"))])),
                (b.string("custom"), b.instance(["XYZThing"], [("k", .integer(1))])),
                (
                    b.string("price"),
                    b.instance(
                        ["NSDecimalNumber", "NSNumber"],
                        [
                            ("NS.exponent", .integer(-2)), ("NS.length", .integer(1)), ("NS.negative", .bool(true)),
                            ("NS.compact", .bool(true)),
                            ("NS.mantissa.bo", .integer(1)),
                            ("NS.mantissa", .data([0x39, 0x30] + [UInt8](repeating: 0, count: 14))),
                        ])
                ),
                (
                    b.string("huge"),
                    b.instance(
                        ["NSDecimalNumber", "NSNumber"],
                        [
                            ("NS.exponent", .integer(1)), ("NS.length", .integer(5)), ("NS.negative", .bool(false)),
                            ("NS.mantissa.bo", .integer(1)),
                            ("NS.mantissa", .data([0, 0, 0, 0, 0, 0, 0, 0, 1, 0] + [UInt8](repeating: 0, count: 6))),
                        ])
                ),
                (
                    b.string("small"),
                    b.instance(
                        ["NSDecimalNumber", "NSNumber"],
                        [
                            ("NS.exponent", .integer(-4)), ("NS.length", .integer(1)),
                            ("NS.mantissa", .data([5, 0] + [UInt8](repeating: 0, count: 14))),
                        ])
                ),
            ], chain: ["NSMutableDictionary", "NSDictionary"])
        let archive = try KeyedArchive(bytes: b.archive(root: root), code: .invalidModel, what: "values")
        let value = try archive.decode(try archive.topReference())
        XCTAssertEqual(value["date"], .date(12.5))
        XCTAssertEqual(value["data"], .data([1, 2]))
        XCTAssertEqual(value["uuid"], .uuid(uuid))
        XCTAssertEqual(value["url"], .url("https://example.com/a/b"))
        XCTAssertEqual(value["null"], .null)
        XCTAssertEqual(value["set"], .array([.integer(1), .bool(true), .real(2.5)]))
        XCTAssertEqual(value["text"], .string("é"))
        XCTAssertEqual(value["price"], .decimal("-123.45"))
        XCTAssertEqual(value["huge"], .decimal("184467440737095516160"))
        XCTAssertEqual(value["small"], .decimal("0.0005"))
        guard case .object(let reference, "XYZThing")? = value["custom"] else { return XCTFail("\(value)") }
        XCTAssertEqual(try archive.object(reference).integer("k"), 1)
        XCTAssertEqual(try archive.object(reference).keys, ["k"])
        // Not an archive at all.
        XCTAssertThrowsError(
            try KeyedArchive(bytes: BinaryPropertyList.encode(.array([])), code: .invalidModel, what: "an array"))
        XCTAssertThrowsError(
            try KeyedArchive(
                bytes: BinaryPropertyList.encode(.dictionary([("$archiver", .string("NSArchiver"))])),
                code: .invalidModel, what: "old"))
        XCTAssertThrowsError(try KeyedArchive(bytes: Array("not a plist".utf8), code: .invalidModel, what: "text"))
    }
}

/// The Xcode source of the same models, read just enough for a structural comparison (the real
/// `.xcdatamodel` reader lives elsewhere; this one knows only what the XcodeServer models use).
final class CompiledModelSourceComparisonTests: XCTestCase {
    static func sourceModel(_ version: String) throws -> ManagedObjectModel {
        let path =
            TestPaths.fixtures
            + "/xcode/XcodeServer/\(version)/XcodeServer.xcdatamodeld/XcodeServer.xcdatamodel/contents"
        let root = try XMLElement.parse(file: path)
        var entities: [EntityDescription] = []
        for e in root.children(named: "entity") {
            let entityName = e["name"] ?? ""
            var attributes: [AttributeDescription] = []
            for a in e.children(named: "attribute") {
                let type = try XCTUnwrap(AttributeType(name: a["attributeType"] ?? ""), a["attributeType"] ?? "")
                var value = Value.null
                if let text = a["defaultValueString"] {
                    let json: JSON
                    switch type {
                    case .boolean: json = .bool(text == "YES")
                    case .integer16, .integer32, .integer64: json = .integer(Int64(text) ?? 0)
                    case .double, .float: json = .double(Double(text) ?? 0)
                    default: json = .string(text)
                    }
                    if case .success(let v) = ModelReader.convertDefault(json, type: type) { value = v }
                }
                attributes.append(
                    AttributeDescription(
                        name: a["name"] ?? "", type: type, isOptional: a["optional"] == "YES",
                        isTransient: a["transient"] == "YES", defaultValue: value, renamingIdentifier: a["elementID"]))
            }
            var relationships: [RelationshipDescription] = []
            for r in e.children(named: "relationship") {
                let toMany = r["toMany"] == "YES"
                let rules: [String: DeleteRule] = [
                    "Nullify": .nullify, "Cascade": .cascade, "Deny": .deny, "No Action": .noAction,
                ]
                relationships.append(
                    RelationshipDescription(
                        name: r["name"] ?? "", destination: r["destinationEntity"] ?? "", inverse: r["inverseName"],
                        isToMany: toMany,
                        isOrdered: r["ordered"] == "YES", deleteRule: rules[r["deletionRule"] ?? "Nullify"] ?? .nullify,
                        minCount: Int(r["minCount"] ?? "0") ?? 0,
                        maxCount: r["maxCount"].flatMap { Int($0) } ?? (toMany ? 0 : 1),
                        isOptional: r["optional"] == "YES", renamingIdentifier: r["elementID"]))
            }
            entities.append(
                EntityDescription(
                    name: entityName, parent: e["parentEntity"], isAbstract: e["isAbstract"] == "YES",
                    attributes: attributes, relationships: relationships, renamingIdentifier: e["elementID"]))
        }
        return try ManagedObjectModel(name: "XcodeServer", entities: entities)
    }

    func testCompiledModelsMatchTheirXcodeSources() throws {
        for version in CompiledModelTests.xcodeServerVersions {
            let source = try CompiledModelSourceComparisonTests.sourceModel(version)
            let compiled = try CompiledModelReader.model(
                contentsOf: CompiledModelTests.bundlePath(version) + "/XcodeServer.mom")
            XCTAssertEqual(
                ModelStructure.lines(compiled), ModelStructure.lines(source),
                version + "\n" + ModelStructure.difference(compiled, source))
            XCTAssertGreaterThan(ModelStructure.lines(compiled).count, 290)
        }
    }
}
