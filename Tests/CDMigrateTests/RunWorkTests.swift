import XCTest

@testable import CDMigrate
@testable import CDMigrateCommandLine

/// The run's work for the time left (`MigrationProgress.runWork`, `runWorkTotal`): its rows
/// weighted by what a row of their stage costs (`RunRows.stageWeights`), so that the estimate
/// made at the end of stage 1, which copies, does not jump as the cheaper stages 2 and 3 follow.
final class RunWorkTests: XCTestCase {
    var scratch: ScratchDirectory!

    override func setUp() { scratch = ScratchDirectory() }

    func testStageOneWeighsMostAndTheStagesSumToTheRun() throws {
        let w = RunRows.stageWeights
        let one = try XCTUnwrap(w[.createDestinationInstances])
        let two = try XCTUnwrap(w[.createRelationships])
        let three = try XCTUnwrap(w[.validate])
        XCTAssertGreaterThan(one, three)
        XCTAssertGreaterThan(three, two)
        XCTAssertGreaterThan(two, 0)
        XCTAssertEqual(one + two + three, 1, accuracy: 1e-12)
        XCTAssertEqual(
            RunRows.stages(mappingsPerPass: [2, 1]),
            [
                .createDestinationInstances, .createDestinationInstances, .createRelationships, .createRelationships,
                .validate, .validate, .createDestinationInstances, .createRelationships, .validate,
            ])
    }

    func testWorkFollowsTheRowsWeightedByStage() {
        // Two mappings × three stages, estimates 10 and 0; the second mapping counts 20 in stage 1.
        let stages = RunRows.stages(mappingsPerPass: [2])
        var rows = RunRows(estimates: [10, 0, 10, 0, 10, 0], follows: [0: [2, 4], 1: [3, 5]], stages: stages)
        XCTAssertEqual(rows.totalWork, 10 * (0.85 + 0.05 + 0.10), accuracy: 1e-9)
        XCTAssertEqual(rows.processedWork(step: 0, within: 4), 4 * 0.85, accuracy: 1e-9)
        rows.finish(step: 0)
        rows.report(step: 1, total: 20)
        XCTAssertEqual(rows.totalWork, 30 * 1.0, accuracy: 1e-9)
        XCTAssertEqual(rows.processedWork(step: 1, within: 5), (10 + 5) * 0.85, accuracy: 1e-9)
        for step in 1..<6 { rows.finish(step: step) }
        XCTAssertEqual(rows.finishedWork, rows.totalWork, accuracy: 1e-9)
        XCTAssertEqual(rows.processedWork(step: 6, within: 3), rows.totalWork, accuracy: 1e-9)
        // Stages not given (or not one per step): every row weighs 1, as the rows themselves.
        let plain = RunRows(estimates: [4, 4, 4], stages: [.validate])
        XCTAssertEqual(plain.totalWork, 12)
    }

    func testTheTimeLeftAtTheEndOfStageOneIsTheCheapStagesShare() throws {
        // Stage 1 of the only mapping done in 17 s: a third of the rows, 85 % of the work.
        var p = MigrationProgress(
            fraction: 1.0 / 3, stage: .createDestinationInstances, pass: 0, entityMappingName: "E", processed: 100,
            total: 100, runProcessed: 100, runTotal: 300)
        XCTAssertEqual(try XCTUnwrap(ProgressLine.secondsLeft(p, elapsed: 17)), 34, accuracy: 1e-9, "by rows alone")
        p.runWork = 85
        p.runWorkTotal = 100
        XCTAssertEqual(try XCTUnwrap(ProgressLine.secondsLeft(p, elapsed: 17)), 3, accuracy: 1e-9)
        XCTAssertEqual(ProgressLine.runFraction(p), 0.85, accuracy: 1e-12)
        XCTAssertTrue(ProgressLine.format(.init(progress: p, elapsed: 17, stepName: nil, width: 80)).hasPrefix("85% "))
        // Not finite: the rows stand in.
        p.runWorkTotal = .infinity
        XCTAssertEqual(ProgressLine.runFraction(p), 1.0 / 3, accuracy: 1e-12)
    }

    func testAChainCarriesTheWorkOfItsStepsBefore() {
        var progress = MigrationProgress(
            fraction: 0.5, stage: .validate, pass: 0, entityMappingName: "E", processed: 4, total: 10,
            runProcessed: 10, runTotal: 50)
        progress.runWork = 20
        progress.runWorkTotal = 40
        let chained = progress.inChain(step: 1, of: 3, rowsBefore: 100, workBefore: 60)
        XCTAssertEqual(chained.runWork, 80)
        XCTAssertEqual(chained.runWorkTotal, 60 + 40 * 2)
        // A step knowing no work counts as the average of the steps before, its share as its fraction.
        progress.runWork = 0
        progress.runWorkTotal = 0
        let unknown = progress.inChain(step: 2, of: 4, rowsBefore: 200, workBefore: 120)
        XCTAssertEqual(unknown.runWorkTotal, 120 + 60 * 2)
        XCTAssertEqual(unknown.runWork, 150)
    }

    func testARunsWorkGrowsToItsTotalAndStageOneHoldsMostOfIt() throws {
        let seen = try progressOfItemsToThings(
            count: 30, interval: 5, in: scratch,
            mapping: """
                {"entityMappings": [{"name": "ItemToThing", "sourceEntity": "Item", "destinationEntity": "Thing", "predicate": "TRUEPREDICATE",
                  "attributeMappings": {"n": "$source.n"}}]}
                """)
        let total = try XCTUnwrap(seen.first?.runWorkTotal)
        XCTAssertEqual(total, 30, accuracy: 1e-9, "30 rows × the three stages' weights, known at the first call")
        XCTAssertEqual(seen.map(\.runWork), seen.map(\.runWork).sorted(), "work done never goes back")
        XCTAssertEqual(try XCTUnwrap(seen.last?.runWork), total, accuracy: 1e-9)
        let firstOfStageTwo = try XCTUnwrap(seen.first { $0.stage == .createRelationships })
        XCTAssertEqual(firstOfStageTwo.runWork / total, 0.85, accuracy: 1e-9)
        XCTAssertEqual(Double(firstOfStageTwo.runProcessed) / Double(firstOfStageTwo.runTotal), 1.0 / 3, accuracy: 1e-9)
    }
}
