import Foundation
import XCTest

/// The version is written once, in VERSION; scripts/version.py generates it into the header, the
/// C API's Swift sources and the Python package, which are committed so that builds need no step.
/// This fails when one of them was not regenerated.
final class VersionFileTests: XCTestCase {
    private func read(_ relative: String) throws -> String {
        try String(contentsOfFile: TestPaths.repository + "/" + relative, encoding: .utf8)
    }

    func testGeneratedPlacesAgreeWithTheVersionFile() throws {
        let version = try read("VERSION").trimmingCharacters(in: .whitespacesAndNewlines)
        let parts = version.split(separator: ".").compactMap { Int($0) }
        XCTAssertEqual(parts.count, 3, "VERSION holds '\(version)', not MAJOR.MINOR.PATCH")
        guard parts.count == 3 else { return }
        let number = parts[0] * 1_000_000 + parts[1] * 1_000 + parts[2]

        let header = try read("include/cdmigrate.h")
        XCTAssertTrue(
            header.contains("#define CDM_VERSION        \"\(version)\"\n"),
            "CDM_VERSION of cdmigrate.h is not \(version): run scripts/version.py")
        XCTAssertTrue(
            header.contains("#define CDM_VERSION_NUMBER \(number)\n"),
            "CDM_VERSION_NUMBER of cdmigrate.h is not \(number)")

        let swift = try read("Sources/CDMigrateCAPI/LibraryVersion.swift")
        XCTAssertTrue(swift.contains("static let text = \"\(version)\""), "LibraryVersion.swift is not at \(version)")
        XCTAssertTrue(
            swift.contains("static let number: Int32 = \(number)"), "LibraryVersion.swift's number is not \(number)")

        let python = try read("bindings/python/cdmigrate/_version.py")
        XCTAssertTrue(python.contains("__version__ = \"\(version)\""), "_version.py is not at \(version)")
        XCTAssertTrue(python.contains("VERSION_NUMBER = \(number)"), "_version.py's number is not \(number)")

        let map = try read("scripts/cdmigrate.map")
        XCTAssertTrue(
            map.contains("CDMIGRATE_\(parts[0]) {"), "scripts/cdmigrate.map's version node is not CDMIGRATE_\(parts[0])"
        )
    }
}
