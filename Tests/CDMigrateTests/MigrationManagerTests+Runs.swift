import XCTest

@testable import CDMigrate

/// Runs of one manager: each run of a `MigrationManager` has its own state (`MigrationRun`): nothing of a run, finished
/// or failed, is seen by the next one or left on the manager.
extension MigrationManagerTests {

    /// A policy that records what the manager shows while a run is on, and fails when told to.
    final class WatchingPolicy: EntityMigrationPolicy {
        nonisolated(unsafe) static var seen: [String] = []
        nonisolated(unsafe) static var failOnNote = -1
        var made = 0
        override func createDestinationInstances(
            forSource source: ManagedObject, in mapping: EntityMapping, manager: MigrationManager
        ) throws {
            if made == 0 {
                WatchingPolicy.seen.append(
                    "\(mapping.name) pass \(manager.currentPass) store \(manager.sourceStore != nil) userInfo \(manager.userInfo["seen"] as? Int ?? 0)"
                )
                manager.userInfo["seen"] = (manager.userInfo["seen"] as? Int ?? 0) + 1
            }
            if made == WatchingPolicy.failOnNote { throw MigrationError(.entityMigrationPolicy, "told to fail") }
            made += 1
            try super.createDestinationInstances(forSource: source, in: mapping, manager: manager)
        }
    }

    func watchedManager() throws -> MigrationManager {
        let json = MigrationManagerTests.mapping.replacingOccurrences(
            of: #""name": "NoteToNote", "type": "transform","#,
            with: #""name": "NoteToNote", "type": "transform", "policy": "Watching","#)
        let manager = try MigrationManager(
            sourceModel: source, destinationModel: destination, mappingModel: try MappingModel(json: json))
        manager.registerPolicy(named: "Watching") { WatchingPolicy() }
        return manager
    }

    func assertIdle(_ manager: MigrationManager, _ message: String, line: UInt = #line) {
        XCTAssertNil(manager.sourceStore, message, line: line)
        XCTAssertNil(manager.destinationStore, message, line: line)
        XCTAssertNil(manager.currentEntityMapping, message, line: line)
        XCTAssertNil(manager.currentPropertyMapping, message, line: line)
        XCTAssertEqual(manager.currentPass, 0, message, line: line)
        XCTAssertEqual(manager.migrationProgress, 0, message, line: line)
        XCTAssertTrue(manager.userInfo.isEmpty, message, line: line)
        XCTAssertNil(manager.run.associations, message, line: line)
        XCTAssertNil(manager.run.evaluator, "the evaluator, which holds the manager, is released", line: line)
        XCTAssertTrue(manager.run.report.mappings.isEmpty, message, line: line)
        XCTAssertTrue(manager.run.sourceCounts.isEmpty, message, line: line)
        XCTAssertTrue(manager.run.lookupIndexNames.isEmpty, message, line: line)
    }

    func testARunAfterAFailedRunStartsFromNothingOfIt() throws {
        let sourcePath = try makeSource()
        let manager = try watchedManager()
        assertIdle(manager, "before any run")
        WatchingPolicy.seen = []
        WatchingPolicy.failOnNote = 7
        XCTAssertThrowsError(try manager.migrateStore(from: sourcePath, to: scratch.file("failed.sqlite")))
        assertIdle(manager, "after a failed run")
        XCTAssertFalse(FileManager.default.fileExists(atPath: scratch.file("failed.sqlite")))

        WatchingPolicy.failOnNote = -1
        let first = try manager.migrateStore(from: sourcePath, to: scratch.file("first.sqlite"))
        assertIdle(manager, "after a run")
        let second = try manager.migrateStore(from: sourcePath, to: scratch.file("second.sqlite"))
        assertIdle(manager, "after the second run")
        // Every run saw a store, pass 0 and an empty userInfo when it began.
        XCTAssertEqual(WatchingPolicy.seen, Array(repeating: "NoteToNote pass 0 store true userInfo 0", count: 3))
        // The second report is the first's, not the first's plus its own.
        XCTAssertEqual(first.mappings.map { $0.sourceInstances }, [30, 4, 3])
        XCTAssertEqual(second.mappings.map { $0.sourceInstances }, [30, 4, 3])
        XCTAssertEqual(second.mappings.map { $0.associations }, first.mappings.map { $0.associations })
        XCTAssertEqual(second.warnings, first.warnings)
        XCTAssertEqual(second.destinationCounts.map { $0.count }, first.destinationCounts.map { $0.count })
    }

    func testTheManagerIsReleasedAfterARun() throws {
        let sourcePath = try makeSource()
        weak var released: MigrationManager?
        try {
            let manager = try watchedManager()
            released = manager
            try manager.migrateStore(from: sourcePath, to: scratch.file("out.sqlite"))
        }()
        XCTAssertNil(released, "nothing of the run (its evaluator, its policies) keeps the manager alive")
    }
}
