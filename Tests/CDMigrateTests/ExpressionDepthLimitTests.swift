import Foundation
import XCTest
@testable import CDMigrate

/// Hostile expression text never overflows the stack: the parser refuses nesting beyond
/// `ExpressionParser.maximumDepth`, so parsing, evaluating, translating, printing and freeing
/// stay bounded even on a host thread with a small stack.
final class ExpressionDepthLimitTests: XCTestCase {
    /// Whether the tests run under AddressSanitizer, whose red zones make every frame several
    /// times larger than in the builds hosts link.
    static let underAddressSanitizer = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__asan_init") != nil

    /// Runs `body` on a thread with a 512 KiB stack, as many hosts give their threads, and waits for
    /// it (4 MiB under AddressSanitizer, for the same depth in its larger frames).
    static func onSmallStack(_ body: @escaping () -> Void) {
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            body()
            done.signal()
        }
        thread.stackSize = (underAddressSanitizer ? 8 : 1) * 512 * 1024
        thread.start()
        done.wait()
    }

    /// The outcome of parsing, evaluating, translating and freeing `text` on a small stack:
    /// the error if the parser refused it, nil if everything went through.
    static func exercise(_ text: String, predicate: Bool) -> MigrationError? {
        var outcome: MigrationError?
        onSmallStack {
            do {
                if predicate {
                    let parsed = try ExpressionParser.parsePredicate(text)
                    _ = try? PredicateEvaluator().evaluate(parsed, object: .null)
                    _ = PredicateSQLTranslator.translate(parsed, resolver: NoColumns())
                    _ = parsed.description
                    _ = parsed == parsed
                } else {
                    let parsed = try ExpressionParser.parseExpression(text)
                    _ = try? ExpressionEvaluator().evaluate(parsed, object: .null)
                    _ = parsed.description
                    _ = parsed == parsed
                }
            } catch let error as MigrationError {
                outcome = error
            } catch {
                outcome = MigrationError(.invalidArgument, "not a MigrationError: \(error)")
            }
        }
        return outcome
    }

    struct NoColumns: SQLColumnResolver {
        func sqlColumn(forKeyPath keys: [String]) -> (sql: String, type: AttributeType)? { ("ZA", .integer64) }
    }

    private func assertRefusedForDepth(_ text: String, predicate: Bool, file: StaticString = #filePath, line: UInt = #line) {
        guard let error = Self.exercise(text, predicate: predicate) else {
            return XCTFail("accepted a text nested far beyond the limit", file: file, line: line)
        }
        XCTAssertEqual(error.code, .expressionSyntax, error.message, file: file, line: line)
        XCTAssertTrue(error.message.contains("limit of \(ExpressionParser.maximumDepth) levels"), error.message, file: file, line: line)
        XCTAssertNotNil(error.offset, file: file, line: line)
        XCTAssertLessThan(error.message.count, 700, "the message quotes a short excerpt", file: file, line: line)
    }

    func testDeeplyNestedTextIsRefusedWithTheLimitOnASmallStack() {
        let cases: [(String, Bool)] = [
            (String(repeating: "(", count: 10_000) + "1" + String(repeating: ")", count: 10_000), false),
            (String(repeating: "(", count: 10_000) + "a == 1" + String(repeating: ")", count: 10_000), true),
            (String(repeating: #"FUNCTION("#, count: 2_000) + "1" + String(repeating: #", "x")"#, count: 2_000), false),
            (String(repeating: #"FUNCTION("#, count: 200) + "1" + String(repeating: #", "x")"#, count: 200), false),
            (String(repeating: "{", count: 5_000) + "1" + String(repeating: "}", count: 5_000), false),
            (String(repeating: "NOT ", count: 10_000) + "a == 1", true),
            (String(repeating: "!", count: 10_000) + "a == 1", true),
            (String(repeating: "-", count: 100_000) + "a", false),
            (String(repeating: "+", count: 100_000) + "a", false),
            (String(repeating: "CAST(", count: 1_000) + "1" + String(repeating: #", "NSNumber")"#, count: 1_000), false),
            (String(repeating: "sum:(", count: 1_000) + "1" + String(repeating: ")", count: 1_000), false),
            ("a" + String(repeating: "[0]", count: 10_000), false),
            (Array(repeating: "2", count: 10_000).joined(separator: " ** "), false),
            (String(repeating: "SUBQUERY(a, $x, ", count: 1_000) + "TRUEPREDICATE" + String(repeating: ").@count > 0", count: 1_000), true),
        ]
        for (text, predicate) in cases { assertRefusedForDepth(text, predicate: predicate) }
    }

    func testLongArithmeticChainsAreRefusedBeforeTheyNestTooDeep() {
        // A left-nested sum of 100,000 terms would overflow when evaluated or freed.
        assertRefusedForDepth(Array(repeating: "a", count: 100_000).joined(separator: " + "), predicate: false)
        assertRefusedForDepth(Array(repeating: "2", count: 10_000).joined(separator: " * "), predicate: false)
        assertRefusedForDepth(Array(repeating: "1", count: 10_000).joined(separator: " - ") + " == 0", predicate: true)
        assertRefusedForDepth(Array(repeating: "a[0]", count: 10_000).joined(separator: ".b"), predicate: false)
    }

    func testLongLogicalChainsAndListsStayFlatAndEvaluate() throws {
        // AND / OR lists and aggregates are flat: any length parses, evaluates and frees on a small stack.
        XCTAssertNil(Self.exercise(Array(repeating: "a == 1", count: 20_000).joined(separator: " AND "), predicate: true))
        XCTAssertNil(Self.exercise(Array(repeating: "a == 1", count: 20_000).joined(separator: " OR "), predicate: true))
        XCTAssertNil(Self.exercise("{" + Array(repeating: "1", count: 20_000).joined(separator: ", ") + "}", predicate: false))
        XCTAssertNil(Self.exercise("a." + Array(repeating: "b", count: 20_000).joined(separator: "."), predicate: false))
        var result: Bool?
        Self.onSmallStack {
            let text = Array(repeating: "1 == 1", count: 20_000).joined(separator: " AND ")
            result = try? PredicateEvaluator().evaluate(try ExpressionParser.parsePredicate(text), object: .null)
        }
        XCTAssertEqual(result, true)
    }

    func testDiscardedTriesOfParenthesesDoNotCopyTheWholeText() throws {
        // Each "(" is first tried as a predicate; the failed try's error must not quote the whole
        // text, or a long predicate costs its length squared.
        let text = Array(repeating: "(a + 1) > 0", count: 20_000).joined(separator: " AND ")
        let start = DispatchTime.now()
        let predicate = try ExpressionParser.parsePredicate(text)
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
        guard case .and(let items) = predicate else { return XCTFail("not an AND list") }
        XCTAssertEqual(items.count, 20_000)
        XCTAssertLessThan(seconds, 20, "parsing took \(seconds) s")
    }

    func testNestingJustInsideTheLimitParsesEvaluatesAndFreesOnASmallStack() throws {
        // The deepest forms the parser accepts still run on a 512 KiB stack.
        func deepest(_ build: (Int) -> String, predicate: Bool) -> Int {
            var n = 0
            while Self.exercise(build(n + 1), predicate: predicate) == nil { n += 1 }
            return n
        }
        let parentheses = deepest({ String(repeating: "(", count: $0) + "1" + String(repeating: ")", count: $0) }, predicate: false)
        XCTAssertGreaterThanOrEqual(parentheses, 60)
        let functions = deepest({ String(repeating: #"FUNCTION("#, count: $0) + "'a'" + String(repeating: #", "uppercaseString")"#, count: $0) }, predicate: false)
        XCTAssertGreaterThanOrEqual(functions, 30)
        let sums = deepest({ Array(repeating: "1", count: $0 + 1).joined(separator: " + ") }, predicate: false)
        XCTAssertGreaterThanOrEqual(sums, 60)
        let nots = deepest({ String(repeating: "NOT ", count: $0) + "1 == 1" }, predicate: true)
        XCTAssertGreaterThanOrEqual(nots, 60)
        let predicateParentheses = deepest({ String(repeating: "(", count: $0) + "1 == 1" + String(repeating: ")", count: $0) }, predicate: true)
        XCTAssertGreaterThanOrEqual(predicateParentheses, 30)
        let subqueries = deepest({ String(repeating: "SUBQUERY({1, 2}, $x, ", count: $0) + "TRUEPREDICATE" + String(repeating: ").@count > 0", count: $0) }, predicate: true)
        XCTAssertGreaterThanOrEqual(subqueries, 12)

        // And the values are right at that depth.
        let sum = try ExpressionParser.parseExpression(Array(repeating: "1", count: sums + 1).joined(separator: " + "))
        XCTAssertEqual(try ExpressionEvaluator().evaluate(sum), .integer(Int64(sums + 1)))
    }
}
