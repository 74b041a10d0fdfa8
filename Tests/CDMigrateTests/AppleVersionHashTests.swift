import Foundation
import XCTest

@testable import CDMigrate

/// Apple's version-hash recipe (docs/apple-version-hash.md) against every real vector of §8–§9.
final class AppleVersionHashTests: XCTestCase {
    static let renames = TestPaths.fixtures + "/apple-stores/renames/Model.xcdatamodeld"

    func b64(_ bytes: [UInt8]) -> String { Base64.encode(bytes) }
    func bytes(_ base64: String) -> [UInt8] { Base64.decode(base64) ?? [] }
    func hexBytes(_ hex: String) -> [UInt8] {
        let chars = Array(hex.utf8)
        return stride(from: 0, to: chars.count, by: 2).map {
            UInt8(String(decoding: chars[$0..<$0 + 2], as: UTF8.self), radix: 16) ?? 0
        }
    }

    // MARK: SHA-512 (FIPS 180-2 vectors)

    func testSHA512Vectors() {
        func sha(_ b: [UInt8]) -> String { VersionHash.hex(SHA512.hash(b)) }
        XCTAssertEqual(
            sha(Array("abc".utf8)),
            "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"
        )
        XCTAssertEqual(
            sha([]),
            "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e"
        )
        XCTAssertEqual(
            sha(
                Array(
                    "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu"
                        .utf8)),
            "8e959b75dae313da8cf4f72814fc143f8f7779c6eb9f7fa17299aeadb6889018501d289e4900f7e4331b99dec4b5433ac7d329eeb6dd26545e96e55b874be909"
        )
        XCTAssertEqual(
            sha(Array(repeating: 0x61, count: 1_000_000)),
            "e718483d0ce769644e2e42c7bc15b4638e1f98b13b2044285632a803afa973ebde0ff244877ea60a4cb0432ce577c31beb009c5c2c49aa2e4eadb217ad8cc09b"
        )
        // Around the padding boundary (111, 112, 128 bytes).
        XCTAssertTrue(sha(Array(repeating: 0x61, count: 111)).hasPrefix("fa9121c7b32b9e01733d034cfc78cbf6"))
        XCTAssertTrue(sha(Array(repeating: 0x61, count: 112)).hasPrefix("c01d080efd492776a1c43bd23dd99d0a"))
        XCTAssertTrue(sha(Array(repeating: 0x61, count: 128)).hasPrefix("b73d1929aa615934e61a871596b3f3b3"))
    }

    // MARK: §8 worked example

    func testWorkedExampleIntermediates() throws {
        let bundle = try XcodeModelBundle.versions(contentsOf: Self.renames)
        let model = try XCTUnwrap(bundle.model(named: "v1.0.0"))
        let entity = try XCTUnwrap(model.entity(named: "BasicEntity"))
        let attribute = try XCTUnwrap(entity.attribute(named: "v1_0_0_name"))
        XCTAssertEqual(
            VersionHash.hex(VersionHash.propertyBaseHash(attribute)),
            "87951f4d35284d5ce53ade76a1ff010e94b821f04a9d7e830c90532bb31bafac")
        XCTAssertEqual(
            VersionHash.hex(attribute.versionHash), "d1b913efe92461f8b984cc11114aded710e3a6bc41091e0c25f4758552590007")
        XCTAssertEqual(b64(entity.versionHash), "sm18bCK1M9WnAVtqd1RcG7Ke57yR2xrq2MANgN9iySw=")
        XCTAssertEqual(
            model.versionHashesDigestBase64,
            "qc2hvjWJfwJ8eP5bGVFtLyGa9sm5DsLLQ9nNBNGtJBHd1IhWE3T4b2Q6tqAMQqr7/WxC62y7cm1dW8aRTTQ/Dg==")
        XCTAssertEqual(model.versionChecksum, "/cy6buHSotM6orWEBzxQWSvI1l1ZyxuG9xeVykNdfjY=")
        XCTAssertTrue(model.warnings.isEmpty, "\(model.warnings)")
    }

    func testRelationshipPreimageOfWorkedExample() throws {
        let model = try ManagedObjectModel(
            json: """
                {"entities": [
                  {"name": "Post", "relationships": [{"name": "color", "destination": "Color", "inverse": "post", "optional": false}]},
                  {"name": "Color", "relationships": [{"name": "post", "destination": "Post", "inverse": "color", "toMany": true}]}]}
                """)
        let color = try XCTUnwrap(model.entity(named: "Post")?.relationship(named: "color"))
        let p = SHA256.hash(Array("color".utf8) + [0, 0])
        let expected = SHA256.hash(p + Array("Color".utf8) + Array("post".utf8) + [1, 0, 0, 0] + [0, 0, 0, 0])
        XCTAssertEqual(color.versionHash, expected)
        // A to-many: maxCount 0, and the ordered marker 01 00 when ordered.
        let posts = try XCTUnwrap(model.entity(named: "Color")?.relationship(named: "post"))
        XCTAssertEqual(
            posts.versionHash,
            SHA256.hash(
                SHA256.hash(Array("post".utf8) + [1, 0]) + Array("Post".utf8) + Array("color".utf8) + [0, 0, 0, 0] + [
                    0, 0, 0, 0,
                ]))
    }

    // MARK: §9 vectors

    func testRenamesEntityHashesAndStoreDigests() throws {
        let expected = [
            "v1.0.0": "sm18bCK1M9WnAVtqd1RcG7Ke57yR2xrq2MANgN9iySw=",
            "v1.1.0": "Ae28YhjhXX/DPZD7QltjBBwYUqCT70/79KLtvSaoGV8=",
            "v1.1.2": "TgsQxAsp4LuFWTQgAO0WTA1WaMK9pX7fd6ALP0O1qK4=",
            "v1.2.0": "ZGQUYfaeZaMk6CbklPqxMfFSkBC9lWkd85hFcIpm6L8=",
            "v2.0.0": "R48GqGb21ihZo4TIoWA+npEdk1F9o67l8ewBFun8Ls4=",
        ]
        let bundle = try XcodeModelBundle.versions(contentsOf: Self.renames)
        XCTAssertEqual(bundle.versionNames, ["v1.0.0", "v1.1.0", "v1.1.2", "v1.2.0", "v2.0.0"])
        for (version, hash) in expected {
            let model = try XCTUnwrap(bundle.model(named: version))
            XCTAssertEqual(model.entity(named: "BasicEntity").map { b64($0.versionHash) }, hash, version)
            // The real store's metadata: same hashes, and the digest Core Data wrote.
            let (uuid, plist) = try PlistFixtures.metadata(of: "Example_" + version)
            let metadata = try StoreMetadata(storeUUID: uuid, plist: plist)
            XCTAssertEqual(metadata.versionHashes, model.entityVersionHashes, version)
            XCTAssertEqual(metadata.versionHashesDigest, model.versionHashesDigestBase64, version)
            XCTAssertEqual(metadata.versionHashesDigest?.count, 88)
        }
    }

    func testJSONFixturesCarryAppleHashesWithoutWarnings() throws {
        for version in ["v1.0.0", "v1.1.0", "v1.1.2", "v1.2.0", "v2.0.0"] {
            let json = try ManagedObjectModel(contentsOf: TestPaths.fixtures + "/json-models/renames-\(version).json")
            let xcode = try XCTUnwrap(try XcodeModelBundle.versions(contentsOf: Self.renames).model(named: version))
            XCTAssertEqual(json.entityVersionHashes, xcode.entityVersionHashes, version)
            XCTAssertEqual(json.warnings, [], "the written hashes equal Apple's: \(version)")
        }
    }

    func testCoreStoreModels() throws {
        let vectors: [(String, [String: String])] = [
            (
                "corestore_dynamicmodel",
                [
                    "Animal": "z5WWARHVWRt58e/Fhn653rNsZEUH2M8BmltbFxaU+U8=",
                    "Dog": "XVbFrZPe1gqjpetTEuWXePMANrHgnCvRXtFMec0nSFo=",
                    "Person": "xu27FmC65vOQpOvwZN/eUI1Gg+6giCCjkgm9NwsdLbc=",
                ]
            ),
            (
                "corestore_playground",
                [
                    "Animal": "CjzVhcYcIEp1eFdhtcPmFqCSx2Ha4jKw5M4aBQG4M6E=",
                    "Person": "Vr30GuqOk8qtVmNQlAmjvO8WiIlVxnx6FLLJ7f9RRRo=",
                ]
            ),
            (
                "corestore_demos",
                [
                    "Palette": "ahdTk+7q9Lo4DCvMGKls3TTM14KIrU/QP1CRwDjKkD4=",
                    "Place": "y49er0nI7qcZAwlAwGmOY0cEQO1mbZdOuweNQ8Br6Rg=",
                    "TimeZone": "/cg0hBA1HZtka+YDCai4TONflMGjzFpA2FMH7srcSTs=",
                    "Details": "YKnqCJUOzhzG1Uu1Z5CBdBAfgUh/gwzDlep90tLqK2I=",
                    "Form": "PJ63u1iOt3wnhL5gfFVJATMtHR1RrTBr3Ii5V5Yx8bk=",
                    "PokedexEntry": "65TgmzwBEsJKGWPjE/XYP3U+jZi4z5OGFlhkwhx8cRI=",
                    "Species": "lL9rhc1/JdrFUi99bWxVHUhuKlhd1m3E4TopduixQwk=",
                ]
            ),
        ]
        for (file, hashes) in vectors {
            let path = TestPaths.fixtures + "/version-hashes/\(file).xml"
            let model = try XcodeModelReader.model(document: try XMLElement.parse(file: path), file: path, name: file)
            XCTAssertEqual(model.entityVersionHashes.mapValues { b64($0) }, hashes, file)
        }
    }

    /// All 69 entity hashes of the three XcodeServer versions, against Xcode's compiled VersionInfo.plist.
    func testXcodeServerHashesMatchXcodesCompiler() throws {
        var compared = 0
        for version in ["1_0_0", "1_1_0", "2_0_0"] {
            let folder = TestPaths.fixtures + "/xcode/XcodeServer/\(version)"
            let plist = try BinaryPropertyList.decode(
                Array(
                    try Data(
                        contentsOf: URL(fileURLWithPath: folder + "/XcodeServer.momd_precompiled/VersionInfo.plist"))))
            guard case .dictionary(let recorded)? = plist["NSManagedObjectModel_VersionHashes"]?["XcodeServer"] else {
                return XCTFail("no version hashes in \(version)'s VersionInfo.plist")
            }
            let model = try ManagedObjectModel(contentsOf: folder + "/XcodeServer.xcdatamodeld")
            XCTAssertEqual(model.entities.count, 23, version)
            XCTAssertEqual(recorded.count, 23, version)
            for (entity, value) in recorded {
                guard case .data(let hash) = value else { return XCTFail("\(version) \(entity): not data") }
                XCTAssertEqual(
                    model.entity(named: entity).map { b64($0.versionHash) }, b64(hash), "\(version) \(entity)")
                compared += 1
            }
            if version == "2_0_0" {
                XCTAssertEqual(
                    model.entity(named: "ManagedConfiguration").map { b64($0.versionHash) },
                    "++J1oDiBTzLrHyvh0jRoc4gaX8qkgqs7n2QkWp1lEHo=")
                XCTAssertEqual(
                    model.entity(named: "ManagedIntegration").map { b64($0.versionHash) },
                    "zx7IHjxcnsWprgKiLjPZvKqMwwrj+XRnZT2PhkdE4rA=")
            }
        }
        XCTAssertEqual(compared, 69)
    }

    func testDigestAndChecksumOfXcodeMappingMetadataModel() throws {
        let hashes = [
            "XDDevAttributeMapping": "0plcXXRN7XHKl5CcF+fwriFmUpON3ZtcI/AfK748aWc=",
            "XDDevEntityMapping": "qeN1Ym3TkWN1G6dU9RfX6Kd2ccEvcDVWHpd3LpLgboI=",
            "XDDevMappingModel": "EqtMzvRnVZWkXwBHu4VeVGy8UyoOe+bi67KC79kphlQ=",
            "XDDevPropertyMapping": "XN33V44TTGY4JETlMoOB5yyTKxB+u4slvDIinv0rtGA=",
            "XDDevRelationshipMapping": "akYY9LhehVA/mCb4ATLWuI9XGLcjpm14wWL1oEBtIcs=",
        ]
        let entities = hashes.map { "{\"name\": \"\($0.key)\", \"versionHash\": \"\($0.value)\"}" }.joined(
            separator: ", ")
        let model = try ManagedObjectModel(json: "{\"entities\": [\(entities)]}")
        let digest = "+Hmc2uYZK6og+Pvx5GUJ7oW75UG4V/ksQanTjfTKUnxyGWJRMtB5tIRgVwGsrd7lz/QR57++wbvWsr6nxwyS0A=="
        let checksum = "bMpud663vz0bXQE24C6Rh4MvJ5jVnzsD2sI3njZkKbc="
        XCTAssertEqual(model.versionHashesDigestBase64, digest)
        XCTAssertEqual(model.versionChecksum, checksum)
        let direct = VersionHash.modelHashes(of: hashes.mapValues { bytes($0) })
        XCTAssertEqual(b64(direct.digest), digest)
        XCTAssertEqual(b64(direct.checksum), checksum)
    }

    // MARK: Order and rules the doc marks as not verified (checked against the doc's recipe)

    func testNameOrderIsByUTF16CodeUnitsCaseSensitive() {
        XCTAssertEqual(
            ["a", "_", "Z", "additionalBuildArgumentsData", "addMissingDeviceToTeams"].sorted(
                by: VersionHash.nameOrder),
            ["Z", "_", "a", "addMissingDeviceToTeams", "additionalBuildArgumentsData"])
    }

    func testUnverifiedRulesFollowTheDocumentedRecipe() throws {
        let model = try ManagedObjectModel(
            json: """
                {"entities": [
                  {"name": "Base", "abstract": true, "versionHashModifier": "m1", "uniquenessConstraints": [["b", "a"], ["a"]],
                   "attributes": [
                     {"name": "a", "type": "binary", "allowsExternalBinaryDataStorage": true, "preservesValueInHistoryOnDeletion": true},
                     {"name": "b", "type": "string", "optional": false, "versionHashModifier": "x"},
                     {"name": "t", "type": "string", "transient": true}],
                   "relationships": [{"name": "twin", "destination": "Base", "inverse": "twin"}]},
                  {"name": "Sub", "parent": "Base", "attributes": [{"name": "B", "type": "integer16"}]}]}
                """)
        let base = try XCTUnwrap(model.entity(named: "Base"))
        let sub = try XCTUnwrap(model.entity(named: "Sub"))
        let a = SHA256.hash(SHA256.hash(Array("a".utf8) + [1, 0]) + [0xE8, 0x03, 0, 0] + [1, 1])
        let b = SHA256.hash(SHA256.hash(Array("b".utf8) + [0, 0] + Array("x".utf8)) + [0xBC, 0x02, 0, 0])
        let twin = SHA256.hash(
            SHA256.hash(Array("twin".utf8) + [1, 0]) + Array("Base".utf8) + [1, 0, 0, 0] + [0, 0, 0, 0])
        XCTAssertEqual(
            base.attribute(named: "a")?.versionHash, a, "external storage then preserve-after-deletion bytes")
        XCTAssertEqual(base.attribute(named: "b")?.versionHash, b, "property modifier after the flags")
        XCTAssertEqual(
            base.relationship(named: "twin")?.versionHash, twin, "a self-inverse relationship omits the inverse name")
        let baseHash = SHA256.hash(
            Array("Base".utf8) + [1] + a + b + twin + Array("m1".utf8) + Array("a".utf8) + Array("b.a".utf8))
        XCTAssertEqual(base.versionHash, baseHash, "abstract byte, transient skipped, modifier, sorted constraints")
        let bigB = SHA256.hash(SHA256.hash(Array("B".utf8) + [1, 0]) + [100, 0, 0, 0])
        XCTAssertEqual(
            sub.versionHash, SHA256.hash(Array("Sub".utf8) + [0] + baseHash + bigB + a + b + twin),
            "superentity hash, then inherited and own properties in case-sensitive name order")
    }

    func testAttributeTypeCodesAreApples() {
        let codes: [(String, Int)] = [
            ("Undefined", 0), ("Integer 16", 100), ("Integer 32", 200), ("Integer 64", 300), ("Decimal", 400),
            ("Double", 500), ("Float", 600), ("String", 700), ("Boolean", 800), ("Date", 900), ("Binary", 1000),
            ("UUID", 1100), ("URI", 1200), ("Transformable", 1800), ("ObjectID", 2000), ("Composite", 2100),
        ]
        for (name, code) in codes { XCTAssertEqual(AttributeType(name: name)?.coreDataCode, code, name) }
    }

    // MARK: Explicit hashes

    func testExplicitHashThatDiffersIsKeptWithAWarning() throws {
        let apple = "sm18bCK1M9WnAVtqd1RcG7Ke57yR2xrq2MANgN9iySw="
        let other = Base64.encode(Array(repeating: 9, count: 32))
        func load(_ hash: String) throws -> ManagedObjectModel {
            try ManagedObjectModel(
                json: """
                    {"entities": [{"name": "BasicEntity", "versionHash": "\(hash)", "attributes": [{"name": "v1_0_0_name", "type": "string"}]}]}
                    """)
        }
        XCTAssertEqual(try load(apple).warnings, [])
        let overridden = try load(other)
        XCTAssertEqual(
            overridden.entity(named: "BasicEntity").map { b64($0.versionHash) }, other,
            "the written hash stays an override")
        XCTAssertEqual(overridden.warnings.count, 1)
        XCTAssertTrue(overridden.warnings.first?.contains("entity 'BasicEntity'") ?? false)
        XCTAssertTrue(overridden.warnings.first?.contains(apple) ?? false, "the warning shows Core Data's hash")
    }
}
