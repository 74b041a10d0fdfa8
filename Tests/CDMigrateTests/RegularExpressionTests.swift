import Foundation
import XCTest

@testable import CDMigrate

/// MATCHES: ICU's answers for ordinary patterns, and bounded work for hostile ones.
final class RegularExpressionTests: XCTestCase {
    private func matches(_ pattern: String, _ text: String, caseInsensitive: Bool = false) throws -> Bool {
        try RegularExpression(pattern, caseInsensitive: caseInsensitive).wholeMatch(text)
    }

    /// ICU (through Foundation's NSRegularExpression) on the whole text, as NSPredicate asks it.
    private func icu(_ pattern: String, _ text: String, caseInsensitive: Bool) throws -> Bool {
        let regex = try NSRegularExpression(
            pattern: "\\A(?:" + pattern + ")\\z", options: caseInsensitive ? [.caseInsensitive] : [])
        return regex.firstMatch(in: text, options: [], range: NSRange(location: 0, length: (text as NSString).length))
            != nil
    }

    func testOrdinaryPatternsAnswerAsICUDoes() throws {
        let patterns = [
            "G[a-z]+", "G[a-z]", "[a-z]+\\d", ".*x$", "caption [0-9]", "a|b|cd", "(ab)*c?", "a{2,3}", "a{2}", "a{2,}",
            "x{0,2}", "^*a",
            "[^abc]+", "[\\w.-]+@[\\w-]+\\.[a-z]{2,}", "\\d{3}-\\d{4}", "(?i)hello", "h(?i:ELLO) world", "^abc$",
            "\\bword\\b.*",
            "\\s*\\S+\\s*", "[[:alpha:]]+", "\\p{Lu}\\p{Ll}+", "\\P{L}+", "é+", "[à-ÿ]+", "a.c", "(?s)a.c", "a\\.c",
            "\\Qa.b\\E",
            "\\x41\\u0042", "colou?r", "(a|ab)(c|bcd)(d*)", "[]a]+", "[a\\]]+", "a*?b", "(?:x|y)+?z", "\\tx",
            "[\\d\\s]+", "🙂+",
            "(?<year>\\d{4})-(?<month>\\d{2})", "a{0}b", "(a*)*b", "(a+)+", "", "$^", "a$\\n?", "(?m)^b$",
        ]
        let texts = [
            "Groceries", "Go", "abc1", "max", "caption 7", "a", "cd", "ababc", "aaa", "aa", "", "xyz", "me@example.org",
            "555-1234", "HeLLo", "hEllo world", "abc", "word here", "  token ", "Straße", "Été", "ÀÉÎ", "éé", "àéÿ",
            "a\nc", "a.c", "a.b", "AB", "color", "colour", "abcd", "]a]", "aaab", "xyyxz", "\tx", "1 2 3", "🙂🙂",
            "2024-05", "b", "aaaaab", "aaaa", "a\n", "x\nb", "xyz\n",
        ]
        var compared = 0
        for pattern in patterns {
            for text in texts {
                for caseInsensitive in [false, true] {
                    let expected = try icu(pattern, text, caseInsensitive: caseInsensitive)
                    XCTAssertEqual(
                        try matches(pattern, text, caseInsensitive: caseInsensitive), expected,
                        "'\(pattern)' on '\(text)'\(caseInsensitive ? " [c]" : "")")
                    compared += 1
                }
            }
        }
        XCTAssertEqual(compared, patterns.count * texts.count * 2)
    }

    func testEscapes() throws {
        XCTAssertTrue(try matches("\\n\\t\\r\\f\\a\\e", "\n\t\r\u{C}\u{7}\u{1B}"))
        XCTAssertTrue(try matches("[\\t\\n]+", "\t\n\t"))
        XCTAssertTrue(try matches("a\\b b", "a b"), "\\b is a word boundary, not a backspace")
        XCTAssertFalse(try matches("a\\bb", "ab"))
        XCTAssertTrue(try matches("\\x41\\u00e9\\U0001F642", "Aé🙂"))
        XCTAssertTrue(try matches("\\x{1F642}+\\x{41}", "🙂🙂A"))
        XCTAssertFalse(try matches("\\x{41}", "B"))
        for pattern in ["\\x{}", "\\x{41", "\\x4", "\\u12", "\\U0001F64", "\\x{110000}", "\\x{123456789}"] {
            XCTAssertThrowsError(try RegularExpression(pattern, caseInsensitive: false), pattern) { error in
                XCTAssertTrue(
                    (error as? MigrationError)?.message.hasSuffix("at character 0") == true, "\(pattern): \(error)")
            }
        }
    }

    func testCatastrophicPatternsAnswerAtOnceInsteadOfBacktracking() throws {
        let run = String(repeating: "a", count: 26)
        XCTAssertFalse(try matches("(a+)+b", run))
        XCTAssertTrue(try matches("(a+)+b", run + "b"))
        XCTAssertFalse(try matches("(a|aa)*c", String(repeating: "a", count: 10_000)))
        XCTAssertFalse(try matches("(x+x+)+y", String(repeating: "x", count: 5_000)))
        XCTAssertFalse(try matches("(a*)*b", String(repeating: "a", count: 10_000)))
        XCTAssertTrue(try matches("(.*a){20}", String(repeating: "a", count: 40)))
        // And through a predicate, as a source filter would run it.
        let predicate = try ExpressionParser.parsePredicate(#"SELF MATCHES "(a+)+b""#)
        XCTAssertFalse(try PredicateEvaluator().evaluate(predicate, object: .string(run)))
    }

    func testWorkBeyondTheStepLimitEndsInAnErrorNamingThePattern() {
        // Many live states times a long text: more than `stepLimit` steps.
        let pattern = "(?:a*){1000}b"
        XCTAssertThrowsError(try matches(pattern, String(repeating: "a", count: 20_000))) { error in
            let error = error as? MigrationError
            XCTAssertEqual(error?.code, .expressionEvaluation)
            XCTAssertTrue(error?.message.contains(pattern) ?? false, error?.message ?? "")
            let budget = RegularExpression.stepLimit + RegularExpression.stepsPerCharacter * 20_000
            XCTAssertTrue(error?.message.contains("after \(budget) steps") ?? false, error?.message ?? "")
        }
        // A plain pattern over a long text stays within its budget.
        XCTAssertTrue(try matches(".*needle.*", String(repeating: "hay ", count: 250_000) + "needle"))
    }

    func testPatternsThatUnrollTooFarOrNestTooDeepAreRefused() {
        for pattern in ["(a{1000}){1000}", "a{1000000}", "((a{100}){100}){100}"] {
            XCTAssertThrowsError(try RegularExpression(pattern, caseInsensitive: false)) { error in
                XCTAssertEqual((error as? MigrationError)?.code, .expressionEvaluation)
                XCTAssertTrue(
                    (error as? MigrationError)?.message.contains(
                        "more than \(RegularExpression.maximumProgramSize) states") ?? false)
            }
        }
        // Empty bodies repeated any number of times cost nothing.
        XCTAssertTrue(try matches("(?:(){1000000}){1000000}x", "x"))
        var outcome: Error?
        ExpressionDepthLimitTests.onSmallStack {
            do {
                _ = try RegularExpression(
                    String(repeating: "(", count: 10_000) + "a" + String(repeating: ")", count: 10_000),
                    caseInsensitive: false)
                _ = try RegularExpression(
                    String(repeating: "[", count: 10_000) + "a" + String(repeating: "]", count: 10_000),
                    caseInsensitive: false)
            } catch { outcome = error }
        }
        XCTAssertEqual((outcome as? MigrationError)?.code, .expressionEvaluation)
        XCTAssertTrue(
            (outcome as? MigrationError)?.message.contains("limit of \(RegularExpression.maximumDepth) levels") ?? false
        )
    }

    func testMatchingStopsWhenCancelled() throws {
        let evaluator = ExpressionEvaluator()
        var polls = 0
        evaluator.isCancelled = {
            polls += 1
            return polls > 2
        }
        let predicate = try ExpressionParser.parsePredicate(#"SELF MATCHES "(a|b)*c""#)
        XCTAssertThrowsError(
            try PredicateEvaluator(expressions: evaluator).evaluate(
                predicate, object: .string(String(repeating: "ab", count: 50_000)))
        ) { error in
            XCTAssertEqual((error as? MigrationError)?.code, .migrationCancelled)
        }
        XCTAssertEqual(polls, 3)
        evaluator.isCancelled = nil
        XCTAssertTrue(try PredicateEvaluator(expressions: evaluator).evaluate(predicate, object: .string("ababc")))
    }

    func testConstructsAnAutomatonCannotMatchAreRefusedByName() {
        let refused = [
            "(a)\\1": "backreferences", "a(?=b)": "lookaround", "(?<!a)b": "lookaround", "(?>a)": "atomic",
            "a*+": "possessive", "x{,2}": "repetition", "a**": "after a quantifier", "{a}": "nothing to repeat",
            "a}": "without its", "[a-z&&[^e]]": "set operations", "\\p{Nonsense}": "property", "(a": "')'", "a)": "')'",
            "*a": "nothing to repeat",
        ]
        for (pattern, word) in refused {
            XCTAssertThrowsError(try RegularExpression(pattern, caseInsensitive: false), pattern) { error in
                let error = error as? MigrationError
                XCTAssertEqual(error?.code, .expressionEvaluation, pattern)
                XCTAssertTrue(error?.message.contains(word) ?? false, "\(pattern): \(error?.message ?? "")")
            }
        }
    }
}
