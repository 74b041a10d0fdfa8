import Foundation
import XCTest

@testable import CDMigrate

/// Values given to transformable attributes: Core Data stores what the attribute's value
/// transformer makes of them, an NSKeyedArchiver archive for Foundation's transformers (and when
/// none is named). A policy function returning `[] as NSArray` or an array of URLs, as apps'
/// mapping models do, gets that archive into the store; Foundation's unarchiver reads it back.
final class TransformableValueTests: XCTestCase {
    /// An app with screenshots kept as a transformable array (no transformer named: Core Data's
    /// default), a secure-coding one, and an image behind the app's own transformer.
    static let model =
        #"{"name": "Apps", "versionIdentifier": "%@", "entities": [{"name": "App", "attributes": [{"name": "name", "type": "string"}, {"name": "screenshotURLs", "type": "transformable", "optional": %@}, {"name": "tags", "type": "transformable", "optional": true, "valueTransformerName": "NSSecureUnarchiveFromDataTransformer"}, {"name": "icon", "type": "transformable", "optional": true, "valueTransformerName": "ImageTransformer"}]}]}"#

    static func model(_ version: String, screenshotsOptional: Bool) throws -> ManagedObjectModel {
        try ManagedObjectModel(json: String(format: model, version, screenshotsOptional ? "true" : "false"))
    }

    final class ScreenshotPolicy: EntityMigrationPolicy {
        override func perform(selector: String, arguments: [Value], manager: MigrationManager) throws -> Value? {
            switch selector {
            case "migrateScreenshotURLs": return .collection([])
            case "screenshotsFor:":
                return .collection([
                    .uri("https://example.org/\(arguments[0].stringValue ?? "?")/1.png"), .string("two"), .integer(3),
                ])
            default: return nil
            }
        }
    }

    /// Foundation's own reading of an archive (swift-corelibs-foundation's NSKeyedUnarchiver).
    func unarchived(_ value: Value) throws -> Any? {
        guard case .binary(let bytes) = value else {
            XCTFail("not bytes: \(value)")
            return nil
        }
        let unarchiver = try NSKeyedUnarchiver(forReadingFrom: Data(bytes))
        unarchiver.requiresSecureCoding = false
        defer { unarchiver.finishDecoding() }
        return unarchiver.decodeObject(forKey: NSKeyedArchiveRootObjectKey)
    }

    func testAPolicyFunctionsArrayIsStoredAsTheKeyedArchiveFoundationReads() throws {
        let scratch = ScratchDirectory()
        let v1 = try Self.model("1", screenshotsOptional: true)
        let v2 = try Self.model("2", screenshotsOptional: false)
        try makeStore(scratch.file("v1.sqlite"), v1) { store in
            for name in ["alpha", "beta"] { _ = try insert(store, "App", ["name": .string(name)]) }
        }
        let mapping = try MappingModel(
            json:
                #"""
                {"entityMappings": [{"name": "AppToApp", "sourceEntity": "App", "destinationEntity": "App", "predicate": "TRUEPREDICATE",
                 "policy": "ScreenshotPolicy", "attributeMappings": {"name": "$source.name",
                 "screenshotURLs": "FUNCTION($entityPolicy, \"screenshotsFor:\", $source.name)",
                 "tags": "FUNCTION($entityPolicy, \"migrateScreenshotURLs\")"}}]}
                """#)
        let manager = try MigrationManager(sourceModel: v1, destinationModel: v2, mappingModel: mapping)
        manager.registerPolicy(named: "ScreenshotPolicy") { ScreenshotPolicy() }
        try manager.migrateStore(from: scratch.file("v1.sqlite"), to: scratch.file("v2.sqlite"))

        let store = try PersistentStore.open(at: scratch.file("v2.sqlite"), model: v2)
        defer { store.close() }
        let apps = try fetchAll(store, "App")
        XCTAssertEqual(apps.count, 2)
        for app in apps {
            let name = try XCTUnwrap(app.value(forKey: "name").stringValue)
            let screenshots = try XCTUnwrap(
                try unarchived(app.storedValue(for: XCTUnwrap(app.entity.attributesByName["screenshotURLs"])))
                    as? NSArray, "a non-optional array")
            XCTAssertEqual(screenshots.count, 3)
            XCTAssertEqual((screenshots[0] as? NSURL)?.absoluteString, "https://example.org/\(name)/1.png")
            XCTAssertEqual(screenshots[1] as? String, "two")
            XCTAssertEqual((screenshots[2] as? NSNumber)?.intValue, 3)
            let tags = try XCTUnwrap(
                try unarchived(app.storedValue(for: XCTUnwrap(app.entity.attributesByName["tags"]))) as? NSArray)
            XCTAssertEqual(tags.count, 0, "an empty NSArray, as `[] as NSArray` archives")
        }
    }

    func testEveryArchivableValueReadsBackThroughTheEnginesOwnReader() throws {
        let date = 700_000_000.25
        let uuid: [UInt8] = Array(0..<16)
        let value = Value.collection([
            .string("café"), .integer(-7), .double(2.5), .bool(true), .date(date), .uuid(uuid),
            .uri("https://example.org/a"), .binary([1, 2, 3]), .decimal("12.75"), .null,
            .collection([.string("nested")]),
        ])
        let bytes = try TransformableValue.archive(value, what: "a test value")
        let archive = try KeyedArchive(bytes: bytes, code: .invalidModel, what: "the test archive")
        let decoded = try archive.decode(archive.topReference())
        XCTAssertEqual(
            decoded,
            .array([
                .string("café"), .integer(-7), .real(2.5), .bool(true), .date(date), .uuid(uuid),
                .url("https://example.org/a"), .data([1, 2, 3]), .decimal("12.75"), .null,
                .array([.string("nested")]),
            ]))
        // Foundation on Linux reads NSDecimalNumber's mantissa as an object, where Apple's
        // NSKeyedArchiver writes (and the engine writes) the bytes in place: it reads the rest.
        let withoutDecimal = Value.collection(
            value.elements.filter { if case .decimal = $0 { return false } else { return true } })
        let readable = try TransformableValue.archive(withoutDecimal, what: "a test value")
        let foundation = try XCTUnwrap(try unarchived(.binary(readable)) as? NSArray)
        XCTAssertEqual(foundation.count, 10)
        XCTAssertEqual(foundation[0] as? String, "café")
        XCTAssertEqual((foundation[4] as? Date)?.timeIntervalSinceReferenceDate, date)
        XCTAssertEqual((foundation[5] as? NSUUID)?.uuidString, "00010203-0405-0607-0809-0A0B0C0D0E0F")
        XCTAssertTrue(foundation[8] is NSNull, "nil in an array is NSNull")
        XCTAssertEqual(((foundation[9] as? NSArray)?[0]) as? String, "nested")
        // One string alone is an NSString at the root.
        XCTAssertEqual(
            try unarchived(.binary(try TransformableValue.archive(.string("plain"), what: "x"))) as? String, "plain")
    }

    func testBytesAndNilAreKeptAsTheyAreAndOtherTypesAreNotTouched() throws {
        let model = try Self.model("1", screenshotsOptional: true)
        let app = try XCTUnwrap(model.entity(named: "App"))
        let screenshots = try XCTUnwrap(app.attributesByName["screenshotURLs"])
        XCTAssertEqual(try TransformableValue.stored(.binary([9, 8]), for: screenshots), .binary([9, 8]))
        XCTAssertEqual(try TransformableValue.stored(.null, for: screenshots), .null)
        let name = try XCTUnwrap(app.attributesByName["name"])
        XCTAssertEqual(
            try TransformableValue.stored(.integer(3), for: name), .integer(3),
            "coercion, not archiving, judges other types")
    }

    func testTheAppsOwnTransformerIsRefusedWithWhatToGiveInstead() throws {
        let model = try Self.model("1", screenshotsOptional: true)
        let icon = try XCTUnwrap(model.entity(named: "App")?.attributesByName["icon"])
        XCTAssertThrowsError(try TransformableValue.stored(.string("a.png"), for: icon)) { error in
            let message = (error as? MigrationError)?.message ?? ""
            XCTAssertTrue(message.contains("'App.icon' is transformed by 'ImageTransformer'"), message)
            XCTAssertTrue(message.contains("bytes the transformer makes"), message)
        }
        XCTAssertEqual(
            try TransformableValue.stored(.binary([1]), for: icon), .binary([1]), "its bytes are taken as they are")
    }

    func testInstancesAndDeepNestingAreRefused() throws {
        let model = try Self.model("1", screenshotsOptional: true)
        let screenshots = try XCTUnwrap(model.entity(named: "App")?.attributesByName["screenshotURLs"])
        XCTAssertThrowsError(try TransformableValue.stored(.collection([.migrationManager]), for: screenshots)) {
            error in
            XCTAssertTrue(
                (error as? MigrationError)?.message.contains("not the migration manager value") ?? false, "\(error)")
        }
        var deep = Value.string("bottom")
        for _ in 0..<(TransformableValue.maximumNesting + 1) { deep = .collection([deep]) }
        XCTAssertThrowsError(try TransformableValue.stored(deep, for: screenshots)) { error in
            XCTAssertTrue(
                (error as? MigrationError)?.message.contains("nests arrays more than 64 deep") ?? false, "\(error)")
        }
    }
}
