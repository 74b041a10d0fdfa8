import XCTest

@testable import CDMigrate

final class CoreUtilityTests: XCTestCase {
    // MARK: SHA-256 (FIPS 180-2 test vectors)

    func sha(_ bytes: [UInt8]) -> String { VersionHash.hex(SHA256.hash(bytes)) }

    func testSHA256Vectors() {
        XCTAssertEqual(sha([]), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        XCTAssertEqual(sha(Array("abc".utf8)), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        XCTAssertEqual(
            sha(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        XCTAssertEqual(
            sha(Array(repeating: UInt8(ascii: "a"), count: 1_000_000)),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
        // Lengths around the padding boundary (55, 56, 64 bytes) differ and are 32 bytes each.
        let digests = [55, 56, 63, 64, 65].map { sha(Array(repeating: 0x61, count: $0)) }
        XCTAssertEqual(Set(digests).count, 5)
        XCTAssertEqual(
            sha(Array(repeating: 0x61, count: 64)), "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb")
    }

    // MARK: SHA-512 (FIPS 180-2 test vectors) and the padding both share

    func testSHA512Vectors() {
        func sha512(_ text: String) -> String { VersionHash.hex(SHA512.hash(Array(text.utf8))) }
        XCTAssertEqual(
            sha512(""),
            "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e"
        )
        XCTAssertEqual(
            sha512("abc"),
            "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"
        )
        XCTAssertEqual(
            sha512(
                "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu"
            ),
            "8e959b75dae313da8cf4f72814fc143f8f7779c6eb9f7fa17299aeadb6889018501d289e4900f7e4331b99dec4b5433ac7d329eeb6dd26545e96e55b874be909"
        )
    }

    /// Messages whose length puts the padding at a block's end or spills it into one more block
    /// (SHA-256's length field starts at byte 56 of 64, SHA-512's at 112 of 128).
    func testSHA256AndSHA512AtTheBlockBoundaries() {
        let expected: [(Int, String, String)] = [
            (
                55, "576a1bf8d4478657e6dc4af9398544765c2a92cde28478b019235cfed315fc09",
                "1fa86069db165162601ddc6103789cbca1fe97bc7c32de0d11a62e140f489340fc07d2664635a196fbebfb9fa976204882a1b803261b1018c257d24423553fb5"
            ),
            (
                56, "9b20501dfd1d99161c257950f3444f3e49230c351c5c8e0943ef369f85f5205d",
                "7b6d8a5b05452e1ca1237d37573bd3847c51a2f4f8aac8b9dd4dd4d91dd69b9561cc5b499bfa23c8767e272d1cfb4132746f6ff9518de6b5dc969b4c47947e48"
            ),
            (
                63, "30b345906b493f06f69444b6521113511c242f30e29840462950035043682f1e",
                "60a1cdd00a75f8715cc0c284bca24836c17d60b2cc4dc43ebd4091dee226c8cf32e32846456d316ee0782fe8b6a0f1de0cae8c47a6614e4b529075a7d2aa24af"
            ),
            (
                64, "d8bc63b4fc1156e5e7d95a418b9bf54cd3174bedbc2db40f74895349b229b3c0",
                "9f59bad22a6a8bda005caa01350372bf744703244db0aeb0446d8523012962ced1e49fd8ff703523938926a0dbbb023920b07cce073352920635bb28cad8e104"
            ),
            (
                111, "d80a22461ae74d8e6944001e255f9e47eca17702b1dc987238d78e6e1ea3e342",
                "d2026b9857418e96d800f55017d1c1566c027453ff240da88f0a25558fabf5d6ffbe00bb14bc04f120af1cac53f21cb4a81765140b9249f52aaab4935079dd94"
            ),
            (
                112, "a4ecd1e6c38e9d976d0cef32d899be35eb83c98d46b4dbfd68a1560f83b786a2",
                "4dc754b8985c03b8015b1efd61af5c05828b6d07eecda8d90dd5863f7704bd375905932f2fbdeb4ee1b754a7778e4a0327e7d75b71ae95d1f619136e27564467"
            ),
            (
                119, "7a6589821178918ca8d9edaba5abfc1e9b2669564f4469b66885379c1530b2c8",
                "5f44e9790c0769086d75954f27060e0e9bd38ca3075a6f663caa8c5c8ab0d54dd2b1de58d07bf7d3e3e1e560afb15c977337d22f5bec6cd7979f6d0e301e52c2"
            ),
            (
                120, "655250427d56b1b0eeb8497d21428704273458a01772d6881b65c0abac0f8a98",
                "34736c669f4ffd4cfd945fdc62e1d31c2852e963649c7b3cd17e8469def1264310926a9f18241b14fc50e4e672350d853b4dddd3d19c34a6a7ffb1d48d4f0baa"
            ),
            (
                127, "67d79933e3c9aa8e89f481e071cfca1e9a16c09d7263b5efa3bb01f1a9f8d065",
                "78de13cc28717e3ee7a3cb21b2ecac6d201f32f4a81bc1becdf9de5126e1a0139e25784aeb8baf327cc32f98d54d20e80e61d4d6bff5b37872fdaa645a4f3886"
            ),
            (
                128, "54c9eb041badfd7064645067b107661fed6113197ce2dd066ba69618abd3732f",
                "6e7f10bc87eacc3e98014eaade39e273285ba13c79231361c24c304a8d409018f543a28847fcc829b87fdde605caa5ab5fdb00e296737fa4687d5ee8d130ceea"
            ),
        ]
        for (count, sha256, sha512) in expected {
            let message = (0..<count).map { UInt8(truncatingIfNeeded: $0 * 7) }
            XCTAssertEqual(VersionHash.hex(SHA256.hash(message)), sha256, "SHA-256 of \(count) bytes")
            XCTAssertEqual(VersionHash.hex(SHA512.hash(message)), sha512, "SHA-512 of \(count) bytes")
        }
    }

    // MARK: Base64 (RFC 4648 §10)

    func testBase64Vectors() {
        let vectors = [
            ("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="), ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ]
        for (plain, encoded) in vectors {
            XCTAssertEqual(Base64.encode(Array(plain.utf8)), encoded)
            XCTAssertEqual(Base64.decode(encoded), Array(plain.utf8))
        }
        XCTAssertEqual(Base64.decode("Zm9vYg"), Array("foob".utf8), "padding may be missing")
        XCTAssertEqual(Base64.decode("Zm9v\nYmFy"), Array("foobar".utf8), "whitespace is ignored")
        XCTAssertEqual(Base64.decode("-_8="), [0xFB, 0xFF], "URL-safe alphabet")
        XCTAssertNil(Base64.decode("Zm9vY"), "one dangling character")
        XCTAssertNil(Base64.decode("Zm9v*"))
        XCTAssertNil(Base64.decode("Zé=="))
    }

    func testBase64RoundTrips() {
        var generator = SplitMix64(seed: 42)
        for length in 0..<200 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            XCTAssertEqual(Base64.decode(Base64.encode(bytes)), bytes)
        }
    }

    // MARK: Dates

    func testKnownStoreDate() throws {
        XCTAssertEqual(DateConversion.formatISO8601(526_913_713.695477), "2017-09-12T12:55:13.695Z")
        let parsed = try XCTUnwrap(DateConversion.parseISO8601("2017-09-12T12:55:13.695477Z"))
        XCTAssertEqual(parsed, 526_913_713.695477, accuracy: 1e-6)
        XCTAssertEqual(DateConversion.parseISO8601("2001-01-01T00:00:00Z"), 0)
        XCTAssertEqual(DateConversion.parseISO8601("2001-01-01"), 0)
        XCTAssertEqual(DateConversion.parseISO8601("1970-01-01T00:00:00Z"), -978_307_200)
        XCTAssertEqual(DateConversion.formatISO8601(0), "2001-01-01T00:00:00Z")
    }

    func testISOOffsetsAndFractions() {
        let utc = DateConversion.parseISO8601("2017-09-12T12:55:13Z")
        XCTAssertEqual(DateConversion.parseISO8601("2017-09-12T14:55:13+02:00"), utc)
        XCTAssertEqual(DateConversion.parseISO8601("2017-09-12T14:55:13+0200"), utc)
        XCTAssertEqual(DateConversion.parseISO8601("2017-09-12T07:25:13-05:30"), utc)
        XCTAssertEqual(DateConversion.parseISO8601("2017-09-12 12:55:13"), utc, "a space for T, no zone is UTC")
        XCTAssertEqual(DateConversion.parseISO8601("2017-09-12T12:55Z"), (utc ?? 0) - 13)
        XCTAssertEqual(DateConversion.parseISO8601("2017-09-12T12:55:13.5Z"), (utc ?? 0) + 0.5)
        XCTAssertEqual(DateConversion.parseISO8601("2017-09-12T12:55:13.250Z"), (utc ?? 0) + 0.25)
        XCTAssertEqual(
            DateConversion.parseISO8601("2017-09-12T12:55:13.123456789012345678Z") ?? 0, (utc ?? 0) + 0.123456789,
            accuracy: 1e-6)
        for bad in [
            "", "2017", "2017-9-12", "2017-13-01", "2017-02-29", "2017-04-31", "2017-09-12T24:00Z", "2017-09-12T12:60Z",
            "2017-09-12T12:55:13.Z", "2017-09-12T12:55:13X", "2017-09-12T12:55:13+2", "2017-09-12trailing",
            "２０１７-09-12",
        ] {
            XCTAssertNil(DateConversion.parseISO8601(bad), bad)
        }
        XCTAssertNotNil(DateConversion.parseISO8601("2016-02-29"), "leap day")
        XCTAssertNotNil(DateConversion.parseISO8601("2000-02-29"), "leap day of a 400th year")
        XCTAssertNil(DateConversion.parseISO8601("1900-02-29"), "1900 was not a leap year")
    }

    func testDatesBefore1970And2001RoundTrip() throws {
        let texts = [
            "1969-07-20T20:17:40Z", "1900-01-01T00:00:00Z", "1600-03-01T12:00:00.125Z", "2000-12-31T23:59:59.999Z",
            "2001-01-01T00:00:00.001Z", "2038-01-19T03:14:08Z", "9999-12-31T23:59:59Z", "0001-01-01T00:00:00Z",
        ]
        for text in texts {
            let seconds = try XCTUnwrap(DateConversion.parseISO8601(text), text)
            XCTAssertEqual(DateConversion.formatISO8601(seconds), text)
        }
        XCTAssertEqual(
            DateConversion.parseISO8601("1969-07-20T20:17:40Z"), -14_182_940 - 978_307_200,
            "Apollo 11 landing: Unix time -14182940")
        XCTAssertEqual(DateConversion.formatISO8601(-0.5), "2000-12-31T23:59:59.500Z")
        XCTAssertEqual(DateConversion.formatISO8601(-86_400 * 366), "2000-01-01T00:00:00Z", "2000 had 366 days")
        XCTAssertEqual(
            DateConversion.formatISO8601(0.9996), "2001-01-01T00:00:01Z", "milliseconds round up into the second")
        // Days and civil dates agree across eras.
        for days in stride(from: -800_000, through: 800_000, by: 997) {
            let (y, m, d) = DateConversion.civilFromDays(days)
            XCTAssertEqual(DateConversion.daysFromCivil(year: y, month: m, day: d), days)
        }
        XCTAssertEqual(DateConversion.daysFromCivil(year: 1970, month: 1, day: 1), 0)
        XCTAssertEqual(DateConversion.daysFromCivil(year: 2001, month: 1, day: 1), 11_323)
    }

    func testFormattingNeverTraps() {
        XCTAssertEqual(DateConversion.formatISO8601(.nan), "nan")
        XCTAssertEqual(DateConversion.formatISO8601(.infinity), "inf")
        XCTAssertEqual(DateConversion.formatISO8601(1e300), String(1e300))
        // Years before 1 AD keep their sign in front of the padding and read back.
        let ancient = -63_000_000_000 - 978_307_200.0
        let text = DateConversion.formatISO8601(ancient)
        XCTAssertTrue(text.hasPrefix("-0027-"), text)
        XCTAssertEqual(DateConversion.parseISO8601(text), ancient)
    }

    // MARK: JSON

    func testJSONRoundTripKeepsKeyOrder() throws {
        let text = #"{"zeta":1,"alpha":[true,false,null,1.5,-7,"x"],"mid":{"b":"2","a":{}},"empty":[]}"#
        let json = try JSON.parse(text)
        guard case .object(let members) = json else { return XCTFail("not an object") }
        XCTAssertEqual(members.map { $0.key }, ["zeta", "alpha", "mid", "empty"])
        XCTAssertEqual(json["mid"], .object([("b", .string("2")), ("a", .object([]))]))
        XCTAssertEqual(
            json["alpha"], .array([.bool(true), .bool(false), .null, .double(1.5), .integer(-7), .string("x")]))
        XCTAssertEqual(json.serialized(), text)
        XCTAssertEqual(try JSON.parse(json.serialized(indent: 2)), json)
        XCTAssertTrue(json.serialized(indent: 2).contains("\n  \"alpha\""))
    }

    func testJSONStrings() throws {
        let json = try JSON.parse(#"["héllo 日本 👩‍👩‍👧", "nul\u0000inside", "\ud834\udd1e", "tab\tquote\"back\\"]"#)
        XCTAssertEqual(
            json,
            .array([.string("héllo 日本 👩‍👩‍👧"), .string("nul\u{0}inside"), .string("𝄞"), .string("tab\tquote\"back\\")]))
        XCTAssertEqual(try JSON.parse(json.serialized()), json)
        XCTAssertEqual(try JSON.parse(JSON.string("a\u{0}b").serialized()), .string("a\u{0}b"))
        XCTAssertEqual(try JSON.parse("9223372036854775807"), .integer(Int64.max))
        XCTAssertEqual(try JSON.parse("-9223372036854775808"), .integer(Int64.min))
        XCTAssertEqual(try JSON.parse("1e2"), .double(100))
        XCTAssertEqual(JSON.double(.infinity).serialized(), "null")
    }

    func assertJSONError(
        _ text: String, line: Int, column: Int, mentions: String? = nil, file: StaticString = #filePath,
        testLine: UInt = #line
    ) {
        XCTAssertThrowsError(try JSON.parse(text), file: file, line: testLine) { error in
            guard let error = error as? MigrationError else { return XCTFail("\(error)", file: file, line: testLine) }
            XCTAssertEqual(error.code, .invalidJSON, file: file, line: testLine)
            XCTAssertTrue(
                error.message.contains("line \(line), column \(column)"), error.message, file: file, line: testLine)
            if let mentions = mentions {
                XCTAssertTrue(error.message.contains(mentions), error.message, file: file, line: testLine)
            }
        }
    }

    func testJSONErrorsHaveLineAndColumn() {
        assertJSONError("{\"a\": 1,\n \"b\": }", line: 2, column: 7)
        assertJSONError("[1, 2", line: 1, column: 5)
        assertJSONError("", line: 1, column: 0)
        assertJSONError("{\"a\": 1, \"a\": 2}", line: 1, column: 12, mentions: "duplicate")
        assertJSONError("[\"é\", x]", line: 1, column: 7)
        assertJSONError("99999999999999999999", line: 1, column: 20, mentions: "too big")
        assertJSONError("\"text with \u{FFFD}\" more", line: 1, column: 18, mentions: "end of file expected")
    }
}
