import Foundation
import XCTest

@testable import CDMigrate

/// Reading transformable attributes: Core Data hands whoever reads one (a policy's
/// `value(forKey:)`, `$source.<key>` in a value expression, a policy method's argument) the object
/// its transformer makes of the stored bytes. For Foundation's keyed-archive transformers (and
/// none named) cdmigrate reads archives of Foundation's plain values back into values; anything
/// else stays bytes. A copy into another transformable attribute keeps the bytes unchanged.
final class TransformableReadingTests: XCTestCase {
    /// Foundation's own archive of `object` (swift-corelibs-foundation's NSKeyedArchiver).
    func archived(_ object: Any) throws -> [UInt8] {
        [UInt8](try NSKeyedArchiver.archivedData(withRootObject: object, requiringSecureCoding: false))
    }

    static let gamesModel = #"""
        {"name": "Games", "versionIdentifier": "%@", "entities": [
         {"name": "Game", "attributes": [{"name": "name", "type": "string"}, {"name": "type", "type": "transformable"},
          {"name": "icon", "type": "transformable", "optional": true, "valueTransformerName": "IconTransformer"}%@],
          "relationships": [{"name": "saves", "destination": "SaveState", "toMany": true, "inverse": "game"}]},
         {"name": "SaveState", "attributes": [{"name": "name", "type": "string"}%@],
          "relationships": [{"name": "game", "destination": "Game", "inverse": "saves"}]}]}
        """#

    static func model(_ version: String, game: String = "", save: String = "") throws -> ManagedObjectModel {
        try ManagedObjectModel(json: String(format: gamesModel, version, game, save))
    }

    func attribute(_ model: ManagedObjectModel, _ entity: String, _ name: String) throws -> AttributeDescription {
        try XCTUnwrap(model.entity(named: entity)?.attributesByName[name])
    }

    func testArchivesOfFoundationsPlainValuesReadBackAsValues() throws {
        let model = try Self.model("1")
        let type = try attribute(model, "Game", "type")
        XCTAssertEqual(
            TransformableValue.read(.binary(try archived("com.example.game.snes")), for: type),
            .string("com.example.game.snes"))
        XCTAssertEqual(
            TransformableValue.read(.binary(try archived(NSMutableString(string: "mutable"))), for: type),
            .string("mutable"))
        let array: NSArray = [
            "a", NSNumber(value: 7), NSNumber(value: 2.5), NSDate(timeIntervalSinceReferenceDate: 100),
            NSURL(string: "https://example.org/x")!, NSNull(), ["nested"] as NSArray,
        ]
        XCTAssertEqual(
            TransformableValue.read(.binary(try archived(array)), for: type),
            .collection([
                .string("a"), .integer(7), .double(2.5), .date(100), .uri("https://example.org/x"), .null,
                .collection([.string("nested")]),
            ]))
        // The engine's own archives read back the same way.
        let value = Value.collection([.string("x"), .uuid(Array(0..<16)), .decimal("12.5"), .bool(true)])
        XCTAssertEqual(
            TransformableValue.read(.binary(try TransformableValue.archive(value, what: "a test")), for: type), value)
    }

    func testWhatCannotBeReadAsAValueStaysBytes() throws {
        let model = try Self.model("1")
        let type = try attribute(model, "Game", "type")
        for object: Any in [
            NSSet(array: ["a", "b"]), NSData(bytes: [1, 2, 3] as [UInt8], length: 3),
            [NSSet(array: ["a"])] as NSArray, ["key": NSSet(array: ["a"])] as NSDictionary,
        ] {
            let bytes = try archived(object)
            XCTAssertEqual(TransformableValue.read(.binary(bytes), for: type), .binary(bytes), "\(object)")
        }
        for bytes: [UInt8] in [[1, 2, 3], Array("bplist00".utf8), Array("bplist00 truncated".utf8)] {
            XCTAssertEqual(TransformableValue.read(.binary(bytes), for: type), .binary(bytes))
        }
        // The app's own transformer: its bytes mean what only its code knows.
        let icon = try attribute(model, "Game", "icon")
        let bytes = try archived("looks like a string")
        XCTAssertEqual(TransformableValue.read(.binary(bytes), for: icon), .binary(bytes))
        // Other attribute types are never touched.
        XCTAssertEqual(
            TransformableValue.read(.binary(bytes), for: try attribute(model, "Game", "name")), .binary(bytes))
    }

    /// Xcode writes a transformer name emptied in its inspector as `valueTransformerName=""`:
    /// Core Data's default transformer, as with none named (a real model's `payload` has it).
    func testAnEmptyTransformerNameIsCoreDatasDefault() throws {
        let model = try ManagedObjectModel(
            json: #"""
                {"name": "Events", "entities": [{"name": "Event", "attributes": [
                 {"name": "payload", "type": "transformable", "optional": true, "valueTransformerName": ""}]}]}
                """#)
        let payload = try attribute(model, "Event", "payload")
        let stored = try TransformableValue.stored(.string("event 1"), for: payload)
        guard case .binary(let bytes) = stored else { return XCTFail("not archived: \(stored)") }
        XCTAssertEqual(TransformableValue.read(stored, for: payload), .string("event 1"))
        let unarchiver = try NSKeyedUnarchiver(forReadingFrom: Data(bytes))
        unarchiver.requiresSecureCoding = false
        XCTAssertEqual(unarchiver.decodeObject(forKey: NSKeyedArchiveRootObjectKey) as? String, "event 1")
    }

    final class CorePolicy: EntityMigrationPolicy {
        static var arguments: [Value] = []
        override func perform(selector: String, arguments: [Value], manager: MigrationManager) throws -> Value? {
            guard selector == "coreForGameType:" else { return nil }
            CorePolicy.arguments.append(arguments[0])
            return arguments[0].stringValue.map { .string("core for " + $0) } ?? .null
        }
    }

    /// Delta's shape: a policy method reads a game's transformable type through a key path; the
    /// type itself is copied into the next version's transformable attribute byte for byte, and
    /// into a string attribute as the string it holds.
    func testPolicyMethodsAndKeyPathsReadTheObjectAndCopiesKeepTheBytes() throws {
        let scratch = ScratchDirectory()
        let v1 = try Self.model("1")
        let v2 = try Self.model(
            "2", game: #", {"name": "typeName", "type": "string", "optional": true}"#,
            save: #", {"name": "core", "type": "string", "optional": true}"#)
        let snes = try archived(NSMutableString(string: "game.snes"))  // an archive the engine would not write
        let icon = try archived("icon bytes")
        try makeStore(scratch.file("v1.sqlite"), v1) { store in
            let game = try insert(
                store, "Game", ["name": .string("Zelda"), "type": .binary(snes), "icon": .binary(icon)])
            let save = try insert(store, "SaveState", ["name": .string("auto")])
            try save.setValue(.object(game), forKey: "game")
            XCTAssertEqual(
                try game.value(forKey: "type"), .string("game.snes"), "a policy reading the attribute gets the string")
        }
        let mapping = try MappingModel(
            json:
                #"""
                {"entityMappings": [
                 {"name": "GameToGame", "sourceEntity": "Game", "destinationEntity": "Game", "predicate": "TRUEPREDICATE",
                  "attributeMappings": {"name": "$source.name", "type": "$source.type", "icon": "$source.icon", "typeName": "$source.type"}},
                 {"name": "SaveStateToSaveState", "sourceEntity": "SaveState", "destinationEntity": "SaveState", "predicate": "TRUEPREDICATE", "policy": "CorePolicy",
                  "attributeMappings": {"name": "$source.name", "core": "FUNCTION($entityPolicy, \"coreForGameType:\", $source.game.type)"},
                  "relationshipMappings": {"game": "FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"GameToGame\", $source.game)"}}]}
                """#)
        CorePolicy.arguments = []
        let manager = try MigrationManager(sourceModel: v1, destinationModel: v2, mappingModel: mapping)
        manager.registerPolicy(named: "CorePolicy") { CorePolicy() }
        try manager.migrateStore(from: scratch.file("v1.sqlite"), to: scratch.file("v2.sqlite"))
        XCTAssertEqual(CorePolicy.arguments, [.string("game.snes")])

        let store = try PersistentStore.open(at: scratch.file("v2.sqlite"), model: v2)
        defer { store.close() }
        let game = try XCTUnwrap(fetchAll(store, "Game").first)
        let type = try attribute(v2, "Game", "type")
        XCTAssertEqual(try game.storedValue(for: type), .binary(snes), "copied byte for byte")
        XCTAssertEqual(try game.storedValue(for: try attribute(v2, "Game", "icon")), .binary(icon))
        XCTAssertEqual(try game.value(forKey: "typeName"), .string("game.snes"))
        let save = try XCTUnwrap(fetchAll(store, "SaveState").first)
        XCTAssertEqual(try save.value(forKey: "core"), .string("core for game.snes"))
    }
}
