import XCTest

@testable import CDMigrate

/// A scratch directory per test, removed afterwards.
final class ScratchDirectory {
    let path: String
    init() {
        var template = Array("/tmp/cdmigrate-test-XXXXXX".utf8CString)
        path = template.withUnsafeMutableBufferPointer { buffer in
            guard let base = buffer.baseAddress, mkdtemp(base) != nil else { return "/tmp/cdmigrate-test-fallback" }
            return String(cString: base)
        }
    }
    func file(_ name: String) -> String { path + "/" + name }
    deinit { _ = try? FileManager.default.removeItem(atPath: path) }
}

func fileBytes(_ path: String) -> [UInt8]? {
    (try? CDMigrate.FileIO.readBytes(path: path))
}

/// Runs `body` with a new store for `model` at `path`, saves and closes it.
func makeStore(_ path: String, _ model: ManagedObjectModel, _ body: (PersistentStore) throws -> Void) throws {
    let store = try PersistentStore.create(at: path, model: model)
    try body(store)
    try store.save()
    store.close()
}

@discardableResult
func insert(_ store: PersistentStore, _ entity: String, _ values: [String: Value]) throws -> ManagedObject {
    let object = try store.insertObject(entityName: entity)
    for (key, value) in values.sorted(by: { $0.key < $1.key }) { try object.setValue(value, forKey: key) }
    return object
}

func fetchAll(_ store: PersistentStore, _ entity: String, subentities: Bool = true) throws -> [ManagedObject] {
    var request = FetchRequest(entityName: entity)
    request.includesSubentities = subentities
    return try store.fetch(request)
}

/// Where the repository and its test fixtures (`Tests/Fixtures`, see its README) are, found from
/// this file's path so the tests run from any clone. `CDMIGRATE_FIXTURES` overrides.
enum TestPaths {
    static let repository: String = {
        var parts = "\(#filePath)".split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        parts.removeLast(3)  // Tests/CDMigrateTests/MigrationTestSupport.swift
        return parts.joined(separator: "/")
    }()
    static let fixtures: String =
        ProcessInfo.processInfo.environment["CDMIGRATE_FIXTURES"]
        ?? (repository + "/Tests/Fixtures")
}

/// A writable copy of a fixture store (`Tests/Fixtures/<relativePath>`) with its -wal and -shm, in a
/// folder of its own under `directory`: SQLite may write beside a store it opens, and a test may
/// open the same fixture twice.
func copyFixtureStore(_ relativePath: String, into directory: String) throws -> String {
    let source = TestPaths.fixtures + "/" + relativePath
    guard FileManager.default.fileExists(atPath: source) else {
        XCTFail("fixture \(source) is missing: Tests/Fixtures is incomplete (or CDMIGRATE_FIXTURES points elsewhere)")
        throw CocoaError(.fileNoSuchFile)
    }
    let folder = directory + "/" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    let destination = folder + "/" + (relativePath as NSString).lastPathComponent
    for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: source + suffix) {
        try FileManager.default.copyItem(atPath: source + suffix, toPath: destination + suffix)
        // Fixtures are read-only files; the copies must be writable for SQLite's -shm handling.
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: destination + suffix)
    }
    return destination
}

/// Every progress report of migrating, row by row and reported every `interval` rows, a store of
/// `count` instances of Item (an integer `n`, 0…count-1) to Thing with `mapping`'s entity mappings.
func progressOfItemsToThings(count: Int, interval: Int, in scratch: ScratchDirectory, mapping: String) throws
    -> [MigrationProgress]
{
    let model = try ManagedObjectModel(
        json: """
            {"name": "M", "versionIdentifier": "1", "entities": [
              {"name": "Item", "attributes": [{"name": "n", "type": "integer64"}]}]}
            """)
    let destination = try ManagedObjectModel(
        json: """
            {"name": "M", "versionIdentifier": "2", "entities": [
              {"name": "Thing", "attributes": [{"name": "n", "type": "integer64"}]}]}
            """)
    let path = scratch.file("items.sqlite")
    try makeStore(path, model) { store in
        for i in 0..<count { _ = try insert(store, "Item", ["n": .integer(Int64(i))]) }
    }
    let manager = try MigrationManager(
        sourceModel: model, destinationModel: destination, mappingModel: try MappingModel(json: mapping))
    manager.pushDownSQL = false
    manager.progressInterval = interval
    var seen: [MigrationProgress] = []
    manager.progressHandler = {
        seen.append($0)
        return true
    }
    try manager.migrateStore(from: path, to: scratch.file("out.sqlite"))
    return seen
}
