import Foundation
import XCTest

@testable import CDMigrate

/// Transformable attributes holding dictionaries (an app's `[Int: String]` of preview URLs, as
/// EhPanda's `GalleryStateMO.previews` keeps it): Core Data hands a policy the NSDictionary its
/// transformer unarchives and archives whatever dictionary the policy sets. cdmigrate reads an
/// archive of an NSDictionary as a `.dictionary` value and writes one as Foundation's
/// NSKeyedArchiver does.
final class TransformableDictionaryTests: XCTestCase {
    /// Foundation's own archive of `object` (swift-corelibs-foundation's NSKeyedArchiver).
    func archived(_ object: Any) throws -> [UInt8] {
        [UInt8](try NSKeyedArchiver.archivedData(withRootObject: object, requiringSecureCoding: false))
    }

    /// Foundation's own reading of an archive.
    func unarchived(_ bytes: [UInt8]) throws -> Any? {
        let unarchiver = try NSKeyedUnarchiver(forReadingFrom: Data(bytes))
        unarchiver.requiresSecureCoding = false
        defer { unarchiver.finishDecoding() }
        return unarchiver.decodeObject(forKey: NSKeyedArchiveRootObjectKey)
    }

    func previews() throws -> AttributeDescription {
        let model = try ManagedObjectModel(
            json: #"""
                {"name": "Galleries", "entities": [{"name": "GalleryState", "attributes": [
                 {"name": "gid", "type": "string"}, {"name": "previews", "type": "transformable", "optional": true}]}]}
                """#)
        return try XCTUnwrap(model.entity(named: "GalleryState")?.attributesByName["previews"])
    }

    func testFoundationsArchiveOfADictionaryReadsAsADictionaryValue() throws {
        let previews = try previews()
        let bytes = try archived([1: "https://a/1.jpg", 2: "not a url"] as NSDictionary)
        let read = TransformableValue.read(.binary(bytes), for: previews)
        XCTAssertEqual(read, .dictionary([(key: .integer(2), value: "not a url"), (key: 1, value: "https://a/1.jpg")]))
        XCTAssertEqual(read.entry(forKey: .integer(1)), .string("https://a/1.jpg"))
        XCTAssertEqual(read.typeName, "dictionary")
        // Mutable dictionaries, string keys, and dictionaries inside arrays and dictionaries.
        let mutable = NSMutableDictionary(dictionary: ["name": "x", "size": NSNumber(value: 3)])
        XCTAssertEqual(
            TransformableValue.read(.binary(try archived(mutable)), for: previews),
            .dictionary([(key: "size", value: 3), (key: "name", value: "x")]))
        let nested: NSArray = [["k": ["inner": NSURL(string: "https://b/")!] as NSDictionary] as NSDictionary]
        XCTAssertEqual(
            TransformableValue.read(.binary(try archived(nested)), for: previews),
            .collection([.dictionary([(key: "k", value: .dictionary([(key: "inner", value: .uri("https://b/"))]))])]))
    }

    /// An archive's `$top` and `$objects` with every property-list dictionary's keys sorted: the
    /// objects, their numbering and their references, whatever order the plist writer put keys in.
    func objects(_ archive: [UInt8]) throws -> [PropertyListValue] {
        func sorted(_ value: PropertyListValue) -> PropertyListValue {
            switch value {
            case .array(let items): return .array(items.map(sorted))
            case .dictionary(let entries):
                return .dictionary(entries.sorted { $0.key < $1.key }.map { (key: $0.key, value: sorted($0.value)) })
            default: return value
            }
        }
        let plist = try BinaryPropertyList.decode(archive)
        return [sorted(try XCTUnwrap(plist["$top"])), sorted(try XCTUnwrap(plist["$objects"]))]
    }

    /// The engine's archive of a dictionary holds the objects Foundation's archive of the same
    /// dictionary holds, numbered alike (keys first, then objects, under `NS.keys` and
    /// `NS.objects`); only the order Foundation's plist writer gives dictionary keys differs.
    func testTheEnginesArchiveOfADictionaryIsLaidOutAsFoundationsIs() throws {
        let previews = try previews()
        for dictionary: NSDictionary in [
            [1: "https://a/1.jpg", 2: "not a url"], ["a": NSNumber(value: 1), "b": ["x", "y"] as NSArray], [:],
            [3: ["nested": NSNumber(value: 2.5)] as NSDictionary],
        ] {
            let foundation = try archived(dictionary)
            // Read back in Foundation's order, the engine writes the same bytes.
            let value = TransformableValue.read(.binary(foundation), for: previews)
            guard case .dictionary = value else { return XCTFail("not read as a dictionary: \(dictionary)") }
            let ours = try TransformableValue.archive(value, what: "a test")
            XCTAssertEqual(try objects(ours), try objects(foundation), "\(dictionary)")
            XCTAssertEqual(try unarchived(ours) as? NSDictionary, dictionary)
        }
    }

    func testADictionarySetOnATransformableAttributeIsArchivedForFoundation() throws {
        let previews = try previews()
        let urls = Value.dictionary([(key: 1, value: .uri("https://a/1.jpg")), (key: 2, value: .null)])
        let stored = try TransformableValue.stored(urls, for: previews)
        guard case .binary(let bytes) = stored else { return XCTFail("not archived: \(stored)") }
        let object = try XCTUnwrap(try unarchived(bytes) as? NSDictionary)
        XCTAssertEqual(object, [1: NSURL(string: "https://a/1.jpg")!, 2: NSNull()] as NSDictionary)
        XCTAssertEqual(TransformableValue.read(stored, for: previews), urls)
    }

    func testDictionaryKeysThatNoArchiveKeysByAreRefused() throws {
        let previews = try previews()
        for key: Value in [.null, .collection([]), .dictionary([]), .migrationManager] {
            XCTAssertThrowsError(
                try TransformableValue.stored(.dictionary([(key: key, value: .string("v"))]), for: previews)
            ) {
                XCTAssertEqual(($0 as? MigrationError)?.code, .invalidArgument)
                XCTAssertTrue("\($0)".contains("dictionary's key"), "\($0)")
            }
        }
        var deep = Value.dictionary([])
        for _ in 0..<(TransformableValue.maximumNesting + 2) { deep = .dictionary([(key: .string("k"), value: deep)]) }
        XCTAssertThrowsError(try TransformableValue.stored(deep, for: previews))
    }

    func testDictionariesCompareAsNSDictionaryDoesInAnyOrder() {
        let a = Value.dictionary([(key: 1, value: "a"), (key: 2, value: "b")])
        let b = Value.dictionary([(key: 2, value: "b"), (key: 1, value: "a")])
        XCTAssertEqual(a, b)
        XCTAssertEqual(a.hashValue, b.hashValue)
        XCTAssertNotEqual(a, .dictionary([(key: 1, value: "a")]))
        XCTAssertNotEqual(a, .dictionary([(key: 1, value: "a"), (key: 2, value: "c")]))
        XCTAssertNotEqual(a, .collection([.string("a"), .string("b")]))
        XCTAssertEqual(a.description, "{1 = a; 2 = b}")
    }
}
