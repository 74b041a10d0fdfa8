import Foundation
import XCTest

@testable import CDMigrate

/// A flush to disk that fails is an error, never passed over: the migrated store is then not
/// handed over (its data may not be on disk). `/dev/null` stands for a file whose flush fails:
/// Linux refuses to sync it (`EINVAL`).
final class FileFlushTests: XCTestCase {
    var scratch: ScratchDirectory!

    override func setUpWithError() throws { scratch = ScratchDirectory() }

    func testAFileIsFlushedAndAFailedFlushIsAnErrorNamingTheFile() throws {
        let path = scratch.file("flushed.bin")
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data("data".utf8)))
        XCTAssertNoThrow(try FileIO.fsync(path: path))
        for (file, reason) in [("/dev/null", "Invalid argument"), (scratch.file("missing.bin"), "No such file")] {
            XCTAssertThrowsError(try FileIO.fsync(path: file), file) { error in
                let error = error as? MigrationError
                XCTAssertEqual(error?.code, .io, file)
                XCTAssertEqual(error?.message.contains("'\(file)'"), true, error?.message ?? "")
                XCTAssertEqual(error?.message.contains(reason), true, error?.message ?? "")
            }
        }
    }

    func testAMigratedStoreThatCannotBeFlushedIsDiscarded() throws {
        let model = try ManagedObjectModel(
            json: #"{"name": "M", "entities": [{"name": "Item", "attributes": [{"name": "n", "type": "integer64"}]}]}"#)
        let manager = try MigrationManager(
            sourceModel: model, destinationModel: model,
            mappingModel: try MappingModel(json: #"{"entityMappings": []}"#))
        let store = scratch.file("migrated.sqlite")
        XCTAssertTrue(FileManager.default.createFile(atPath: store, contents: Data("store".utf8)))
        XCTAssertNoThrow(try manager.flushMigratedStore(store))
        XCTAssertThrowsError(try manager.flushMigratedStore("/dev/null")) { error in
            let error = error as? MigrationError
            XCTAssertEqual(error?.code, .io)
            XCTAssertEqual(
                error?.message,
                "the migrated store could not be flushed to disk, so it was discarded: cannot flush '/dev/null' to disk: Invalid argument"
            )
            XCTAssertEqual(error?.underlying.first?.code, .io)
        }
    }
}
