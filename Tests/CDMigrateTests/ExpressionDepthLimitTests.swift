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
                    notRefusedForDepth { try PredicateEvaluator().evaluate(parsed, object: .null) }
                    _ = PredicateSQLTranslator.translate(parsed, resolver: NoColumns())
                    _ = parsed.description
                    _ = parsed == parsed
                } else {
                    let parsed = try ExpressionParser.parseExpression(text)
                    notRefusedForDepth { try ExpressionEvaluator().evaluate(parsed, object: .null) }
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

    /// Evaluates a parsed expression: it may fail, but never on the evaluator's depth limit,
    /// which counts no more levels than the parser does.
    static func notRefusedForDepth(_ body: () throws -> Any) {
        do { _ = try body() } catch let error as MigrationError {
            XCTAssertFalse(
                error.message.contains("limit of"), "the evaluator refused a parsed expression: \(error.message)")
        } catch {
            XCTFail("not a MigrationError: \(error)")
        }
    }

    struct NoColumns: SQLColumnResolver {
        func sqlColumn(forKeyPath keys: [String]) -> (sql: String, type: AttributeType)? { ("ZA", .integer64) }
    }

    private func assertRefusedForDepth(
        _ text: String, predicate: Bool, file: StaticString = #filePath, line: UInt = #line
    ) {
        guard let error = Self.exercise(text, predicate: predicate) else {
            return XCTFail("accepted a text nested far beyond the limit", file: file, line: line)
        }
        XCTAssertEqual(error.code, .expressionSyntax, error.message, file: file, line: line)
        XCTAssertTrue(
            error.message.contains("limit of \(ExpressionParser.maximumDepth) levels"), error.message, file: file,
            line: line)
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
            (
                String(repeating: "CAST(", count: 1_000) + "1" + String(repeating: #", "NSNumber")"#, count: 1_000),
                false
            ),
            (String(repeating: "sum:(", count: 1_000) + "1" + String(repeating: ")", count: 1_000), false),
            ("a" + String(repeating: "[0]", count: 10_000), false),
            (Array(repeating: "2", count: 10_000).joined(separator: " ** "), false),
            (
                String(repeating: "SUBQUERY(a, $x, ", count: 1_000) + "TRUEPREDICATE"
                    + String(repeating: ").@count > 0", count: 1_000), true
            ),
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
        XCTAssertNil(
            Self.exercise(Array(repeating: "a == 1", count: 20_000).joined(separator: " AND "), predicate: true))
        XCTAssertNil(
            Self.exercise(Array(repeating: "a == 1", count: 20_000).joined(separator: " OR "), predicate: true))
        XCTAssertNil(
            Self.exercise("{" + Array(repeating: "1", count: 20_000).joined(separator: ", ") + "}", predicate: false))
        XCTAssertNil(
            Self.exercise("a." + Array(repeating: "b", count: 20_000).joined(separator: "."), predicate: false))
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
        // Quadratic work here shows as a test run of minutes instead of a second.
        let text = Array(repeating: "(a + 1) > 0", count: 20_000).joined(separator: " AND ")
        let predicate = try ExpressionParser.parsePredicate(text)
        guard case .and(let items) = predicate else { return XCTFail("not an AND list") }
        XCTAssertEqual(items.count, 20_000)
    }

    func testNestingJustInsideTheLimitParsesEvaluatesAndFreesOnASmallStack() throws {
        // The deepest forms the parser accepts still run on a 512 KiB stack.
        func deepest(_ build: (Int) -> String, predicate: Bool) -> Int {
            var n = 0
            while Self.exercise(build(n + 1), predicate: predicate) == nil { n += 1 }
            return n
        }
        let parentheses = deepest(
            { String(repeating: "(", count: $0) + "1" + String(repeating: ")", count: $0) }, predicate: false)
        XCTAssertGreaterThanOrEqual(parentheses, 60)
        let functions = deepest(
            {
                String(repeating: #"FUNCTION("#, count: $0) + "'a'"
                    + String(repeating: #", "uppercaseString")"#, count: $0)
            }, predicate: false)
        XCTAssertGreaterThanOrEqual(functions, 30)
        let sums = deepest({ Array(repeating: "1", count: $0 + 1).joined(separator: " + ") }, predicate: false)
        XCTAssertGreaterThanOrEqual(sums, 60)
        let nots = deepest({ String(repeating: "NOT ", count: $0) + "1 == 1" }, predicate: true)
        XCTAssertGreaterThanOrEqual(nots, 60)
        let predicateParentheses = deepest(
            { String(repeating: "(", count: $0) + "1 == 1" + String(repeating: ")", count: $0) }, predicate: true)
        XCTAssertGreaterThanOrEqual(predicateParentheses, 30)
        let subqueries = deepest(
            {
                String(repeating: "SUBQUERY({1, 2}, $x, ", count: $0) + "TRUEPREDICATE"
                    + String(repeating: ").@count > 0", count: $0)
            }, predicate: true)
        XCTAssertGreaterThanOrEqual(subqueries, 12)

        // And the values are right at that depth.
        let sum = try ExpressionParser.parseExpression(Array(repeating: "1", count: sums + 1).joined(separator: " + "))
        XCTAssertEqual(try ExpressionEvaluator().evaluate(sum), .integer(Int64(sums + 1)))
    }

    // MARK: Trees built by hand

    /// Frees a tree without recursion: each node is let go while the stack array holds its
    /// children, so no release reaches more than one level down. (Swift frees an indirect enum
    /// recursively; a chain of 100,000 levels would overflow any thread's stack when its last
    /// reference goes.) The tree must not share nodes with anything else.
    static func dismantle(_ root: consuming ValueExpression) {
        var pending: [ValueExpression] = [consume root]
        var predicates: [FilterPredicate] = []
        while !pending.isEmpty || !predicates.isEmpty {
            if let node = pending.popLast() {
                switch node {
                case .constant, .variable, .evaluatedObject: break
                case .keyPath(let base, _), .negation(let base): pending.append(base)
                case .function(let target, _, let args):
                    pending.append(target)
                    pending += args
                case .builtin(_, let args), .aggregate(let args): pending += args
                case .binary(_, let lhs, let rhs), .index(let lhs, let rhs):
                    pending.append(lhs)
                    pending.append(rhs)
                case .subquery(let collection, _, let predicate):
                    pending.append(collection)
                    predicates.append(predicate)
                }
            } else if let node = predicates.popLast() {
                switch node {
                case .constant: break
                case .not(let inner): predicates.append(inner)
                case .and(let items), .or(let items): predicates += items
                case .comparison(let c):
                    pending.append(c.lhs)
                    pending.append(c.rhs)
                }
            }
        }
    }

    /// Hand-built chains of each nesting kind, `levels` deep.
    static func handBuiltChains(_ levels: Int) -> [ValueExpression] {
        var chains: [ValueExpression] = []
        let kinds: [(ValueExpression) -> ValueExpression] = [
            { .binary(.add, $0, .constant(.integer(1))) },
            { .negation($0) },
            { .function($0, "uppercaseString", []) },
            { .builtin("abs:", [$0]) },
            { .aggregate([$0]) },
            { .index($0, .constant(.string("FIRST"))) },
            { .keyPath($0, ["count"]) },
            {
                .subquery(
                    .aggregate([.constant(.integer(1))]), "x", .comparison(.init($0, .equal, .constant(.integer(1)))))
            },
        ]
        for wrap in kinds {
            var e = ValueExpression.constant(.integer(1))
            for _ in 0..<levels { e = wrap(e) }
            chains.append(e)
        }
        return chains
    }

    static func handBuiltPredicateChains(_ levels: Int) -> [FilterPredicate] {
        let leaf = FilterPredicate.comparison(.init(.constant(.integer(1)), .equal, .constant(.integer(1))))
        var not = leaf
        var and = leaf
        var or = leaf
        for _ in 0..<levels {
            not = .not(not)
            and = .and([leaf, and])
            or = .or([.constant(false), or])
        }
        return [not, and, or]
    }

    static func dismantle(_ predicate: consuming FilterPredicate) {
        dismantle(.subquery(.constant(.null), "x", consume predicate))
    }

    func testHandBuiltTreesOf100000LevelsAreRefusedWhenEvaluatedOnASmallStack() {
        var outcomes: [String] = []
        Self.onSmallStack {
            // Each tree is taken out of its array, so that dismantling it frees it.
            var trees = Self.handBuiltChains(100_000)
            while let tree = trees.popLast() {
                do {
                    let value = try ExpressionEvaluator().evaluate(tree, object: .null)
                    outcomes.append("evaluated to \(value)")
                } catch let error as MigrationError {
                    outcomes.append(
                        error.code == .expressionEvaluation
                            && error.message.contains("nests deeper than the limit of 64 levels")
                            ? "refused" : error.message)
                } catch {
                    outcomes.append("\(error)")
                }
                Self.dismantle(consume tree)
            }
            var predicates = Self.handBuiltPredicateChains(100_000)
            while let predicate = predicates.popLast() {
                do {
                    let result = try PredicateEvaluator().evaluate(predicate, object: .null)
                    outcomes.append("evaluated to \(result)")
                } catch let error as MigrationError {
                    outcomes.append(
                        error.message.contains("nests deeper than the limit of 64 levels") ? "refused" : error.message)
                } catch {
                    outcomes.append("\(error)")
                }
                outcomes.append(
                    PredicateSQLTranslator.translate(predicate, resolver: NoColumns()) == nil ? "no SQL" : "SQL")
                Self.dismantle(consume predicate)
            }
        }
        // The arithmetic chain (the first kind, evaluated last) is walked without recursing: it evaluates.
        XCTAssertEqual(
            outcomes,
            Array(repeating: "refused", count: 7) + ["evaluated to \(Value.integer(100_001))"]
                + Array(repeating: ["refused", "no SQL"], count: 3).flatMap { $0 })
        // Freeing a chain that deep is left to `dismantle` above: Swift releases an indirect enum
        // recursively (docs/reliability.md).
    }

    func testArithmeticChainsAfterADeepOperandEvaluateAsTheyParse() throws {
        // 30 negations (two parser levels each, one evaluator level each) then 40 subtractions:
        // within the parser's limit, so the evaluator must not refuse it (found by fuzzing).
        let text =
            String(repeating: "-(", count: 30) + "SELF" + String(repeating: ")", count: 30)
            + String(repeating: " - 1", count: 40)
        let parsed = try ExpressionParser.parseExpression(text)
        XCTAssertEqual(try ExpressionEvaluator().evaluate(parsed, object: .integer(5)), .integer(-35))
        // Nil on the left ends the chain with nil, as each step of it would.
        XCTAssertEqual(
            try ExpressionEvaluator().evaluate(try ExpressionParser.parseExpression("SELF - 1 * 2 - 3"), object: .null),
            .null)
        XCTAssertEqual(
            try ExpressionEvaluator().evaluate(
                try ExpressionParser.parseExpression("10 - 2 * 3 - 1 + 8 / 4"), object: .null), .integer(5))
    }

    func testHandBuiltTreesEvaluateUpToTheLimitAndNoFurther() throws {
        // One level is the chain's node; the innermost constant counts none.
        // (A subquery counts two levels per wrap: itself and its comparison.)
        for tree in Self.handBuiltChains(ExpressionParser.maximumDepth).dropLast() {
            Self.notRefusedForDepth { try ExpressionEvaluator().evaluate(tree) }
        }
        // Every kind but the arithmetic chain (walked without recursing, so never too deep).
        for (kind, tree) in Self.handBuiltChains(ExpressionParser.maximumDepth + 1).enumerated().dropFirst() {
            XCTAssertThrowsError(try ExpressionEvaluator().evaluate(tree), "kind \(kind)") { error in
                XCTAssertTrue((error as? MigrationError)?.message.contains("limit of 64 levels") == true, "\(error)")
            }
        }
        let sum = Self.handBuiltChains(ExpressionParser.maximumDepth)[0]
        XCTAssertEqual(try ExpressionEvaluator().evaluate(sum), .integer(Int64(ExpressionParser.maximumDepth + 1)))
        // A predicate: each NOT and the comparison count one level.
        var predicate = FilterPredicate.comparison(.init(.constant(.integer(1)), .equal, .constant(.integer(1))))
        for _ in 0..<(ExpressionParser.maximumDepth - 1) { predicate = .not(predicate) }
        XCTAssertNoThrow(try PredicateEvaluator().evaluate(predicate, object: .null))
        XCTAssertNotNil(PredicateSQLTranslator.translate(predicate, resolver: NoColumns()))
        XCTAssertThrowsError(try PredicateEvaluator().evaluate(.not(predicate), object: .null))
        XCTAssertNil(PredicateSQLTranslator.translate(.not(predicate), resolver: NoColumns()))
        // The evaluator is usable again after refusing (its depth is back to zero).
        let evaluator = ExpressionEvaluator()
        XCTAssertThrowsError(try evaluator.evaluate(Self.handBuiltChains(100)[1]))
        XCTAssertEqual(try evaluator.evaluate(sum), .integer(Int64(ExpressionParser.maximumDepth + 1)))
    }
}
