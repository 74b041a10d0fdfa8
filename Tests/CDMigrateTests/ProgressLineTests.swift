import XCTest

@testable import CDMigrate
@testable import CDMigrateCommandLine

/// The command line's progress line (`ProgressLine`, a pure function) and display
/// (`ProgressDisplay` drawing into a string): the whole run's time left, the terminal's width,
/// the step named, a message after a partial line on a line of its own.
final class ProgressLineTests: XCTestCase {
    func progress(
        processed: Int = 0, total: Int = 0, runProcessed: Int = 0, runTotal: Int = 0, fraction: Double = 0,
        name: String = "Recipe", step: Int = 0, stepCount: Int = 1
    ) -> MigrationProgress {
        var p = MigrationProgress(
            fraction: fraction, stage: .createDestinationInstances, pass: 0, entityMappingName: name,
            processed: processed, total: total)
        p.runProcessed = runProcessed
        p.runTotal = runTotal
        p.step = step
        p.stepCount = stepCount
        return p
    }

    func line(_ p: MigrationProgress, elapsed: Double = 10, step: String? = nil, width: Int = 80) -> String {
        ProgressLine.format(.init(progress: p, elapsed: elapsed, stepName: step, width: width))
    }

    func testTimeLeftIsForTheWholeRunFromItsRows() throws {
        // A quarter of the run's rows in 10 s: 30 s left, whatever the current step's own share.
        let p = progress(processed: 90, total: 100, runProcessed: 250, runTotal: 1000, fraction: 0.9)
        XCTAssertEqual(try XCTUnwrap(ProgressLine.secondsLeft(p, elapsed: 10)), 30, accuracy: 1e-9)
        XCTAssertTrue(line(p).hasSuffix("0:30 left"), line(p))
        XCTAssertTrue(line(p).hasPrefix("25% ["), line(p))
        // Half-way: as long again.
        let half = progress(runProcessed: 500, runTotal: 1000)
        XCTAssertEqual(try XCTUnwrap(ProgressLine.secondsLeft(half, elapsed: 40)), 40, accuracy: 1e-9)
        // Done: nothing left.
        XCTAssertEqual(ProgressLine.secondsLeft(progress(runProcessed: 1000, runTotal: 1000), elapsed: 40), 0)
        XCTAssertEqual(ProgressLine.clock(3 * 3600 + 5 * 60), "3h05m")
        XCTAssertEqual(ProgressLine.clock(.infinity), "?")
    }

    func testNoTimeLeftUntilItMeansSomething() {
        // Zero rows, zero fraction: nothing to divide by.
        XCTAssertNil(ProgressLine.secondsLeft(progress(), elapsed: 100))
        XCTAssertFalse(line(progress(), elapsed: 100).contains("left"))
        // Too early, or too little done.
        XCTAssertNil(ProgressLine.secondsLeft(progress(runProcessed: 500, runTotal: 1000), elapsed: 1))
        XCTAssertNil(ProgressLine.secondsLeft(progress(runProcessed: 5, runTotal: 1000), elapsed: 100))
        // A run whose store has no rows still ends: the fraction of steps stands in.
        XCTAssertEqual(ProgressLine.runFraction(progress(fraction: 0.5)), 0.5)
        XCTAssertEqual(try XCTUnwrap(ProgressLine.secondsLeft(progress(fraction: 0.5), elapsed: 8)), 8, accuracy: 1e-9)
    }

    func testARunWhoseTotalGrowsTakesLongerThanFirstEstimated() throws {
        let early = try XCTUnwrap(ProgressLine.secondsLeft(progress(runProcessed: 100, runTotal: 400), elapsed: 10))
        // The run learns of more rows (a step counted its own): same rows done, more left.
        let later = try XCTUnwrap(ProgressLine.secondsLeft(progress(runProcessed: 100, runTotal: 800), elapsed: 10))
        XCTAssertEqual(early, 30, accuracy: 1e-9)
        XCTAssertEqual(later, 70, accuracy: 1e-9)
    }

    func testAChainsTimeLeftCoversTheStepsToCome() throws {
        // Step 2 of 4 with no row totals: (1 + 0.5) / 4 of the chain done.
        let p = progress(fraction: 0.5, step: 1, stepCount: 4)
        XCTAssertEqual(ProgressLine.runFraction(p), 0.375, accuracy: 1e-9)
        // With rows (the engine counts the steps to come), the rows decide.
        let rows = progress(runProcessed: 300, runTotal: 1200, fraction: 0.9, step: 1, stepCount: 4)
        XCTAssertEqual(try XCTUnwrap(ProgressLine.secondsLeft(rows, elapsed: 10)), 30, accuracy: 1e-9)
    }

    func testTheStepIsNamedInAChain() {
        let p = progress(processed: 5, total: 10, runProcessed: 5, runTotal: 40, step: 1, stepCount: 4)
        let text = line(p, step: "v2 → v3")
        XCTAssertTrue(text.contains("step 2/4 v2 → v3 · instances Recipe 5/10"), text)
        XCTAssertFalse(line(progress(processed: 5, total: 10)).contains("step"), "one step names none")
    }

    func testTheLineFitsTheTerminalWithLongEntityNames() {
        let long = String(repeating: "VeryLongEntityMappingName", count: 8)
        let p = progress(
            processed: 123_456, total: 999_999, runProcessed: 400_000, runTotal: 1_000_000, name: long, step: 1,
            stepCount: 4)
        for width in [40, 80, 20, 1] {
            let text = line(p, step: "UnCloudNotes_v2 → UnCloudNotes_v3", width: width)
            XCTAssertLessThanOrEqual(text.count, max(1, width - 1), "\(width): \(text)")
        }
        let at80 = line(p, step: "v2 → v3", width: 80)
        XCTAssertTrue(at80.hasPrefix("40% step 2/4 v2 → v3 · instances VeryLong"), at80)
        XCTAssertTrue(at80.hasSuffix("… · 0:15 left"), "the name gives way, the time left stays: \(at80)")
        let at40 = line(p, step: "v2 → v3", width: 40)
        XCTAssertEqual(at40.count, 39, at40)
        // A short line keeps its bar.
        let short = line(progress(processed: 5, total: 10, runProcessed: 5, runTotal: 10, name: "A"), width: 80)
        XCTAssertEqual(short, "50% [##########----------] instances A 5/10 · 0:10 left")
        XCTAssertEqual(ProgressDisplay.columns("40"), 40)
        XCTAssertEqual(ProgressDisplay.columns("wide"), 80)
        XCTAssertEqual(ProgressDisplay.columns(nil), 80)
    }

    func testAMessageAfterAPartialLineStartsOnANewLine() {
        var written = ""
        var clock = 0.0
        let display = ProgressDisplay(
            enabled: true, stepNames: ["v1 → v2", "v2 → v3"], terminal: true, width: { 40 }, now: { clock },
            write: { written += $0 })
        display.show(progress(processed: 1, total: 10, runProcessed: 1, runTotal: 20, step: 1, stepCount: 2))
        XCTAssertTrue(written.hasPrefix("\r5% "), written)
        XCTAssertTrue(written.contains("step 2/2 v2 → v3"), written)
        XCTAssertTrue(written.hasSuffix("\u{1B}[K"), "erased to the end of the line")
        XCTAssertFalse(written.contains("\n"))
        ProgressDisplay.endPartialLine()  // what Output does before a warning, an error, a summary
        XCTAssertTrue(written.hasSuffix("\n"))
        let after = written
        ProgressDisplay.endPartialLine()
        XCTAssertEqual(written, after, "one newline, not one per message")
        clock = 1
        display.show(progress(processed: 2, total: 10, runProcessed: 2, runTotal: 20, step: 1, stepCount: 2))
        display.finish()
        XCTAssertTrue(written.hasSuffix("\u{1B}[K\n"))
        // Not a terminal (or --quiet): nothing drawn at all.
        var quiet = ""
        let piped = ProgressDisplay(enabled: true, terminal: false, width: { 80 }, now: { 0 }, write: { quiet += $0 })
        piped.show(progress(processed: 1, total: 10))
        piped.finish()
        let disabled = ProgressDisplay(
            enabled: false, terminal: true, width: { 80 }, now: { 0 }, write: { quiet += $0 })
        disabled.show(progress(processed: 1, total: 10))
        disabled.finish()
        XCTAssertEqual(quiet, "")
    }
}
