import XCTest
import Foundation
@testable import CDMigrate
import ReferenceMigrations

/// Engine behaviour that the reference migrations ran into and that looks wrong. Each test is
/// minimal and fails until the engine changes; the examples' own tests work around it.
final class EngineIssuesFromExamplesTests: XCTestCase {
    /// A migration opens its source read-only; the source is a WAL store (as every store the
    /// engine creates is), so SQLite creates `-wal` (empty) and `-shm` beside it, and a read-only
    /// connection cannot remove them when it closes. After a migration — successful or not — the
    /// user finds two files beside the source that were not there before (and a source in a
    /// read-only directory could not be opened at all without them). Expected: the directory of
    /// the source holds exactly what it held before, plus the destination.
    func testMigrationLeavesNoNewFilesBesideTheSource() throws {
        let directory = try TemporaryDirectory.make(prefix: "cdmigrate-engine-issue")
        defer { TemporaryDirectory.remove(directory) }
        let source = directory + "/Users.sqlite", destination = directory + "/Users-v2.sqlite"
        try InternationalUsers.generateSource(at: source, count: 20)
        XCTAssertEqual(TemporaryDirectory.list(directory), ["Users.sqlite"])
        try InternationalUsers.noCodeManager().migrateStore(from: source, to: destination)
        XCTAssertEqual(TemporaryDirectory.list(directory), ["Users-v2.sqlite", "Users.sqlite"])
    }
}
