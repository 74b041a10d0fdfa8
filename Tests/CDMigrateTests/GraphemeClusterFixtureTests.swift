import Foundation
import XCTest

/// The C and Python reference migrations count characters as Swift's `Character` does; their tests
/// compare against `Tests/Fixtures/text/grapheme-clusters.json`. This checks that file against
/// Swift itself, so a toolchain with newer Unicode data shows up here first.
final class GraphemeClusterFixtureTests: XCTestCase {
    func testFixtureClustersAreTheCharactersSwiftMakes() throws {
        let path = TestPaths.fixtures + "/text/grapheme-clusters.json"
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let cases = try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [[String: Any]])
        XCTAssertGreaterThan(cases.count, 300)
        for entry in cases {
            let text = try XCTUnwrap(entry["text"] as? String)
            let clusters = try XCTUnwrap(entry["clusters"] as? [Int])
            XCTAssertEqual(
                text.map { $0.unicodeScalars.count }, clusters,
                "clusters of \(text.unicodeScalars.map { String($0.value, radix: 16) })")
        }
    }
}
