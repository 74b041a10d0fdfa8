import Foundation
import XCTest

@testable import CDMigrate

/// Stores' own models: Z_MODELCACHE, inflated and decoded.
final class StoreModelCacheTests: XCTestCase {
    static let renameVersions = ["1.0.0", "1.1.0", "1.1.2", "1.2.0", "2.0.0"]
    var temporaryDirectory = ""

    override func setUpWithError() throws {
        temporaryDirectory = NSTemporaryDirectory() + "cdm-cache-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: temporaryDirectory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: temporaryDirectory)
    }

    func copyFixture(_ relativePath: String) throws -> String {
        try copyFixtureStore(relativePath, into: temporaryDirectory)
    }

    func testRenamesStoresCacheTheModelsTheirJSONDescribes() throws {
        for version in StoreModelCacheTests.renameVersions {
            let path = try copyFixture("apple-stores/renames/Example_v\(version).sqlite")
            let cached = try XCTUnwrap(try StoreModelCache.model(fromStoreAt: path), version)
            let json = try ManagedObjectModel(contentsOf: TestPaths.fixtures + "/json-models/renames-v\(version).json")
            XCTAssertEqual(
                ModelStructure.lines(cached), ModelStructure.lines(json),
                version + "\n" + ModelStructure.difference(cached, json))
            XCTAssertEqual(cached.entities.map { $0.name }, ["BasicEntity"])
            // The store reads back through its own model.
            let store = try PersistentStore.open(at: path, model: cached, readOnly: true, checkVersion: false)
            defer { store.close() }
            let attribute = "v\(version.replacingOccurrences(of: ".", with: "_"))_name"
            let objects = try store.fetch(FetchRequest(entityName: "BasicEntity"))
            XCTAssertEqual(objects.count, 1)
            XCTAssertEqual(try objects.first?.value(forKey: attribute), .string("A Known Value"), version)
        }
        // The renaming identifiers are the Xcode elementIDs, version by version.
        let expected: [String: String?] = [
            "1.0.0": nil, "1.1.0": "v1_0_0_name", "1.1.2": "v1_1_0_name", "1.2.0": "v1_1_2_name",
            "2.0.0": "v1_2_0_name",
        ]
        for (version, identifier) in expected {
            let cached = try XCTUnwrap(
                try StoreModelCache.model(
                    fromStoreAt: try copyFixture("apple-stores/renames/Example_v\(version).sqlite")))
            XCTAssertEqual(
                cached.entity(named: "BasicEntity")?.ownAttributes.first?.renamingIdentifier, identifier, version)
            XCTAssertEqual(cached.entity(named: "BasicEntity")?.ownAttributes.first?.attributeType, .string)
            XCTAssertEqual(cached.entity(named: "BasicEntity")?.ownAttributes.first?.isOptional, true)
        }
    }

    func testAStoreWithAnEmptyCacheHasNoCachedModel() throws {
        let path = try copyFixture("apple-stores/macos-notes/NotesV7.storedata")
        XCTAssertNil(try StoreModelCache.model(fromStoreAt: path))
    }

    func testTheCacheIsRawDeflateWithoutAHeader() throws {
        let path = try copyFixture("apple-stores/renames/Example_v1.1.0.sqlite")
        let database = try SQLiteDatabase(path: path, mode: .readOnly)
        defer { database.close() }
        let blob = try XCTUnwrap(try StoreModelCache.compressedArchive(in: database))
        XCTAssertEqual(blob.count, 1239)
        let archive = try Inflate.inflate(blob, limit: 1 << 20, code: .invalidModel, what: "the cache")
        XCTAssertEqual(archive.count, 1900)
        XCTAssertEqual(Array(archive.prefix(8)), Array("bplist00".utf8))
        // Every truncation of the stream is an error, never a model or a trap.
        for length in stride(from: 0, to: blob.count, by: 5) {
            XCTAssertThrowsError(
                try Inflate.inflate(Array(blob[0..<length]), limit: 1 << 20, code: .invalidModel, what: "cut")
            ) { error in
                XCTAssertEqual((error as? MigrationError)?.code, .invalidModel)
            }
        }
        // Bytes after the stream's end are an error too.
        XCTAssertThrowsError(
            try Inflate.inflate(blob + [0, 1, 2], limit: 1 << 20, code: .invalidModel, what: "padded")
        ) { error in
            XCTAssertTrue("\(error)".contains("after the end"), "\(error)")
        }
        // Garbled streams: an error from zlib or from the archive reader, never a trap.
        var generator = SplitMix64(seed: 11)
        var errors = 0
        for _ in 0..<300 {
            var damaged = blob
            let i = Int(generator.next() % UInt64(damaged.count))
            damaged[i] ^= UInt8(1 << (generator.next() % 8))
            do {
                let inflated = try Inflate.inflate(damaged, limit: 1 << 20, code: .invalidModel, what: "garbled")
                _ = try CompiledModelReader.model(fromArchive: inflated)
            } catch is MigrationError {
                errors += 1
            }
        }
        XCTAssertGreaterThan(errors, 150)
    }

    func testADecompressionBombIsRefused() throws {
        // 4 080 bytes of raw DEFLATE that inflate to 4 MiB of zeros.
        let bomb: [UInt8] =
            [237, 193, 1, 1, 0, 0, 0, 130, 32, 255, 175, 110, 72, 64, 1] + [UInt8](repeating: 0, count: 4063) + [
                124, 27,
            ]
        XCTAssertEqual(try Inflate.inflate(bomb, limit: 8 << 20, code: .invalidModel, what: "zeros").count, 4 << 20)
        XCTAssertThrowsError(try Inflate.inflate(bomb, limit: 1 << 20, code: .invalidModel, what: "the bomb")) {
            error in
            let e = error as? MigrationError
            XCTAssertEqual(e?.code, .invalidModel)
            XCTAssertTrue(e?.message.contains("more than 1048576 bytes") ?? false, "\(error)")
            XCTAssertTrue(e?.message.contains("decompression bomb") ?? false, "\(error)")
        }
        // The store entry point honours its limit (the real cache inflates to 1 900 bytes).
        let path = try copyFixture("apple-stores/renames/Example_v1.0.0.sqlite")
        XCTAssertThrowsError(try StoreModelCache.model(fromStoreAt: path, limit: 1000)) { error in
            XCTAssertTrue(
                "\(error)".contains("Z_MODELCACHE") && "\(error)".contains("more than 1000 bytes"), "\(error)")
        }
        XCTAssertNotNil(try StoreModelCache.model(fromStoreAt: path, limit: 1900))
    }

    func testADamagedCacheInAStoreIsAnErrorNamingTheStore() throws {
        let path = try copyFixture("apple-stores/renames/Example_v1.2.0.sqlite")
        let database = try SQLiteDatabase(path: path, mode: .readWrite)
        try database.run("UPDATE Z_MODELCACHE SET Z_CONTENT = substr(Z_CONTENT, 1, 600)")
        database.close()
        XCTAssertThrowsError(try StoreModelCache.model(fromStoreAt: path)) { error in
            let e = error as? MigrationError
            XCTAssertEqual(e?.code, .invalidModel)
            XCTAssertTrue(e?.message.contains(path) ?? false, "\(error)")
            XCTAssertTrue(e?.message.contains("ends before") ?? false, "\(error)")
        }
    }
}
