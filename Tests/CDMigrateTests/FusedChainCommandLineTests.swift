import Foundation
import XCTest

@testable import CDMigrate

/// `cdmigrate plan` and `cdmigrate migrate --models` say which steps were fused into one pass, and
/// `--no-fuse` runs every step on its own, with the same store.
final class FusedChainCommandLineTests: XCTestCase {
    var scratch: ScratchDirectory!

    override func setUpWithError() throws {
        try CommandLineTool.requireBuilt()
        scratch = ScratchDirectory()
    }

    func testPlanAndMigrateSayWhichStepsWereFusedAndNoFuseRunsThemOneByOne() throws {
        let store = try copyFixtureStore("apple-stores/renames/Example_v1.0.0.sqlite", into: scratch.path)
        let models = ChainCommandLineTests.renames
        let plan = try CommandLineTool.run(["plan", store, "--models", models])
        XCTAssertEqual(plan.status, 0, plan.err)
        XCTAssertTrue(plan.out.contains("4 steps:"), plan.out)
        XCTAssertTrue(plan.out.contains("1 pass:\n  1. v1.0.0 → v2.0.0: steps 1–4 fused"), plan.out)
        let separate = try CommandLineTool.run(["plan", store, "--models", models, "--no-fuse", "--json"])
        XCTAssertEqual(separate.status, 0, separate.err)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(separate.out.utf8)) as? [String: Any])
        let passes = try XCTUnwrap(object["passes"] as? [[String: Any]])
        XCTAssertEqual(passes.map { $0["steps"] as? [Int] }, [[0], [1], [2], [3]])

        let fused = scratch.file("fused.sqlite")
        let run = try CommandLineTool.run(["migrate", store, "--models", models, "--to", fused])
        XCTAssertEqual(run.status, 0, run.err)
        XCTAssertTrue(run.out.contains("(v2.0.0) in 4 steps (1 pass)"), run.out)
        XCTAssertTrue(
            run.out.contains(
                "v1.0.0 → v2.0.0: inferred (fused: v1.0.0 → v1.1.0, v1.1.0 → v1.1.2, v1.1.2 → v1.2.0, v1.2.0 → v2.0.0)"),
            run.out)
        let steps = scratch.file("steps.sqlite")
        let oneByOne = try CommandLineTool.run(["migrate", store, "--models", models, "--to", steps, "--no-fuse"])
        XCTAssertEqual(oneByOne.status, 0, oneByOne.err)
        XCTAssertTrue(oneByOne.out.contains("(v2.0.0) in 4 steps\n"), oneByOne.out)
        XCTAssertFalse(oneByOne.out.contains("fused"), oneByOne.out)
    }
}
