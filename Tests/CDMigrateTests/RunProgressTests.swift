import ReferenceMigrations
import XCTest

@testable import CDMigrate

/// The whole run's rows in progress (`MigrationProgress.runProcessed`, `runTotal`, `step`,
/// `stepCount`): estimated from source counts up front, corrected as steps count theirs, summed
/// over a chain's steps.
final class RunProgressTests: XCTestCase {
    var scratch: ScratchDirectory!

    override func setUp() { scratch = ScratchDirectory() }

    func testRunRowsReplaceEstimatesWithReportedTotalsAndFollowStageOne() {
        // Two mappings × three stages: estimates 10 and 0 (a request not counted up front).
        var rows = RunRows(estimates: [10, 0, 10, 0, 10, 0], follows: [0: [2, 4], 1: [3, 5]])
        XCTAssertEqual(rows.total, 30)
        rows.report(step: 0, total: 10)
        XCTAssertEqual(rows.processed(step: 0, within: 4), 4)
        XCTAssertEqual(rows.processed(step: 0, within: 99), 10, "at most the step's rows")
        rows.finish(step: 0)
        // Stage 1 of the second mapping counts 7: its stages 2 and 3 follow, the total grows.
        rows.report(step: 1, total: 7)
        XCTAssertEqual(rows.total, 30 + 21)
        XCTAssertEqual(rows.processed(step: 1, within: 3), 13)
        rows.finish(step: 1)
        // Stage 2 of the first mapping made 12 instances: its own total replaces the estimate.
        rows.report(step: 2, total: 12)
        XCTAssertEqual(rows.total, 53)
        rows.report(step: 1, total: 0)  // a step without a total changes nothing
        XCTAssertEqual(rows.total, 53)
        for step in 2..<6 { rows.finish(step: step) }
        XCTAssertEqual(rows.finished, rows.total)
        XCTAssertEqual(rows.processed(step: 6, within: 5), rows.total, "past the last step: everything done")
        XCTAssertEqual(RunRows().total, 0)
    }

    func testProgressCarriesTheRunsRowsFromTheFirstCallToTheLast() throws {
        let seen = try progressOfItemsToThings(
            count: 40, interval: 3, in: scratch,
            mapping: """
                {"entityMappings": [
                  {"name": "Small", "sourceEntity": "Item", "destinationEntity": "Thing", "predicate": "n < 10",
                   "attributeMappings": {"n": "$source.n"}},
                  {"name": "Large", "sourceEntity": "Item", "destinationEntity": "Thing", "predicate": "n >= 10",
                   "attributeMappings": {"n": "$source.n"}}]}
                """)
        // 40 source rows, each handled in stage 1, 2 and 3 of its mapping.
        XCTAssertEqual(seen.first?.runTotal, 120, "known before the first row")
        XCTAssertEqual(Set(seen.map(\.runTotal)), [120])
        XCTAssertEqual(seen.map(\.runProcessed), seen.map(\.runProcessed).sorted(), "rows done never go back")
        XCTAssertEqual(seen.last?.runProcessed, 120)
        XCTAssertTrue(seen.contains { $0.runProcessed > 0 && $0.runProcessed < 10 }, "rows advance within a step")
        XCTAssertEqual(Set(seen.map(\.step)), [0])
        XCTAssertEqual(Set(seen.map(\.stepCount)), [1])
    }

    func testAStepOfAChainCountsItselfForTheStepsStillToCome() {
        var progress = MigrationProgress(
            fraction: 0.2, stage: .createRelationships, pass: 0, entityMappingName: "E", processed: 4, total: 10,
            runProcessed: 10, runTotal: 50)
        let chained = progress.inChain(step: 1, of: 3, rowsBefore: 100)
        XCTAssertEqual(chained.step, 1)
        XCTAssertEqual(chained.stepCount, 3)
        XCTAssertEqual(chained.runProcessed, 110)
        XCTAssertEqual(chained.runTotal, 100 + 50 * 2)
        // A step that knows no rows (done as schema changes) counts as the average of the steps before.
        progress.runTotal = 0
        progress.runProcessed = 0
        progress.fraction = 0.5
        let unknown = progress.inChain(step: 2, of: 4, rowsBefore: 200)
        XCTAssertEqual(unknown.runTotal, 200 + 100 * 2)
        XCTAssertEqual(unknown.runProcessed, 250)
        progress.runTotal = Int.max
        XCTAssertEqual(progress.inChain(step: 0, of: 3, rowsBefore: 1).runTotal, Int.max, "no overflow")
        XCTAssertEqual(progress.inChain(step: 0, of: 0, rowsBefore: 0).stepCount, 1)
    }

    func testAChainNamesEachStepAndItsRowsGrowOverTheChain() throws {
        let set = try ModelSet(contentsOf: StagedMigrationTests.uncloudNotesExample)
        let source = scratch.file("store.sqlite")
        _ = try UnCloudNotes.generateSource(version: 1, at: source, count: 20)
        let manager = try StagedMigrationManager(storeAt: source, models: set)
        manager.registerPolicy(named: AttachmentToImageAttachmentMigrationPolicyV3toV4.name) {
            AttachmentToImageAttachmentMigrationPolicyV3toV4()
        }
        var seen: [(Int, MigrationProgress)] = []
        manager.progressHandler = { index, progress in
            seen.append((index, progress))
            return true
        }
        let report = try manager.migrateStore(to: scratch.file("out.sqlite"))
        let count = report.stages.count
        XCTAssertGreaterThan(count, 1)
        XCTAssertTrue(seen.allSatisfy { $0.0 == $0.1.step && $0.1.stepCount == count })
        XCTAssertEqual(Set(seen.map(\.0)), Set(0..<count))
        let done = seen.map(\.1.runProcessed)
        XCTAssertEqual(done, done.sorted(), "rows done never go back across steps")
        let last = try XCTUnwrap(seen.last?.1)
        XCTAssertGreaterThan(last.runTotal, 0)
        XCTAssertEqual(last.runProcessed, last.runTotal)
        // A step that counts rows counts the steps after it as its own size: the total covers them.
        let counted = try XCTUnwrap(seen.first { $0.1.runTotal > 0 && $0.0 < count - 1 }?.1)
        XCTAssertGreaterThan(counted.runTotal, counted.runProcessed + counted.total)
    }
}
