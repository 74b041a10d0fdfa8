import XCTest

@testable import CDMigrate

final class StoreMetadataTests: XCTestCase {
    func testReadsRealStores() throws {
        var hashes: [[UInt8]] = []
        for store in PlistFixtures.storeNames {
            let (uuid, plist) = try PlistFixtures.metadata(of: store)
            let metadata = try StoreMetadata(storeUUID: uuid, plist: plist)
            XCTAssertFalse(metadata.isEmpty, store)
            XCTAssertEqual(metadata.storeUUID, uuid)
            XCTAssertEqual(metadata.storeType, "SQLite", store)
            XCTAssertEqual(metadata.versionIdentifiers, [""], store)
            XCTAssertEqual(metadata.versionHashes["BasicEntity"]?.count, 32, store)
            hashes.append(metadata.versionHashes["BasicEntity"] ?? [])
            let otherKeys = Set(metadata.otherEntries.map { $0.key })
            XCTAssertTrue(
                otherKeys.isSuperset(of: [
                    "NSPersistenceFrameworkVersion", "NSStoreModelVersionHashesVersion",
                    "_NSAutoVacuumLevel", "NSStoreModelVersionHashesDigest",
                ]), store)
            XCTAssertFalse(otherKeys.contains("NSStoreType"))
            XCTAssertFalse(otherKeys.contains("NSStoreModelVersionHashes"))

            // Written back and read again: nothing lost.
            let written = metadata.plistBytes()
            let reread = try StoreMetadata(storeUUID: uuid, plist: written)
            XCTAssertEqual(reread, metadata, store)
            let original = try BinaryPropertyList.decode(plist)
            let rewritten = try BinaryPropertyList.decode(written)
            guard case .dictionary(let a) = original, case .dictionary(let b) = rewritten else {
                return XCTFail("not dictionaries")
            }
            XCTAssertEqual(Set(a.map { $0.key }), Set(b.map { $0.key }), store)
            for (key, value) in a { XCTAssertEqual(rewritten[key], value, "\(store) \(key)") }
        }
        // v1.0.0 and v2.0.0 have different BasicEntity schemas.
        XCTAssertNotEqual(hashes.first, hashes.last)
    }

    /// A store created here from Xcode's v1.0.0 model carries what Core Data wrote into the real one.
    func testCreatedStoreMetadataEqualsAppleWrittenStore() throws {
        let model = try XCTUnwrap(
            try XcodeModelBundle.versions(contentsOf: PlistFixtures.renamesDirectory + "/Model.xcdatamodeld").model(
                named: "v1.0.0"))
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "cdmigrate-meta-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("new.sqlite").path
        let store = try PersistentStore.create(at: path, model: model)
        store.close()
        let written = try PersistentStore.open(at: path, model: model).metadata
        let (uuid, plist) = try PlistFixtures.metadata(of: "Example_v1.0.0")
        let apple = try StoreMetadata(storeUUID: uuid, plist: plist)
        XCTAssertEqual(written.versionHashes, apple.versionHashes)
        XCTAssertEqual(written.versionHashesDigest, apple.versionHashesDigest)
        XCTAssertEqual(written.versionIdentifiers, apple.versionIdentifiers)
        XCTAssertEqual(written.storeType, apple.storeType)
        XCTAssertEqual(written.versionChecksum, "/cy6buHSotM6orWEBzxQWSvI1l1ZyxuG9xeVykNdfjY=")
        XCTAssertNil(apple.versionChecksum, "the real store predates the checksum key")
        let version = written.otherEntries.first { $0.key == "NSStoreModelVersionHashesVersion" }?.value
        XCTAssertEqual(version, .integer(3))
    }

    func testEmptyPlist() throws {
        let metadata = try StoreMetadata(storeUUID: "U", plist: [])
        XCTAssertTrue(metadata.isEmpty)
        XCTAssertTrue(metadata.versionHashes.isEmpty)
        XCTAssertTrue(metadata.versionIdentifiers.isEmpty)
        XCTAssertEqual(metadata.plistBytes(), [], "empty metadata stays empty")
    }

    func testWritesCoreDataKeysForModel() throws {
        let model = try ManagedObjectModel(
            json: """
                {"name": "M", "entities": [{"name": "B", "attributes": [{"name": "x", "type": "integer64"}]},
                                           {"name": "A", "attributes": [{"name": "y", "type": "string"}]}]}
                """)
        let metadata = StoreMetadata(storeUUID: "ABC", model: model)
        let plist = try BinaryPropertyList.decode(metadata.plistBytes())
        guard case .dictionary(let members) = plist else { return XCTFail("not a dictionary") }
        XCTAssertEqual(
            Set(members.map { $0.key }),
            [
                "NSPersistenceFrameworkVersion", "NSStoreModelVersionHashes",
                "NSStoreModelVersionHashesVersion", "NSStoreModelVersionIdentifiers",
                "NSStoreType", "_NSAutoVacuumLevel",
                "NSStoreModelVersionHashesDigest", "NSStoreModelVersionChecksumKey",
            ])
        XCTAssertEqual(plist["NSStoreModelVersionHashesDigest"], .string(model.versionHashesDigestBase64))
        XCTAssertEqual(plist["NSStoreModelVersionChecksumKey"], .string(model.versionChecksum))
        XCTAssertEqual(
            plist["NSStoreModelVersionIdentifiers"], .array([.string("")]), "a model without identifier writes [\"\"]")
        XCTAssertEqual(plist["NSStoreType"], .string("SQLite"))
        XCTAssertEqual(plist["NSStoreModelVersionHashesVersion"], .integer(3))
        XCTAssertEqual(plist["_NSAutoVacuumLevel"], .string("2"))
        XCTAssertEqual(plist["NSStoreModelVersionHashes"]?["A"], .data(model.entityVersionHashes["A"] ?? []))
        XCTAssertEqual(plist["NSStoreModelVersionHashes"]?["B"], .data(model.entityVersionHashes["B"] ?? []))
        let reread = try StoreMetadata(storeUUID: "ABC", plist: metadata.plistBytes())
        XCTAssertEqual(reread, metadata)
        XCTAssertEqual(reread.versionHashes, model.entityVersionHashes)
    }

    func testAddsMissingDefaultsAndKeepsOtherEntries() throws {
        let plist = BinaryPropertyList.encode(
            .dictionary([
                ("NSStoreType", .string("SQLite")),
                ("Custom", .array([.string("x")])),
                ("NSStoreModelVersionHashes", .dictionary([("E", .data(Array(repeating: 7, count: 32)))])),
            ]))
        let metadata = try StoreMetadata(storeUUID: "U", plist: plist)
        XCTAssertEqual(metadata.otherEntries.map { $0.key }, ["Custom"])
        XCTAssertEqual(metadata.versionIdentifiers, [])
        let rewritten = try BinaryPropertyList.decode(metadata.plistBytes())
        XCTAssertEqual(rewritten["Custom"], .array([.string("x")]))
        XCTAssertEqual(rewritten["NSPersistenceFrameworkVersion"], .integer(847))
        XCTAssertEqual(rewritten["NSStoreModelVersionIdentifiers"], .array([]))
    }

    func assertSourceStoreError(_ plist: [UInt8], mentions: String, file: StaticString = #filePath, line: UInt = #line)
    {
        XCTAssertThrowsError(try StoreMetadata(storeUUID: "STORE-1", plist: plist), file: file, line: line) { error in
            guard let error = error as? MigrationError else { return XCTFail("\(error)", file: file, line: line) }
            XCTAssertEqual(error.code, .migrationManagerSourceStore, file: file, line: line)
            XCTAssertTrue(error.message.contains("STORE-1"), error.message, file: file, line: line)
            XCTAssertTrue(error.message.contains(mentions), error.message, file: file, line: line)
        }
    }

    func testMalformedMetadata() throws {
        assertSourceStoreError([1, 2, 3], mentions: "malformed binary property list")
        assertSourceStoreError(BinaryPropertyList.encode(.array([])), mentions: "not a dictionary")
        assertSourceStoreError(
            BinaryPropertyList.encode(.dictionary([("NSStoreType", .integer(1))])), mentions: "NSStoreType")
        assertSourceStoreError(
            BinaryPropertyList.encode(.dictionary([("NSStoreModelVersionHashes", .array([]))])),
            mentions: "NSStoreModelVersionHashes")
        assertSourceStoreError(
            BinaryPropertyList.encode(
                .dictionary([("NSStoreModelVersionHashes", .dictionary([("Note", .data([1, 2]))]))])),
            mentions: "Note")
        assertSourceStoreError(
            BinaryPropertyList.encode(.dictionary([("NSStoreModelVersionIdentifiers", .array([.integer(1)]))])),
            mentions: "NSStoreModelVersionIdentifiers")
        let (_, real) = try PlistFixtures.metadata(of: "Example_v1.1.0")
        assertSourceStoreError(Array(real.prefix(real.count - 1)), mentions: "malformed")
    }
}

/// A store's metadata and entities read without a model.
final class StoreInfoTests: XCTestCase {
    static let notesModel = """
        {"name": "Notes", "entities": [{"name": "Note", "attributes": [{"name": "title", "type": "string"}]}]}
        """

    func testRowsAreCountedOnlyWhenAsked() throws {
        let scratch = ScratchDirectory()
        let path = scratch.file("Notes.sqlite")
        let model = try ManagedObjectModel(json: Self.notesModel)
        try makeStore(path, model) { store in
            for i in 0..<25 { _ = try insert(store, "Note", ["title": .string("Note \(i)")]) }
        }
        let counted = try StoreInfo(contentsOf: path)
        XCTAssertEqual(counted.entities.map { $0.rowCount }, [25])
        let uncounted = try StoreInfo(contentsOf: path, countingRows: false)
        XCTAssertEqual(uncounted.entities.map { $0.rowCount }, [0])
        XCTAssertEqual(uncounted.entities.map { $0.maxPrimaryKey }, [25], "Z_PRIMARYKEY is read either way")
        XCTAssertEqual(uncounted.metadata, counted.metadata)
    }

    func testReadsMetadataHierarchyAndRowCountsOfAnAppleStore() throws {
        let scratch = ScratchDirectory()
        let copy = try copyFixtureStore("apple-stores/macos-notes/NotesV7.storedata", into: scratch.path)
        let info = try StoreInfo.read(at: copy)
        XCTAssertEqual(info.entities.count, 22)
        XCTAssertTrue(info.metadata.isEmpty, "the Notes store has an empty Z_PLIST")
        let database = try SQLiteDatabase(path: copy, mode: .readOnly)
        defer { database.close() }
        for entity in info.entities {
            XCTAssertGreaterThan(entity.entityNumber, 0)
            if let parent = entity.superentityName {
                XCTAssertTrue(info.entities.contains { $0.name == parent }, parent)
            }
        }
        let total = info.entities.reduce(0) { $0 + $1.rowCount }
        XCTAssertGreaterThan(total, 0)
        XCTAssertTrue(info.entities.contains { $0.superentityName != nil }, "the Notes store has inheritance")
    }

    func testReadsTheVersionHashesOfARealStore() throws {
        let scratch = ScratchDirectory()
        let copy = try copyFixtureStore("apple-stores/renames/Example_v1.0.0.sqlite", into: scratch.path)
        let info = try StoreInfo.read(at: copy)
        XCTAssertEqual(
            info.metadata.versionHashes["BasicEntity"].map(Base64.encode),
            "sm18bCK1M9WnAVtqd1RcG7Ke57yR2xrq2MANgN9iySw=")
        XCTAssertEqual(info.entities.map { $0.name }, ["BasicEntity"])
        XCTAssertEqual(info.entities.first?.rowCount, 1)
    }

    func testRefusesAFileThatIsNoStore() throws {
        let scratch = ScratchDirectory()
        XCTAssertThrowsError(try StoreInfo.read(at: scratch.file("missing.sqlite"))) {
            XCTAssertEqual(($0 as? MigrationError)?.code, .io)
        }
        let empty = scratch.file("empty.sqlite")
        let database = try SQLiteDatabase(path: empty, mode: .create)
        try database.exec("CREATE TABLE t (x)")
        database.close()
        XCTAssertThrowsError(try StoreInfo.read(at: empty)) {
            XCTAssertEqual(($0 as? MigrationError)?.code, .incompatibleVersionHash)
        }
    }
}
