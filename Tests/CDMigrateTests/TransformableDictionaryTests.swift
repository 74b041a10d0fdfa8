import Foundation
import XCTest

@testable import CDMigrate

/// Transformable attributes holding dictionaries (an app's `[Int: URL]` of preview URLs, kept
/// with Core Data's default transformer): Core Data hands a policy the NSDictionary its
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

    /// Every plist-type shape a policy may build (strings, integers, doubles, booleans, dates, data,
    /// URLs, UUIDs, nulls, arrays and dictionaries inside each other) is archived so that
    /// Foundation's unarchiver gives the same objects back, and the engine reads back what it wrote.
    func testNestedShapesRoundTripThroughFoundationsUnarchiver() throws {
        let previews = try previews()
        let uuid: [UInt8] = Array(0..<16)
        let value = Value.dictionary([
            (key: "text", value: "naïve ✓"), (key: 7, value: .double(2.5)), (key: "flag", value: .bool(true)),
            (key: "when", value: .date(700_000_000.25)), (key: "bytes", value: .binary([0, 1, 255])),
            (key: "urls", value: .collection([.uri("https://a/1.jpg"), .null, .collection(["x", 1])])),
            (key: "inner", value: .dictionary([(key: -1, value: .dictionary([])), (key: "id", value: .uuid(uuid))])),
            (key: .uri("https://key/"), value: "a URL key"),
        ])
        guard case .binary(let bytes) = try TransformableValue.stored(value, for: previews) else {
            return XCTFail("not archived")
        }
        XCTAssertEqual(TransformableValue.read(.binary(bytes), for: previews), value)
        let object = try XCTUnwrap(try unarchived(bytes) as? NSDictionary)
        XCTAssertEqual(object["text"] as? String, "naïve ✓")
        XCTAssertEqual((object[NSNumber(value: 7)] as? NSNumber)?.doubleValue, 2.5)
        XCTAssertEqual(object["flag"] as? Bool, true)
        XCTAssertEqual((object["when"] as? Date)?.timeIntervalSinceReferenceDate, 700_000_000.25)
        XCTAssertEqual(object["bytes"] as? Data, Data([0, 1, 255]))
        let urls = try XCTUnwrap(object["urls"] as? NSArray)
        XCTAssertEqual(urls[0] as? NSURL, NSURL(string: "https://a/1.jpg"))
        XCTAssertTrue(urls[1] is NSNull)
        XCTAssertEqual(urls[2] as? NSArray, ["x", NSNumber(value: 1)] as NSArray)
        let inner = try XCTUnwrap(object["inner"] as? NSDictionary)
        XCTAssertEqual(inner[NSNumber(value: -1)] as? NSDictionary, [:] as NSDictionary)
        XCTAssertEqual(
            (inner["id"] as? NSUUID)?.uuidString, "00010203-0405-0607-0809-0A0B0C0D0E0F")
        XCTAssertEqual(object[NSURL(string: "https://key/")!] as? String, "a URL key")
    }

    /// An NSDictionary holds a key once: a dictionary value naming a key twice (a host adding the
    /// same key in two entries) is refused with the key named, not archived with one entry lost.
    func testADictionaryNamingAKeyTwiceIsRefused() throws {
        let previews = try previews()
        for twice: Value in [
            .dictionary([(key: 1, value: "a"), (key: 1, value: "b")]),
            .dictionary([(key: "k", value: "a"), (key: .double(1), value: "x"), (key: .integer(1), value: "b")]),
            .collection([.dictionary([(key: "k", value: 1), (key: "k", value: 2)])]),
        ] {
            XCTAssertThrowsError(try TransformableValue.stored(twice, for: previews)) {
                XCTAssertEqual(($0 as? MigrationError)?.code, .invalidArgument)
                XCTAssertTrue("\($0)".contains("more than once"), "\($0)")
                XCTAssertTrue("\($0)".contains(".previews"), "\($0)")
            }
        }
        // A string key and a URL key of the same text are different keys (NSString vs NSURL).
        XCTAssertNoThrow(
            try TransformableValue.stored(
                .dictionary([(key: "u", value: 1), (key: .uri("u"), value: 2)]), for: previews))
    }

    /// Apple's own archives hold NSDictionary as the engine writes it: momc's compiled model (an
    /// NSKeyedArchiver archive) gives its dictionaries the class chain NSDictionary, NSObject and
    /// the members `NS.keys` and `NS.objects` and nothing else.
    func testApplesArchivedDictionariesHaveTheLayoutTheEngineWrites() throws {
        let path = TestPaths.fixtures + "/xcode/XcodeServer/1_0_0/XcodeServer.momd_precompiled/XcodeServer.mom"
        let plist = try BinaryPropertyList.decode([UInt8](try Data(contentsOf: URL(fileURLWithPath: path))))
        guard case .array(let appleObjects)? = plist["$objects"] else { return XCTFail("no $objects") }
        let ours = try TransformableValue.archive(
            .dictionary([(key: "a", value: 1), (key: "b", value: "x")]), what: "t")
        guard case .array(let ourObjects)? = try BinaryPropertyList.decode(ours)["$objects"] else {
            return XCTFail("no $objects")
        }
        func classEntry(_ objects: [PropertyListValue], _ name: String) -> (Int, PropertyListValue)? {
            for (i, object) in objects.enumerated() where object["$classname"] == .string(name) { return (i, object) }
            return nil
        }
        let (appleClass, appleEntry) = try XCTUnwrap(classEntry(appleObjects, "NSDictionary"))
        let (ourClass, ourEntry) = try XCTUnwrap(classEntry(ourObjects, "NSDictionary"))
        XCTAssertEqual(appleEntry["$classes"], ourEntry["$classes"])
        func members(_ objects: [PropertyListValue], _ classIndex: Int) -> [[String]] {
            objects.compactMap { object -> [String]? in
                guard case .dictionary(let entries) = object, object["$class"] == .uid(UInt64(classIndex)) else {
                    return nil
                }
                return entries.map { $0.key }.sorted()
            }
        }
        let appleMembers = members(appleObjects, appleClass)
        XCTAssertFalse(appleMembers.isEmpty)
        XCTAssertEqual(Set(appleMembers), Set(members(ourObjects, ourClass)))
        XCTAssertEqual(Set(appleMembers), [["$class", "NS.keys", "NS.objects"]])
    }
}
