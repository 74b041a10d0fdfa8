import XCTest

@testable import CDMigrate

final class BinaryPropertyListTests: XCTestCase {
    // MARK: Real stores

    func testDecodesRealStoreMetadata() throws {
        for store in PlistFixtures.storeNames {
            let (_, plist) = try PlistFixtures.metadata(of: store)
            XCTAssertEqual(Array(plist.prefix(8)), Array("bplist00".utf8), store)
            let value = try BinaryPropertyList.decode(plist)
            XCTAssertEqual(value["NSStoreType"], .string("SQLite"), store)
            XCTAssertEqual(value["NSStoreModelVersionHashesVersion"], .integer(3), store)
            XCTAssertEqual(value["NSStoreModelVersionIdentifiers"], .array([.string("")]), store)
            XCTAssertEqual(value["_NSAutoVacuumLevel"], .string("2"), store)
            guard case .integer(let framework)? = value["NSPersistenceFrameworkVersion"] else {
                return XCTFail("\(store): no framework version")
            }
            XCTAssertGreaterThan(framework, 800, store)
            guard case .data(let hash)? = value["NSStoreModelVersionHashes"]?["BasicEntity"] else {
                return XCTFail("\(store): no hash for BasicEntity")
            }
            XCTAssertEqual(hash.count, 32, store)
            guard case .string(let digest)? = value["NSStoreModelVersionHashesDigest"] else {
                return XCTFail("\(store): no digest")
            }
            XCTAssertEqual(Base64.decode(digest)?.count, 64, store)
        }
    }

    func testFirstStoreHashMatchesKnownBytes() throws {
        let (_, plist) = try PlistFixtures.metadata(of: "Example_v1.0.0")
        let value = try BinaryPropertyList.decode(plist)
        guard case .data(let hash)? = value["NSStoreModelVersionHashes"]?["BasicEntity"] else {
            return XCTFail("no hash")
        }
        // Decoded independently with Python's plistlib.
        XCTAssertEqual(hash.prefix(4), [0xB2, 0x6D, 0x7C, 0x6C])
        XCTAssertEqual(hash.suffix(4), [0xDF, 0x62, 0xC9, 0x2C])
        XCTAssertEqual(value["NSPersistenceFrameworkVersion"], .integer(1048))
    }

    func testReencodedRealPlistDecodesEqual() throws {
        for store in PlistFixtures.storeNames {
            let (_, plist) = try PlistFixtures.metadata(of: store)
            let value = try BinaryPropertyList.decode(plist)
            let encoded = BinaryPropertyList.encode(value)
            XCTAssertEqual(try BinaryPropertyList.decode(encoded), value, store)
            // Encoding is deterministic.
            XCTAssertEqual(BinaryPropertyList.encode(try BinaryPropertyList.decode(encoded)), encoded, store)
        }
    }

    // MARK: Round trips

    func roundTrip(_ value: PropertyListValue, file: StaticString = #filePath, line: UInt = #line) {
        let bytes = BinaryPropertyList.encode(value)
        XCTAssertEqual(Array(bytes.prefix(8)), Array("bplist00".utf8), file: file, line: line)
        XCTAssertEqual(try BinaryPropertyList.decode(bytes), value, file: file, line: line)
    }

    func testRoundTripsEveryKind() {
        let values: [PropertyListValue] = [
            .string(""), .string("SQLite"), .string("é"), .string("日本語 text"), .string("emoji 👩‍👩‍👧 and 𝄞"),
            .string(String(repeating: "long ascii ", count: 40)), .string("nul\u{0}inside"),
            .integer(0), .integer(1), .integer(255), .integer(256), .integer(65_535), .integer(65_536),
            .integer(4_294_967_295), .integer(4_294_967_296), .integer(-1), .integer(-300),
            .integer(Int64.max), .integer(Int64.min),
            .real(0), .real(-0.5), .real(3.141592653589793), .real(1e300), .real(.infinity), .real(-.infinity),
            .bool(true), .bool(false),
            .date(0), .date(526_913_713.695477), .date(-978_307_200),
            .data([]), .data([0, 1, 2, 255]), .data(Array(repeating: 0xAB, count: 70_000)),
            .uid(0), .uid(255), .uid(256), .uid(70_000), .uid(UInt64.max),
            .array([]), .dictionary([]),
            .array([.string("a"), .integer(1), .array([.bool(true)]), .dictionary([("k", .string("v"))])]),
            .dictionary([
                ("zeta", .integer(1)), ("alpha", .integer(2)), ("ünïcode", .string("ß")), ("alpha2", .data([9])),
            ]),
        ]
        for value in values {
            roundTrip(value)
            roundTrip(.array([value, value]))
            roundTrip(.dictionary([("key", value)]))
        }
    }

    func testLargeArraysNeedWiderReferences() throws {
        let small = (0..<300).map { PropertyListValue.integer(Int64($0)) }
        let value = PropertyListValue.array(small)
        let bytes = BinaryPropertyList.encode(value)
        XCTAssertEqual(bytes[bytes.count - 32 + 7], 2, "more than 255 objects need 2-byte references")
        XCTAssertEqual(try BinaryPropertyList.decode(bytes), value)

        let strings = PropertyListValue.array((0..<70_000).map { .string("s\($0)") })
        let wide = BinaryPropertyList.encode(strings)
        XCTAssertEqual(wide[wide.count - 32 + 7], 4)
        XCTAssertEqual(wide[wide.count - 32 + 6], 4, "offsets beyond 65535 need 4 bytes")
        XCTAssertEqual(try BinaryPropertyList.decode(wide), strings)
    }

    func testSharesEqualScalars() throws {
        let value = PropertyListValue.array(Array(repeating: .string("same"), count: 20))
        let bytes = BinaryPropertyList.encode(value)
        // Two objects: the array and one string.
        XCTAssertEqual(bytes[(bytes.count - 24)..<(bytes.count - 16)], [0, 0, 0, 0, 0, 0, 0, 2])
        XCTAssertEqual(try BinaryPropertyList.decode(bytes), value)
    }

    func testDeepNestingWithinLimitRoundTrips() throws {
        var value = PropertyListValue.string("core")
        for _ in 0..<200 { value = .array([value]) }
        roundTrip(value)
    }

    // MARK: Hand-made documents (every marker the format has)

    /// Builds a document from object bodies, with the given offset and reference sizes.
    func document(_ objects: [[UInt8]], offsetSize: Int = 1, refSize: Int = 1, top: UInt64 = 0) -> [UInt8] {
        var out = Array("bplist00".utf8)
        var offsets: [Int] = []
        for object in objects {
            offsets.append(out.count)
            out += object
        }
        let table = out.count
        func be(_ v: UInt64, _ n: Int) -> [UInt8] {
            (0..<n).reversed().map { UInt8(truncatingIfNeeded: v >> (8 * UInt64($0))) }
        }
        for offset in offsets { out += be(UInt64(offset), offsetSize) }
        out += [0, 0, 0, 0, 0, 0, UInt8(offsetSize), UInt8(refSize)]
        out += be(UInt64(objects.count), 8) + be(top, 8) + be(UInt64(table), 8)
        return out
    }

    func testDecodesEveryMarker() throws {
        XCTAssertEqual(try BinaryPropertyList.decode(document([[0x09]])), .bool(true))
        XCTAssertEqual(try BinaryPropertyList.decode(document([[0x08]])), .bool(false))
        XCTAssertEqual(try BinaryPropertyList.decode(document([[0x10, 0xFF]])), .integer(255))
        XCTAssertEqual(try BinaryPropertyList.decode(document([[0x11, 0xFF, 0xFE]])), .integer(65_534))
        XCTAssertEqual(
            try BinaryPropertyList.decode(document([[0x12, 0xFF, 0xFF, 0xFF, 0xFF]])), .integer(4_294_967_295))
        XCTAssertEqual(
            try BinaryPropertyList.decode(document([[0x13] + Array(repeating: 0xFF, count: 8)])), .integer(-1))
        XCTAssertEqual(
            try BinaryPropertyList.decode(document([[0x14] + Array(repeating: 0, count: 15) + [7]])), .integer(7))
        XCTAssertEqual(
            try BinaryPropertyList.decode(document([[0x14] + Array(repeating: 0xFF, count: 16)])), .integer(-1))
        XCTAssertThrowsError(try BinaryPropertyList.decode(document([[0x14] + [1] + Array(repeating: 0, count: 15)])))
        XCTAssertEqual(try BinaryPropertyList.decode(document([[0x22, 0x3F, 0xC0, 0, 0]])), .real(1.5))
        XCTAssertEqual(
            try BinaryPropertyList.decode(document([[0x23, 0x40, 0x09, 0x21, 0xFB, 0x54, 0x44, 0x2D, 0x18]])),
            .real(3.141592653589793))
        XCTAssertEqual(
            try BinaryPropertyList.decode(document([[0x33, 0x41, 0xBF, 0x67, 0x42, 0xB1, 0xB2, 0x1A, 0xC2]])),
            .date(Double(bitPattern: 0x41BF_6742_B1B2_1AC2)))
        XCTAssertEqual(try BinaryPropertyList.decode(document([[0x43, 1, 2, 3]])), .data([1, 2, 3]))
        XCTAssertEqual(try BinaryPropertyList.decode(document([[0x53] + Array("abc".utf8)])), .string("abc"))
        XCTAssertEqual(try BinaryPropertyList.decode(document([[0x62, 0x00, 0xE9, 0x65, 0xE5]])), .string("é日"))
        XCTAssertEqual(try BinaryPropertyList.decode(document([[0x62, 0xD8, 0x34, 0xDD, 0x1E]])), .string("𝄞"))
        XCTAssertEqual(try BinaryPropertyList.decode(document([[0x80, 0x05]])), .uid(5))
        XCTAssertEqual(try BinaryPropertyList.decode(document([[0x83, 0, 1, 0, 0]])), .uid(65_536))
        // Extended lengths: a 20-byte string and data of 3 bytes given with a 2-byte length.
        XCTAssertEqual(
            try BinaryPropertyList.decode(document([[0x5F, 0x10, 20] + Array(repeating: 0x78, count: 20)])),
            .string(String(repeating: "x", count: 20)))
        XCTAssertEqual(try BinaryPropertyList.decode(document([[0x4F, 0x11, 0, 3, 7, 8, 9]])), .data([7, 8, 9]))
        // Sets and ordered sets read as arrays; null and fill are skipped.
        XCTAssertEqual(
            try BinaryPropertyList.decode(document([[0xC2, 1, 2], [0x10, 1], [0x10, 2]])),
            .array([.integer(1), .integer(2)]))
        XCTAssertEqual(try BinaryPropertyList.decode(document([[0xB1, 1], [0x09]])), .array([.bool(true)]))
        XCTAssertEqual(
            try BinaryPropertyList.decode(document([[0xA3, 1, 2, 3], [0x00], [0x0F], [0x08]])), .array([.bool(false)]))
        XCTAssertThrowsError(try BinaryPropertyList.decode(document([[0x00]])))
        // Dictionaries keep document order; UTF-16 keys work.
        XCTAssertEqual(
            try BinaryPropertyList.decode(document([[0xD2, 1, 2, 3, 3], [0x51, 0x62], [0x61, 0, 0xE4], [0x09]])),
            .dictionary([("b", .bool(true)), ("ä", .bool(true))]))
    }

    func testDecodesEveryOffsetAndReferenceSize() throws {
        let objects: [[UInt8]] = [[0xA2, 1, 2].map { $0 }, [0x51, 0x61], [0x10, 9]]
        for size in 1...8 {
            // Rebuild the array's references with the reference size under test.
            var array: [UInt8] = [0xA2]
            array += Array(repeating: 0, count: size - 1) + [1]
            array += Array(repeating: 0, count: size - 1) + [2]
            let doc = document([array] + objects.dropFirst(), offsetSize: size, refSize: size)
            XCTAssertEqual(try BinaryPropertyList.decode(doc), .array([.string("a"), .integer(9)]), "size \(size)")
        }
    }

    // MARK: Malformed input

    func assertMalformed(_ bytes: [UInt8], _ message: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try BinaryPropertyList.decode(bytes), message, file: file, line: line) { error in
            XCTAssertTrue(
                (error as? MigrationError)?.message.contains("malformed binary property list") == true,
                "\(error)", file: file, line: line)
        }
    }

    func testRejectsMalformedDocuments() {
        assertMalformed([], "empty")
        assertMalformed(Array("bplist00".utf8), "header only")
        assertMalformed(Array("bplist01".utf8) + Array(repeating: 0, count: 40), "wrong version")
        var bad = document([[0x09]])
        bad[bad.count - 32 + 6] = 0
        assertMalformed(bad, "offset size 0")
        bad = document([[0x09]])
        bad[bad.count - 32 + 7] = 9
        assertMalformed(bad, "reference size 9")
        // Trailer: count at -24, top object at -16, offset table position at -8.
        bad = document([[0x09]])
        bad[bad.count - 1] = 0xFF
        assertMalformed(bad, "offset table outside")
        bad = document([[0x09]])
        bad[bad.count - 1] = 3
        assertMalformed(bad, "offset table inside the header")
        bad = document([[0x09]])
        bad[bad.count - 9] = 1
        assertMalformed(bad, "top object out of range")
        bad = document([[0x09]])
        bad[bad.count - 17] = 200
        assertMalformed(bad, "object count too large")
        bad = document([[0x09]])
        bad[bad.count - 17] = 0
        assertMalformed(bad, "no objects")
        bad = document([[0x09]])
        bad[bad.count - 33] = 0xFF
        assertMalformed(bad, "object offset beyond the objects")
        assertMalformed(document([[0xA1, 5]]), "reference out of range")
        assertMalformed(document([[0xA1, 0]]), "array containing itself")
        assertMalformed(document([[0xA1, 1], [0xA1, 0]]), "cycle through two arrays")
        assertMalformed(document([[0xD1, 0, 0]]), "dictionary keyed by itself")
        assertMalformed(document([[0xD1, 1, 1], [0x10, 1]]), "non-string key")
        assertMalformed(document([[0x5F, 0x13, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]]), "huge length")
        assertMalformed(document([[0x4F, 0x14, 0]]), "bad length marker")
        assertMalformed(document([[0x6F, 0x13, 0x40, 0, 0, 0, 0, 0, 0, 0]]), "UTF-16 length overflowing")
        assertMalformed(document([[0xAF, 0x13, 0x10, 0, 0, 0, 0, 0, 0, 0]]), "array length overflowing")
        assertMalformed(document([[0xDF, 0x13, 0x80, 0, 0, 0, 0, 0, 0, 0]]), "dictionary length doubling overflow")
        assertMalformed(document([[0x8F, 1]]), "16-byte UID")
        assertMalformed(document([[0x15, 1]]), "32-byte integer")
        assertMalformed(document([[0x21, 1, 2]]), "2-byte real")
        assertMalformed(document([[0x70]]), "unknown marker")
        assertMalformed(document([[0x13, 1, 2]]), "integer running into the offset table")
        // Nesting deeper than the limit is refused, not a stack overflow.
        var deep: [[UInt8]] = []
        for i in 0..<1_000 {
            deep.append([0xA1, 0x00, 0x00])
            deep[i][1] = UInt8((i + 1) >> 8)
            deep[i][2] = UInt8((i + 1) & 0xFF)
        }
        deep.append([0x09])
        assertMalformed(document(deep, offsetSize: 2, refSize: 2), "too deep")
    }

    func testSharedObjectsDecodeInLinearTime() throws {
        // Each array refers twice to the next: 2^60 leaves if expanded naively.
        var objects: [[UInt8]] = []
        for i in 0..<60 { objects.append([0xA2, UInt8(i + 1), UInt8(i + 1)]) }
        objects.append([0x09])
        let value = try BinaryPropertyList.decode(document(objects))
        guard case .array(let top) = value else { return XCTFail("not an array") }
        XCTAssertEqual(top.count, 2)
    }

    func testSurvivesTruncatedAndCorruptedRealPlists() throws {
        let (_, plist) = try PlistFixtures.metadata(of: "Example_v2.0.0")
        var generator = SplitMix64(seed: 0x5EED)
        var decodedCount = 0
        for length in 0..<plist.count {
            if (try? BinaryPropertyList.decode(Array(plist.prefix(length)))) != nil { decodedCount += 1 }
        }
        for _ in 0..<5_000 {
            var bytes = plist
            let flips = Int.random(in: 1...4, using: &generator)
            for _ in 0..<flips {
                let index = Int.random(in: 0..<bytes.count, using: &generator)
                if Bool.random(using: &generator) {
                    bytes[index] ^= UInt8(1) << UInt8.random(in: 0..<8, using: &generator)
                } else {
                    bytes[index] = UInt8.random(in: 0...255, using: &generator)
                }
            }
            if (try? BinaryPropertyList.decode(bytes)) != nil { decodedCount += 1 }
        }
        // Every single-byte change of every position, exhaustively for the trailer and offset table.
        for index in 0..<plist.count {
            for value: UInt8 in [0x00, 0x0F, 0x7F, 0xFF] {
                var bytes = plist
                bytes[index] = value
                if (try? BinaryPropertyList.decode(bytes)) != nil { decodedCount += 1 }
            }
        }
        XCTAssertGreaterThan(decodedCount, 0, "some corruptions (inside data) still decode")
    }
}

/// A seeded generator so that a failing corruption can be reproduced.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
