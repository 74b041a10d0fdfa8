import Foundation
import XCTest

@testable import CDMigrate

/// Writing Z_MODELCACHE: the model's keyed archive (CompiledModelWriter), deflated as Core Data
/// deflates it, read back by the same reader that reads Apple's caches.
final class ModelCacheWriterTests: XCTestCase {
    var scratch: ScratchDirectory!
    override func setUp() { scratch = ScratchDirectory() }
    override func tearDown() { scratch = nil }

    static var fixtures: String { TestPaths.fixtures }

    /// Every model in the fixtures, by a short name: Apple's compiled models, Apple's stores'
    /// caches, the Xcode models (every version) and the JSON models.
    func fixtureModels() throws -> [(String, ManagedObjectModel)] {
        var models: [(String, ManagedObjectModel)] = []
        let root = Self.fixtures
        for version in ["1_0_0", "1_1_0", "2_0_0"] {
            let base = "xcode/XcodeServer/\(version)/"
            models.append(
                (
                    "\(base)XcodeServer.mom",
                    try CompiledModelReader.model(
                        contentsOf: root + "/" + base + "XcodeServer.momd_precompiled/XcodeServer.mom")
                ))
            models.append(
                (
                    "\(base)XcodeServer.xcdatamodel",
                    try ManagedObjectModel(
                        contentsOf: root + "/" + base + "XcodeServer.xcdatamodeld/XcodeServer.xcdatamodel")
                ))
        }
        for version in StoreModelCacheTests.renameVersions {
            let store = try copyFixtureStore("apple-stores/renames/Example_v\(version).sqlite", into: scratch.path)
            models.append(("renames cache v\(version)", try XCTUnwrap(try StoreModelCache.model(fromStoreAt: store))))
            models.append(
                (
                    "renames v\(version).xcdatamodel",
                    try ManagedObjectModel(
                        contentsOf: root + "/apple-stores/renames/Model.xcdatamodeld/v\(version).xcdatamodel")
                ))
            models.append(
                (
                    "renames-v\(version).json",
                    try ManagedObjectModel(contentsOf: root + "/json-models/renames-v\(version).json")
                ))
        }
        for name in [
            "UnCloudNotesDataModel", "UnCloudNotesDataModel_v2", "UnCloudNotesDataModel_v3", "UnCloudNotesDataModel_v4",
        ] {
            models.append(
                (
                    name,
                    try ManagedObjectModel(
                        contentsOf: root + "/xcode/UnCloudNotes/UnCloudNotesDataModel.xcdatamodeld/\(name).xcdatamodel")
                ))
        }
        models.append(
            (
                "CoreDataBooks",
                try ManagedObjectModel(
                    contentsOf: root + "/xcode3/CoreDataBooks/CoreDataBooks.xcdatamodeld/CoreDataBooks.xcdatamodel")
            ))
        models.append(("notes-v7.json", try ManagedObjectModel(contentsOf: root + "/json-models/notes-v7.json")))
        for name in ["photos-v1", "photos-v2", "photos-v3", "photos-plain"] {
            models.append((name, try ManagedObjectModel(contentsOf: root + "/external-data/\(name).json")))
        }
        return models
    }

    /// Everything a model keeps that a cache must carry, beyond `ModelStructure.lines`.
    static func details(_ model: ManagedObjectModel) -> [String] {
        var lines = ModelStructure.lines(model)
        lines.append("versionIdentifier \(model.versionIdentifier ?? "-")")
        for entity in model.entities.sorted(by: { $0.name < $1.name }) {
            lines.append("hash \(entity.name) \(VersionHash.hex(entity.versionHash))")
            lines.append("class \(entity.name) \(entity.managedObjectClassName ?? "-")")
            lines.append("unique \(entity.name) \(entity.uniquenessConstraints)")
            for index in entity.fetchIndexes {
                lines.append(
                    "index \(entity.name).\(index.name) "
                        + index.elements.map { "\($0.propertyName ?? "-"):\($0.type.rawValue):\($0.isAscending)" }
                        .joined(separator: ","))
            }
            for property in ((entity.ownAttributes as [PropertyDescription]) + entity.ownRelationships).sorted(by: {
                $0.name < $1.name
            }) {
                lines.append(
                    "property \(entity.name).\(property.name) indexed=\(property.isIndexed) hash=\(VersionHash.hex(property.versionHash))"
                )
            }
            for attribute in entity.ownAttributes.sorted(by: { $0.name < $1.name }) {
                lines.append(
                    "attribute \(entity.name).\(attribute.name) preserves=\(attribute.preservesValueInHistoryOnDeletion)"
                )
            }
        }
        return lines
    }

    func testEveryFixtureModelReadsBackFromItsCacheAsTheSameModel() throws {
        let models = try fixtureModels()
        XCTAssertEqual(models.count, 31)
        for (name, model) in models {
            let blob = try XCTUnwrap(try StoreModelCache.compressedArchive(of: model), name)
            let archive = try Inflate.inflate(
                blob, limit: StoreModelCache.defaultLimit, code: .invalidModel, what: name)
            XCTAssertEqual(Array(archive.prefix(8)), Array("bplist00".utf8), name)
            let back = try CompiledModelReader.model(fromArchive: archive, name: model.name, what: name)
            XCTAssertEqual(
                Self.details(back), Self.details(model), name + "\n" + ModelStructure.difference(back, model))
            XCTAssertEqual(back.entityVersionHashes, model.entityVersionHashes, name)
            XCTAssertEqual(back.versionHash, model.versionHash, name)
            // Writing is deterministic: the same model, the same bytes.
            XCTAssertEqual(try XCTUnwrap(try StoreModelCache.compressedArchive(of: back)), blob, name)
        }
    }

    func testTheCacheIsDeflatedAsApplesCompressionLibraryDeflates() throws {
        // Apple's caches are raw DEFLATE at zlib level 5 (COMPRESSION_ZLIB): deflating Apple's own
        // inflated archive gives Apple's blob byte for byte.
        for version in StoreModelCacheTests.renameVersions {
            let path = try copyFixtureStore("apple-stores/renames/Example_v\(version).sqlite", into: scratch.path)
            let database = try SQLiteDatabase(path: path, mode: .readOnly)
            defer { database.close() }
            let blob = try XCTUnwrap(try StoreModelCache.compressedArchive(in: database))
            let archive = try Inflate.inflate(blob, limit: 1 << 20, code: .invalidModel, what: version)
            XCTAssertEqual(try Deflate.deflate(archive, what: version), blob, version)
        }
        // Empty and incompressible input still make streams zlib reads back.
        var generator = SplitMix64(seed: 5)
        for bytes in [[UInt8](), [0], (0..<70_000).map { _ in UInt8(truncatingIfNeeded: generator.next()) }] {
            let deflated = try Deflate.deflate(bytes, what: "bytes")
            if bytes.isEmpty {
                XCTAssertFalse(deflated.isEmpty)
            } else {
                XCTAssertEqual(try Inflate.inflate(deflated, limit: 1 << 20, code: .io, what: "bytes"), bytes)
            }
        }
    }

    /// Class name → the sorted keys of each of its instances, over an archive.
    static func classKeyShapes(_ archive: KeyedArchive) throws -> [String: Set<[String]>] {
        var shapes: [String: Set<[String]>] = [:]
        for index in archive.objects.indices {
            guard case .dictionary = archive.objects[index], archive.objects[index]["$class"] != nil else { continue }
            let object = try archive.object(KeyedArchive.Reference(index))
            shapes[object.className, default: []].insert(object.keys.sorted())
        }
        return shapes
    }

    func testTheCacheHasTheClassesAndKeysOfApplesCaches() throws {
        for version in StoreModelCacheTests.renameVersions {
            let path = try copyFixtureStore("apple-stores/renames/Example_v\(version).sqlite", into: scratch.path)
            let database = try SQLiteDatabase(path: path, mode: .readOnly)
            defer { database.close() }
            let apple = try KeyedArchive(
                bytes: try Inflate.inflate(
                    try XCTUnwrap(try StoreModelCache.compressedArchive(in: database)), limit: 1 << 20,
                    code: .invalidModel, what: "apple"),
                code: .invalidModel, what: "Apple's cache v\(version)")
            let model = try ManagedObjectModel(contentsOf: Self.fixtures + "/json-models/renames-v\(version).json")
            let ours = try KeyedArchive(
                bytes: try CompiledModelWriter.archive(model), code: .invalidModel, what: "our cache v\(version)")
            var appleShapes = try Self.classKeyShapes(apple)
            let ourShapes = try Self.classKeyShapes(ours)
            // Apple's runtime copies renaming identifiers as NSMutableString objects; cdmigrate
            // writes plain strings (docs/store-layout.md, model cache): decoded the same.
            appleShapes["NSMutableString"] = nil
            XCTAssertEqual(ourShapes, appleShapes, "v\(version)")
        }
    }

    func testTheModelClassesHaveTheKeysOfApplesCompiledModels() throws {
        // Relationships, fetch indexes and their elements are not in the renames caches: their
        // shapes are compared with Apple's compiled XcodeServer models (the same encoder wrote them).
        for version in ["1_0_0", "1_1_0", "2_0_0"] {
            let path = Self.fixtures + "/xcode/XcodeServer/\(version)/XcodeServer.momd_precompiled/XcodeServer.mom"
            let apple = try KeyedArchive(
                bytes: try XCTUnwrap(fileBytes(path)), code: .invalidModel, what: "Apple's \(version)")
            let ours = try KeyedArchive(
                bytes: try CompiledModelWriter.archive(try CompiledModelReader.model(contentsOf: path)),
                code: .invalidModel, what: "ours \(version)")
            let appleShapes = try Self.classKeyShapes(apple)
            let ourShapes = try Self.classKeyShapes(ours)
            for className in [
                "NSEntityDescription", "NSAttributeDescription", "NSRelationshipDescription", "NSFetchIndexDescription",
                "NSFetchIndexElementDescription",
            ] {
                XCTAssertEqual(ourShapes[className], appleShapes[className], "\(className) \(version)")
            }
        }
    }

    func testAMigratedStoreCachesTheDestinationModel() throws {
        let source = try ManagedObjectModel(contentsOf: Self.fixtures + "/json-models/renames-v1.0.0.json")
        let destination = try ManagedObjectModel(contentsOf: Self.fixtures + "/json-models/renames-v1.1.0.json")
        let sourcePath = scratch.file("v1.sqlite")
        try makeStore(sourcePath, source) { store in
            _ = try insert(store, "BasicEntity", ["v1_0_0_name": .string("A Known Value")])
        }
        let manager = try MigrationManager(
            sourceModel: source, destinationModel: destination,
            mappingModels: [try MappingModel.inferred(from: source, to: destination)])
        let migrated = scratch.file("v2.sqlite")
        try manager.migrateStore(from: sourcePath, to: migrated)
        let cached = try XCTUnwrap(try StoreModelCache.model(fromStoreAt: migrated))
        XCTAssertEqual(Self.details(cached), Self.details(destination), ModelStructure.difference(cached, destination))
        // The store's own model (what `cdmigrate inspect` and Model.from_store read) is the cache.
        let own = try ManagedObjectModel(ofStoreAt: migrated)
        XCTAssertFalse(own.isRecovered)
        XCTAssertEqual(own.entityVersionHashes, destination.entityVersionHashes)
        // One row, raw DEFLATE at Apple's level: Apple's reader inflates it as NSData(zlib).
        let database = try SQLiteDatabase(path: migrated, mode: .readOnly)
        defer { database.close() }
        XCTAssertEqual(try database.rows("SELECT COUNT(*) FROM Z_MODELCACHE").first?.first?.integer, 1)
    }

    func testAStoreMigratesAgainWithItsCacheAsTheOnlySourceModel() throws {
        // UnCloudNotes v1 → v2 (inferred), then v2 → v3 with nothing but the store's cache as the source model.
        let folder = Self.fixtures + "/xcode/UnCloudNotes/UnCloudNotesDataModel.xcdatamodeld/"
        let v1 = try ManagedObjectModel(contentsOf: folder + "UnCloudNotesDataModel.xcdatamodel")
        let v2 = try ManagedObjectModel(contentsOf: folder + "UnCloudNotesDataModel_v2.xcdatamodel")
        let first = scratch.file("v1.sqlite")
        try makeStore(first, v1) { store in
            let note = try insert(
                store, "Note", ["title": .string("Groceries"), "body": .string("milk"), "dateCreated": .date(1000)])
            _ = note
        }
        let second = scratch.file("v2.sqlite")
        try MigrationManager(
            sourceModel: v1, destinationModel: v2, mappingModels: [try MappingModel.inferred(from: v1, to: v2)]
        )
        .migrateStore(from: first, to: second)
        let cached = try XCTUnwrap(try StoreModelCache.model(fromStoreAt: second))
        let third = scratch.file("v2-again.sqlite")
        // The cache is the source model: its hashes match the store's metadata, so the store opens with it.
        try MigrationManager(
            sourceModel: cached, destinationModel: v1, mappingModels: [try MappingModel.inferred(from: cached, to: v1)]
        )
        .migrateStore(from: second, to: third)
        let store = try PersistentStore.open(at: third, model: v1, readOnly: true)
        defer { store.close() }
        let notes = try fetchAll(store, "Note")
        XCTAssertEqual(notes.count, 1)
        XCTAssertEqual(try notes.first?.value(forKey: "title"), .string("Groceries"))
        XCTAssertEqual(try StoreModelCache.model(fromStoreAt: third).map { Self.details($0) }, Self.details(v1))
    }

    func testAModelWithEveryKindOfDetailRoundTrips() throws {
        let json = """
            {"versionIdentifier": "v7", "entities": [
              {"name": "Base", "abstract": true, "className": "App.Base", "userInfo": {"k": "v"}, "versionHashModifier": "m1",
               "uniquenessConstraints": [["code"], ["code", "label"]],
               "fetchIndexes": [{"name": "byCodeLabel", "elements": [{"property": "code"}, {"property": "label", "ascending": false}]}],
               "attributes": [
                 {"name": "code", "type": "integer32", "optional": false, "default": 7, "minValue": -3, "maxValue": 90, "indexed": true},
                 {"name": "label", "type": "string", "minValue": 1, "maxValue": 40, "renamingIdentifier": "title", "userInfo": {"a": "b", "ünï": "✓ 日本 🎉"}, "default": "Grüße 🎉"},
                 {"name": "price", "type": "decimal", "default": "-12.5"},
                 {"name": "cost", "type": "decimal", "default": "1234567890.0625"},
                 {"name": "ratio", "type": "double", "default": 0.25, "minValue": 0.5},
                 {"name": "flag", "type": "boolean", "default": true},
                 {"name": "stamp", "type": "date", "default": 12.5},
                 {"name": "blob", "type": "binary", "allowsExternalBinaryDataStorage": true, "preservesValueInHistoryOnDeletion": true},
                 {"name": "ident", "type": "uuid", "default": "00112233-4455-6677-8899-AABBCCDDEEFF"},
                 {"name": "link", "type": "uri", "default": "https://example.com/a"},
                 {"name": "info", "type": "transformable", "valueTransformerName": "NSSecureUnarchiveFromData"},
                 {"name": "scratch", "type": "string", "transient": true, "versionHashModifier": "m2"}
               ]},
              {"name": "Child", "parent": "Base", "attributes": [{"name": "extra", "type": "float", "default": 1.5}],
               "relationships": [{"name": "owner", "destination": "Owner", "inverse": "children", "deleteRule": "nullify", "indexed": true}]},
              {"name": "Owner", "relationships": [
                 {"name": "children", "destination": "Child", "inverse": "owner", "toMany": true, "ordered": true, "deleteRule": "cascade", "minCount": 1, "maxCount": 9},
                 {"name": "friends", "destination": "Owner", "inverse": "friends", "toMany": true, "deleteRule": "deny"}]}
            ]}
            """
        let model = try ManagedObjectModel(json: json)
        let back = try CompiledModelReader.model(fromArchive: try CompiledModelWriter.archive(model))
        XCTAssertEqual(Self.details(back), Self.details(model), ModelStructure.difference(back, model))
        XCTAssertEqual(
            back.entity(named: "Base")?.attribute(named: "cost")?.defaultValue.description, "1234567890.0625")
        XCTAssertTrue(
            try XCTUnwrap(back.entity(named: "Base")?.attribute(named: "blob")).preservesValueInHistoryOnDeletion)
        XCTAssertEqual(back.entity(named: "Base")?.uniquenessConstraints, [["code"], ["code", "label"]])
        XCTAssertEqual(back.entity(named: "Base")?.managedObjectClassName, "App.Base")
        XCTAssertEqual(back.versionIdentifier, "v7")
        XCTAssertEqual(back.entity(named: "Child")?.relationship(named: "owner")?.isIndexed, true)
    }

    func testDecimalDefaultsKeepTheirDigits() throws {
        for text in [
            "0", "1", "-1", "12.5", "-0.001", "123456789012345678901234567890", "1e5", "3.4028e-20",
            "99999999999999999999999999999999999999",
        ] {
            let parts = try XCTUnwrap(DecimalParts(text), text)
            let writer = KeyedArchiveWriter(what: text)
            let root = writer.encode(nil, classes: ["NSDecimalNumber", "NSNumber", "NSValue"]) {
                [
                    ("NS.exponent", .integer(Int64(parts.exponent))), ("NS.length", .integer(Int64(parts.length))),
                    ("NS.negative", .bool(parts.negative)), ("NS.mantissa.bo", .integer(1)),
                    ("NS.mantissa", .data(parts.mantissaBytes)),
                ]
            }
            let archive = try KeyedArchive(bytes: try writer.archive(root: root), code: .invalidModel, what: text)
            let decoded = try archive.decode(try archive.topReference())
            guard case .decimal(let back) = decoded else { return XCTFail("\(text): \(decoded)") }
            XCTAssertEqual(Double(back), Double(text), text)
        }
        for text in [
            "", "-", "1.2.3", "abc", "1e999999", "1e200", "1e-9223372036854775808", "1e9223372036854775807", "1x",
        ] {
            XCTAssertNil(DecimalParts(text), text)
        }
    }

    func testAnObjectReferredToButNeverWrittenIsAnError() throws {
        let writer = KeyedArchiveWriter(what: "a broken archive")
        let root = writer.encode(nil, classes: ["NSManagedObjectModel"]) {
            [("NSEntities", writer.reference(to: "entity:Missing"))]
        }
        XCTAssertThrowsError(try writer.archive(root: root)) { error in
            XCTAssertEqual((error as? MigrationError)?.code, .invalidModel)
            XCTAssertTrue("\(error)".contains("entity:Missing"), "\(error)")
        }
    }

    /// A model with derived attributes of every kind Core Data maintains in SQLite.
    static let derivedModel = """
        {"name": "Lists", "entities": [
          {"name": "List", "attributes": [{"name": "name", "type": "string"},
             {"name": "itemCount", "type": "int64", "derivationExpression": "items.@count"},
             {"name": "total", "type": "double", "derivationExpression": "items.price.@sum"},
             {"name": "cheapest", "type": "double", "derivationExpression": "items.price.@min"},
             {"name": "dearest", "type": "double", "derivationExpression": "items.price.@max"},
             {"name": "searchName", "type": "string", "derivationExpression": "canonical:(name)"},
             {"name": "shout", "type": "string", "derivationExpression": "uppercase:(name)"},
             {"name": "quiet", "type": "string", "derivationExpression": "lowercase:(name)"},
             {"name": "copy", "type": "string", "derivationExpression": "name"},
             {"name": "touched", "type": "date", "derivationExpression": "now()"}],
           "relationships": [{"name": "items", "destination": "Item", "inverse": "list", "toMany": true}]},
          {"name": "Item", "attributes": [{"name": "title", "type": "string"}, {"name": "price", "type": "double"},
             {"name": "listName", "type": "string", "derivationExpression": "list.name"},
             {"name": "quietListName", "type": "string", "derivationExpression": "lowercase:(list.name)"}],
           "relationships": [{"name": "list", "destination": "List", "inverse": "items"}]}]}
        """

    func testDerivedAttributesAreArchivedAndReadBackAsTheSameVersion() throws {
        let model = try ManagedObjectModel(json: Self.derivedModel)
        let blob = try XCTUnwrap(
            try StoreModelCache.compressedArchive(of: model), "a model with derived attributes gets a cache")
        let archive = try Inflate.inflate(
            blob, limit: StoreModelCache.defaultLimit, code: .invalidModel, what: "the cache")
        let back = try CompiledModelReader.model(fromArchive: archive, name: "Lists")
        XCTAssertEqual(back.entityVersionHashes, model.entityVersionHashes)
        for entity in model.entities {
            for attribute in entity.attributes {
                let read = back.entity(named: entity.name)?.attribute(named: attribute.name)
                XCTAssertEqual(
                    read?.derivationExpression.map(DerivationForm.keptText),
                    attribute.derivationExpression.map(DerivationForm.keptText), "\(entity.name).\(attribute.name)")
                XCTAssertEqual(read?.versionHash, attribute.versionHash, "\(entity.name).\(attribute.name)")
            }
        }
        // Held as Core Data holds them: a to-many count and sum as functions, min/max as key paths.
        let list = try XCTUnwrap(back.entity(named: "List"))
        XCTAssertEqual(list.attribute(named: "itemCount")?.derivationExpression, "count:(items)")
        XCTAssertEqual(list.attribute(named: "total")?.derivationExpression, "sum:(items.price)")
        XCTAssertEqual(list.attribute(named: "dearest")?.derivationExpression, "items.price.@max")
        XCTAssertEqual(list.attribute(named: "touched")?.derivationExpression, "now()")
        XCTAssertEqual(list.attribute(named: "quiet")?.derivationExpression, "lowercase:(name)")
        XCTAssertEqual(back.entity(named: "Item")?.attribute(named: "listName")?.derivationExpression, "list.name")
        XCTAssertNil(list.attribute(named: "name")?.derivationExpression)
    }

    func testADerivedAttributeIsArchivedWithFoundationsClassesAndKeys() throws {
        let model = try ManagedObjectModel(json: Self.derivedModel)
        let archive = try KeyedArchive(
            bytes: try CompiledModelWriter.archive(model), code: .invalidModel, what: "the archive")
        var derived: [String: ArchivedObject] = [:]
        for index in 1..<archive.objects.count {
            guard let object = try? archive.object(KeyedArchive.Reference(index)) else { continue }
            if object.className == "NSDerivedAttributeDescription", let name = try object.string("NSPropertyName") {
                derived[name] = object
            }
        }
        XCTAssertEqual(derived.count, 11)
        let quiet = try XCTUnwrap(derived["quiet"])
        XCTAssertTrue(quiet.isKind(of: "NSAttributeDescription"))
        XCTAssertEqual(try quiet.value("NSFilteringPredicate"), .null)
        let function = try XCTUnwrap(try quiet.object("NSDerivationExpression"))
        XCTAssertEqual(function.className, "NSFunctionExpression")
        XCTAssertEqual(try function.integer("NSExpressionType"), 4)
        XCTAssertEqual(try function.string("NSSelectorName"), "lowercase:")
        let target = try XCTUnwrap(try function.object("NSOperand"))
        XCTAssertEqual(target.className, "NSConstantValueExpression")
        XCTAssertEqual(try target.string("NSConstantValueClassName"), "_NSPredicateUtilities")
        guard case .object(let argumentReference, _)? = try function.array("NSArguments")?.first else {
            return XCTFail("no argument")
        }
        let keyPath = try archive.object(argumentReference)
        XCTAssertEqual(keyPath.className, "NSKeyPathExpression")
        XCTAssertTrue(keyPath.isKind(of: "NSFunctionExpression"))
        XCTAssertEqual(try keyPath.string("NSSelectorName"), "valueForKeyPath:")
        XCTAssertEqual(try keyPath.object("NSOperand")?.className, "NSSelfExpression")
        XCTAssertEqual(try keyPath.object("NSOperand")?.integer("NSExpressionType"), 1)
        guard case .object(let specifierReference, _)? = try keyPath.array("NSArguments")?.first else {
            return XCTFail("no specifier")
        }
        let specifier = try archive.object(specifierReference)
        XCTAssertEqual(specifier.className, "NSKeyPathSpecifierExpression")
        XCTAssertEqual(try specifier.integer("NSExpressionType"), 10)
        XCTAssertEqual(try specifier.string("NSKeyPath"), "name")
        let now = try XCTUnwrap(try derived["touched"]?.object("NSDerivationExpression"))
        XCTAssertEqual(try now.string("NSSelectorName"), "now")
        XCTAssertEqual(try now.array("NSArguments")?.count, 0)
    }

    func testCoreDatasFormOfACountOrSumIsWhatTheVersionHashCovers() throws {
        XCTAssertEqual(DerivationForm.keptText("items.@count"), "count:(items)")
        XCTAssertEqual(DerivationForm.keptText(" items.price.@sum "), "sum:(items.price)")
        XCTAssertEqual(DerivationForm.keptText("items.price.@total"), "sum:(items.price)")
        XCTAssertEqual(DerivationForm.keptText("items.price.@max"), "items.price.@max")
        XCTAssertEqual(DerivationForm.keptText("lowercase:(name)"), "lowercase:(name)")
        XCTAssertEqual(DerivationForm.keptText("@count"), "@count")
        let keyPath = try ManagedObjectModel(
            json:
                #"{"entities": [{"name": "A", "attributes": [{"name": "n", "type": "int64", "derivationExpression": "bs.@count"}], "relationships": [{"name": "bs", "destination": "B", "inverse": "a", "toMany": true}]}, {"name": "B", "relationships": [{"name": "a", "destination": "A", "inverse": "bs"}]}]}"#
        )
        let function = try ManagedObjectModel(
            json:
                #"{"entities": [{"name": "A", "attributes": [{"name": "n", "type": "int64", "derivationExpression": "count:(bs)"}], "relationships": [{"name": "bs", "destination": "B", "inverse": "a", "toMany": true}]}, {"name": "B", "relationships": [{"name": "a", "destination": "A", "inverse": "bs"}]}]}"#
        )
        XCTAssertEqual(keyPath.entityVersionHashes, function.entityVersionHashes)
    }

    func testADerivationTheWriterDoesNotArchiveLeavesTheCacheEmpty() throws {
        // Arithmetic is not among what the writer archives: no cache rather than another version.
        let model = try ManagedObjectModel(
            json:
                #"{"entities": [{"name": "Item", "attributes": [{"name": "price", "type": "double"}, {"name": "double", "type": "double", "derivationExpression": "price * 2"}]}]}"#
        )
        XCTAssertNil(try StoreModelCache.compressedArchive(of: model))
        XCTAssertFalse(ArchivedExpressionWriter.isArchivable(try ExpressionParser.parseExpression("price * 2")))
        XCTAssertTrue(
            ArchivedExpressionWriter.isArchivable(try ExpressionParser.parseExpression("lowercase:(author.name)")))
        // A constant and a variable archive and decode back.
        let writer = KeyedArchiveWriter(what: "an expression")
        let root = ArchivedExpressionWriter.encode(
            try ExpressionParser.parseExpression("FUNCTION($source, 'stringByAppendingString:', 'x')"), writer)
        let archive = try KeyedArchive(
            bytes: try writer.archive(root: root), code: .invalidModel, what: "an expression")
        XCTAssertEqual(
            try ArchivedExpressionDecoder(archive: archive).text(of: try archive.object(try archive.topReference())),
            #"FUNCTION($source, "stringByAppendingString:", "x")"#)
    }

    func testAModelWhoseCacheWouldReadBackAsAnotherVersionGetsNoCache() throws {
        // A filtering predicate is not archived: the cache would have other version hashes than
        // the store, so the store keeps an empty cache (and its model is rebuilt from the schema).
        let folder = scratch.file("Derived.xcdatamodel")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
            <entity name="Item" representedClassName="Item" syncable="YES">
                <attribute name="title" optional="YES" attributeType="String"/>
                <attribute name="upper" optional="YES" attributeType="String" derived="YES" derivationExpression="uppercase:(title)" filteringPredicate="title != nil"/>
            </entity>
        </model>
        """.write(toFile: folder + "/contents", atomically: true, encoding: .utf8)
        let derived = try ManagedObjectModel(contentsOf: folder)
        XCTAssertNotNil(derived.entity(named: "Item")?.attribute(named: "upper")?.filteringPredicate)
        XCTAssertNil(try StoreModelCache.compressedArchive(of: derived))
        let plain = try ManagedObjectModel(
            json: #"{"entities": [{"name": "Item", "attributes": [{"name": "title", "type": "string"}]}]}"#)
        let sourcePath = scratch.file("plain.sqlite")
        try makeStore(sourcePath, plain) { store in _ = try insert(store, "Item", ["title": .string("a")]) }
        let migrated = scratch.file("derived.sqlite")
        try MigrationManager(
            sourceModel: plain, destinationModel: derived,
            mappingModels: [try MappingModel.inferred(from: plain, to: derived)]
        )
        .migrateStore(from: sourcePath, to: migrated)
        XCTAssertNil(try StoreModelCache.model(fromStoreAt: migrated))
        XCTAssertTrue(try ManagedObjectModel(ofStoreAt: migrated).isRecovered)
    }

    func testAMigratedStoreWithDerivedAttributesCachesItsModel() throws {
        let plain = try ManagedObjectModel(
            json: #"{"entities": [{"name": "Item", "attributes": [{"name": "title", "type": "string"}]}]}"#)
        let derived = try ManagedObjectModel(
            json:
                #"{"entities": [{"name": "Item", "attributes": [{"name": "title", "type": "string"}, {"name": "upper", "type": "string", "derivationExpression": "uppercase:(title)"}]}]}"#
        )
        let sourcePath = scratch.file("plain.sqlite")
        try makeStore(sourcePath, plain) { store in _ = try insert(store, "Item", ["title": .string("a")]) }
        let migrated = scratch.file("derived.sqlite")
        try MigrationManager(
            sourceModel: plain, destinationModel: derived,
            mappingModels: [try MappingModel.inferred(from: plain, to: derived)]
        )
        .migrateStore(from: sourcePath, to: migrated)
        let cached = try XCTUnwrap(try StoreModelCache.model(fromStoreAt: migrated))
        XCTAssertEqual(cached.entityVersionHashes, derived.entityVersionHashes)
        XCTAssertEqual(
            cached.entity(named: "Item")?.attribute(named: "upper")?.derivationExpression, "uppercase:(title)")
        XCTAssertFalse(try ManagedObjectModel(ofStoreAt: migrated).isRecovered)
    }
}
