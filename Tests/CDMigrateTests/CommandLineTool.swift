import Foundation
import XCTest

/// The `cdmigrate` executable, for the tests that run it as a process.
enum CommandLineTool {
    /// The executable, built beside the test bundle by `swift build --build-tests`.
    static let executable: String = {
        let bundle = Bundle(for: CommandLineTests.self).bundleURL
        let folders = [
            bundle.deletingLastPathComponent(), bundle,
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
        ]
        let candidates = folders.map { $0.appendingPathComponent("cdmigrate").path }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) } ?? candidates[0]
    }()

    /// Fails the test (rather than skipping it) when the executable is not built.
    static func requireBuilt() throws {
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            XCTFail("\(executable) is not built (swift build --build-tests builds it)")
            throw CocoaError(.fileNoSuchFile)
        }
    }

    /// Runs the command; returns its exit status, standard output and standard error.
    static func run(_ arguments: [String]) throws -> (status: Int32, out: String, err: String) {
        try runProcess(executable, arguments)
    }
}

/// Runs `executable` with `arguments`; returns its exit status, standard output and standard error.
func runProcess(_ executable: String, _ arguments: [String]) throws -> (status: Int32, out: String, err: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let out = Pipe()
    let err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    let outData = out.fileHandleForReading.readDataToEndOfFile()
    let errData = err.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (
        process.terminationStatus, String(decoding: outData, as: UTF8.self), String(decoding: errData, as: UTF8.self)
    )
}

extension CommandLineTool {
    /// The people model split by country, as the command-line tests use it: `v1.json` (Person),
    /// `v2.json` (Swede, Finn) and `map.json` (one entity mapping per country, by predicate).
    static func writePeopleSplit(into scratch: ScratchDirectory) throws {
        try MigrationBehaviourTests.people.write(toFile: scratch.file("v1.json"), atomically: true, encoding: .utf8)
        try MigrationBehaviourTests.split.write(toFile: scratch.file("v2.json"), atomically: true, encoding: .utf8)
        try """
        {"entityMappings": [
          {"name": "PersonToSwede", "sourceEntity": "Person", "destinationEntity": "Swede", "predicate": "country == 'Sweden'",
           "attributeMappings": {"name": "$source.name", "age": "$source.age"}},
          {"name": "PersonToFinn", "sourceEntity": "Person", "destinationEntity": "Finn", "predicate": "country == 'Finland'",
           "attributeMappings": {"name": "$source.name", "age": "$source.age"}}
        ]}
        """.write(toFile: scratch.file("map.json"), atomically: true, encoding: .utf8)
    }
}
