import Foundation
import XCTest

@testable import CDMigrate

/// A migrated store keeps the source's identity, as Core Data's migrations keep it: the UUID in
/// `Z_METADATA.Z_UUID` (object URIs stay valid), every metadata entry the app or the framework set,
/// and the version entries of the destination model in place of the source's; SQLite's
/// `auto_vacuum` is incremental as `_NSAutoVacuumLevel` says. Single steps, chains, in place.
final class StoreIdentityTests: XCTestCase {
    var scratch: ScratchDirectory!
    override func setUp() { scratch = ScratchDirectory() }

    static let renamesXcode = TestPaths.fixtures + "/apple-stores/renames/Model.xcdatamodeld"
    static let appKey = "com.example.lastSync"

    /// An Apple-written v1.0.0 store with an app key added to its metadata (as
    /// `NSPersistentStoreCoordinator.setMetadata` would) and an `NSStoreUUID` entry.
    func sourceStore(_ set: ModelSet) throws -> (path: String, uuid: String) {
        let path = try copyFixtureStore("apple-stores/renames/Example_v1.0.0.sqlite", into: scratch.path)
        let model = try XCTUnwrap(set.models["v1.0.0"])
        let store = try PersistentStore.open(at: path, model: model, readOnly: false)
        var metadata = store.metadata
        metadata.otherEntries.append((Self.appKey, .string("2026-11-26T10:00:00Z")))
        metadata.otherEntries.append(("NSStoreUUID", .string(metadata.storeUUID)))
        try store.setMetadata(metadata)
        try store.save()
        store.close()
        return (path, metadata.storeUUID)
    }

    func checkCarried(
        _ path: String, uuid: String, model: ManagedObjectModel, file: StaticString = #filePath, line: UInt = #line
    ) throws {
        let store = try PersistentStore.open(at: path, model: model, readOnly: true, checkVersion: true)
        let metadata = store.metadata
        store.close()
        XCTAssertEqual(metadata.storeUUID, uuid, "Z_UUID", file: file, line: line)
        func entry(_ key: String) -> PropertyListValue? { metadata.otherEntries.first { $0.key == key }?.value }
        XCTAssertEqual(entry(Self.appKey), .string("2026-11-26T10:00:00Z"), file: file, line: line)
        XCTAssertEqual(entry("NSStoreUUID"), .string(uuid), file: file, line: line)
        // The source was written by Core Data 1048: its framework version and vacuum level stay.
        XCTAssertEqual(entry("NSPersistenceFrameworkVersion"), .integer(1048), file: file, line: line)
        XCTAssertEqual(entry("_NSAutoVacuumLevel"), .string("2"), file: file, line: line)
        // The model's entries are the destination's.
        XCTAssertEqual(metadata.versionHashes, model.entityVersionHashes, file: file, line: line)
        XCTAssertEqual(metadata.versionHashesDigest, model.versionHashesDigestBase64, file: file, line: line)
        XCTAssertEqual(metadata.versionChecksum, model.versionChecksum, file: file, line: line)
        XCTAssertEqual(entry("NSStoreModelVersionHashesVersion"), .integer(3), file: file, line: line)
        XCTAssertEqual(
            metadata.otherEntries.filter { $0.key == "NSStoreModelVersionHashesDigest" }.count, 1, file: file,
            line: line)
        XCTAssertEqual(try autoVacuum(path), 2, file: file, line: line)
    }

    func autoVacuum(_ path: String) throws -> Int64 {
        let database = try SQLiteDatabase(path: path, mode: .readOnly)
        defer { database.close() }
        return try XCTUnwrap(database.scalar("PRAGMA auto_vacuum")?.integer)
    }

    func testSingleStepKeepsUUIDAndAppMetadata() throws {
        let set = try ModelSet(contentsOf: Self.renamesXcode)
        let (source, uuid) = try sourceStore(set)
        let v1 = try XCTUnwrap(set.models["v1.0.0"])
        let v2 = try XCTUnwrap(set.models["v1.1.0"])
        let manager = try MigrationManager(
            sourceModel: v1, destinationModel: v2, mappingModel: try MappingModel.inferred(from: v1, to: v2))
        let destination = scratch.file("out.sqlite")
        try manager.migrateStore(from: source, to: destination)
        try checkCarried(destination, uuid: uuid, model: v2)
    }

    func testChainAndInPlaceKeepUUIDAndAppMetadata() throws {
        let set = try ModelSet(contentsOf: Self.renamesXcode)
        let current = try XCTUnwrap(set.currentModel)
        let (source, uuid) = try sourceStore(set)
        let destination = scratch.file("chain.sqlite")
        let manager = try StagedMigrationManager(storeAt: source, models: set)
        XCTAssertGreaterThan(manager.plan.stages.count, 1)
        try manager.migrateStore(to: destination)
        try checkCarried(destination, uuid: uuid, model: current)

        let v1 = try XCTUnwrap(set.models["v1.0.0"])
        let v2 = try XCTUnwrap(set.models["v1.1.0"])
        let inPlace = try MigrationManager(
            sourceModel: v1, destinationModel: v2, mappingModel: try MappingModel.inferred(from: v1, to: v2))
        try inPlace.migrateStoreInPlace(at: source)
        try checkCarried(source, uuid: uuid, model: v2)
    }

    /// A source without metadata (an empty `Z_PLIST`, as the macOS Notes store has) gives the
    /// destination model's metadata under the source's UUID.
    func testEmptySourceMetadataKeepsUUID() throws {
        let source = try copyFixtureStore("apple-stores/macos-notes/NotesV7.storedata", into: scratch.path)
        let model = try ManagedObjectModel(contentsOf: TestPaths.fixtures + "/json-models/notes-v7.json")
        let manager = try MigrationManager(
            sourceModel: model, destinationModel: model, mappingModel: try MappingModel.inferred(from: model, to: model)
        )
        let destination = scratch.file("notes.sqlite")
        try manager.migrateStore(from: source, to: destination)
        let store = try PersistentStore.open(at: destination, model: model, readOnly: true, checkVersion: true)
        defer { store.close() }
        XCTAssertEqual(store.metadata.storeUUID, "D25E1FF7-34FB-48F8-ADB6-B1C7A89F28C0")
        XCTAssertFalse(store.metadata.isEmpty)
        XCTAssertEqual(
            store.metadata.otherEntries.first { $0.key == "NSPersistenceFrameworkVersion" }?.value, .integer(847))
        XCTAssertEqual(try autoVacuum(destination), 2)
    }

    /// `StoreMetadata(carrying:model:)` itself: model entries replaced, everything else kept in order.
    func testCarryingReplacesOnlyModelEntries() throws {
        let set = try ModelSet(contentsOf: Self.renamesXcode)
        let v1 = try XCTUnwrap(set.models["v1.0.0"])
        let v2 = try XCTUnwrap(set.models["v2.0.0"])
        var source = StoreMetadata(storeUUID: "11111111-2222-3333-4444-555555555555", model: v1)
        source.otherEntries.append(("appKey", .array([.integer(1), .string("two")])))
        source.otherEntries.append(("_NSAutoVacuumLevel", .string("0")))
        source.otherEntries.removeAll { $0.key == "_NSAutoVacuumLevel" && $0.value == .string("2") }
        let carried = StoreMetadata(carrying: source, model: v2)
        XCTAssertEqual(carried.storeUUID, source.storeUUID)
        XCTAssertEqual(carried.versionHashes, v2.entityVersionHashes)
        XCTAssertNotEqual(carried.versionHashes, v1.entityVersionHashes)
        XCTAssertEqual(carried.versionHashesDigest, v2.versionHashesDigestBase64)
        XCTAssertEqual(carried.otherEntries.first { $0.key == "appKey" }?.value, .array([.integer(1), .string("two")]))
        XCTAssertEqual(carried.autoVacuumLevel, 0)
        XCTAssertEqual(Set(carried.otherEntries.map { $0.key }).count, carried.otherEntries.count, "no key twice")
        // A new store made with this metadata gets the vacuum level it states.
        let path = scratch.file("level0.sqlite")
        var options = PersistentStore.CreateOptions()
        options.metadata = carried
        let store = try PersistentStore.create(at: path, model: v2, options: options)
        try store.save()
        store.close()
        XCTAssertEqual(try autoVacuum(path), 0)
        // An empty UUID gets a new one rather than an empty Z_UUID.
        XCTAssertEqual(StoreMetadata(carrying: StoreMetadata(storeUUID: "", model: v1), model: v2).storeUUID.count, 36)
    }

    /// A store created for a model (not migrated) is incremental too.
    func testNewStoreIsIncrementallyVacuumed() throws {
        let set = try ModelSet(contentsOf: Self.renamesXcode)
        let path = scratch.file("new.sqlite")
        try makeStore(path, try XCTUnwrap(set.currentModel)) { _ in }
        XCTAssertEqual(try autoVacuum(path), 2)
    }
}
