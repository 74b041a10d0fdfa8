import CDMigrateCommandLine
import Foundation
import XCTest

/// Commands run in one process at the same time (Python's `run_command` on two threads, a C
/// program calling `cdm_command_line_run` from several) each use their own host.
final class CommandLineHostTests: XCTestCase {
    /// What the two commands did, written from both threads.
    final class Log: @unchecked Sendable {
        let lock = NSLock()
        var calls: [String] = []
        var statuses: [String: Int32] = [:]
        func add(call: String) { lock.withLock { calls.append(call) } }
        func set(_ name: String, status: Int32) { lock.withLock { statuses[name] = status } }
    }

    func testCommandsOnTwoThreadsEachUseTheirOwnHost() throws {
        let scratch = ScratchDirectory()
        let model = #"{"entities": [{"name": "Item", "attributes": [{"name": "x", "type": "string"}]}]}"#
        try model.write(toFile: scratch.file("v1.json"), atomically: true, encoding: .utf8)
        try model.write(toFile: scratch.file("v2.json"), atomically: true, encoding: .utf8)
        try
            #"{"entityMappings": [{"name": "ItemToItem", "sourceEntity": "Item", "destinationEntity": "Item", "attributeMappings": {"x": "$source.x"}}]}"#
            .write(toFile: scratch.file("map.json"), atomically: true, encoding: .utf8)
        let step = [
            "--source-model", scratch.file("v1.json"), "--destination-model", scratch.file("v2.json"), "--mapping",
            scratch.file("map.json"), "--quiet",
        ]

        // Each host's loader claims its two --policies values; after its first one it waits until
        // the other thread's command is loading too, so both commands are running at once.
        let log = Log()
        let loading = ["A": DispatchSemaphore(value: 0), "B": DispatchSemaphore(value: 0)]
        @Sendable func host(_ name: String, waitingFor other: String) -> CommandLineHost {
            CommandLineHost(loadPolicies: { value, _ in
                log.add(call: "\(name) loads \(value)")
                if value.hasSuffix("1") {
                    loading[name]?.signal()
                    _ = loading[other]?.wait(timeout: .now() + 20)
                }
                return true
            })
        }
        let done = DispatchGroup()
        for (name, other) in [("A", "B"), ("B", "A")] {
            done.enter()
            Thread {
                let lower = name.lowercased()
                let status = CommandLineRun.run(
                    arguments: ["validate", "--policies", lower + "1", "--policies", lower + "2"] + step,
                    host: host(name, waitingFor: other))
                log.set(name, status: status)
                done.leave()
            }.start()
        }
        XCTAssertEqual(done.wait(timeout: .now() + 60), .success)
        XCTAssertEqual(log.statuses, ["A": 0, "B": 0])
        XCTAssertEqual(log.calls.filter { $0.hasPrefix("A") }.sorted(), ["A loads a1", "A loads a2"])
        XCTAssertEqual(log.calls.filter { $0.hasPrefix("B") }.sorted(), ["B loads b1", "B loads b2"])
    }
}
