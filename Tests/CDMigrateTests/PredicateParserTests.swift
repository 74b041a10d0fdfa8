import XCTest

@testable import CDMigrate

// Foundation (through XCTest) has its own ValueExpression and FilterPredicate.

final class PredicateParserTests: XCTestCase {
    private func parse(_ text: String, _ args: [Value] = [], variables: [String: Value] = [:]) throws -> FilterPredicate
    {
        return try ExpressionParser.parsePredicate(text, arguments: args, variables: variables)
    }

    private func assertRoundTrip(
        _ text: String, _ expected: String? = nil, file: StaticString = #filePath, line: UInt = #line
    ) {
        do {
            let p = try parse(text)
            XCTAssertEqual(p.description, expected ?? text, file: file, line: line)
            XCTAssertEqual(try parse(p.description), p, "reparse of \(p.description)", file: file, line: line)
        } catch {
            XCTFail("\(text): \(error)", file: file, line: line)
        }
    }

    private func key(_ path: String) -> ValueExpression {
        .keyPath(.evaluatedObject, path.split(separator: ".").map(String.init))
    }

    func testComparisonOperators() throws {
        let spellings: [(String, FilterPredicate.ComparisonOperator)] = [
            ("==", .equal), ("=", .equal), ("!=", .notEqual), ("<>", .notEqual), ("<", .less), ("<=", .lessOrEqual),
            ("=<", .lessOrEqual), (">", .greater), (">=", .greaterOrEqual), ("=>", .greaterOrEqual),
            ("BEGINSWITH", .beginsWith), ("beginswith", .beginsWith), ("ENDSWITH", .endsWith), ("CONTAINS", .contains),
            ("LIKE", .like), ("Matches", .matches), ("IN", .in),
        ]
        for (spelling, op) in spellings {
            XCTAssertEqual(try parse("a \(spelling) 1"), .comparison(.init(key("a"), op, .constant(1))), spelling)
        }
        XCTAssertEqual(
            try parse("a BETWEEN {1, 5}"),
            .comparison(.init(key("a"), .between, .aggregate([.constant(1), .constant(5)]))))
    }

    func testOptionsAndModifiers() throws {
        XCTAssertEqual(
            try parse(#"name BEGINSWITH[cd] "a""#),
            .comparison(
                .init(key("name"), .beginsWith, .constant("a"), options: [.caseInsensitive, .diacriticInsensitive])))
        XCTAssertEqual(
            try parse(#"name ==[c] "a""#),
            .comparison(.init(key("name"), .equal, .constant("a"), options: .caseInsensitive)))
        XCTAssertEqual(
            try parse(#"name LIKE[d] "a""#),
            .comparison(.init(key("name"), .like, .constant("a"), options: .diacriticInsensitive)))
        XCTAssertEqual(
            try parse(#"ANY tags.name == "x""#),
            .comparison(.init(key("tags.name"), .equal, .constant("x"), modifier: .any)))
        XCTAssertEqual(
            try parse(#"some tags.name == "x""#),
            .comparison(.init(key("tags.name"), .equal, .constant("x"), modifier: .any)))
        XCTAssertEqual(
            try parse(#"ALL tags.name == "x""#),
            .comparison(.init(key("tags.name"), .equal, .constant("x"), modifier: .all)))
        XCTAssertEqual(
            try parse(#"NONE tags.name == "x""#),
            .comparison(.init(key("tags.name"), .equal, .constant("x"), modifier: .none)))
    }

    func testLogicalStructureAndPrecedence() throws {
        let a = FilterPredicate.comparison(.init(key("a"), .equal, .constant(1)))
        let b = FilterPredicate.comparison(.init(key("b"), .equal, .constant(2)))
        let c = FilterPredicate.comparison(.init(key("c"), .equal, .constant(3)))
        XCTAssertEqual(try parse("a == 1 OR b == 2 AND c == 3"), .or([a, .and([b, c])]))
        XCTAssertEqual(try parse("(a == 1 or b == 2) and c == 3"), .and([.or([a, b]), c]))
        XCTAssertEqual(try parse("a == 1 && b == 2 && c == 3"), .and([a, b, c]))
        XCTAssertEqual(try parse("(a == 1 && b == 2) && c == 3"), .and([a, b, c]))
        XCTAssertEqual(try parse("NOT a == 1 AND b == 2"), .and([.not(a), b]))
        XCTAssertEqual(try parse("!(a == 1 || b == 2)"), .not(.or([a, b])))
        XCTAssertEqual(try parse("TRUEPREDICATE"), .constant(true))
        XCTAssertEqual(try parse("falsepredicate"), .constant(false))
        // A parenthesis that opens an expression, not a predicate.
        XCTAssertEqual(
            try parse("(a + 1) * 2 > 3"),
            .comparison(
                .init(.binary(.multiply, .binary(.add, key("a"), .constant(1)), .constant(2)), .greater, .constant(3))))
        XCTAssertEqual(try parse("(a) == 1"), a)
    }

    func testRoundTrips() {
        assertRoundTrip("image != nil")
        assertRoundTrip(#"country == "Sweden""#)
        assertRoundTrip("a == 1 OR b == 2 AND c == 3")
        assertRoundTrip("(a == 1 OR b == 2) AND c == 3")
        assertRoundTrip("NOT (a == 1 AND b == 2)")
        assertRoundTrip("NOT a == 1")
        assertRoundTrip("NOT NOT a == 1")
        assertRoundTrip(#"name BEGINSWITH[cd] "é" AND note.body CONTAINS[c] "x""#)
        assertRoundTrip(#"ANY tags.name IN {"a", "b"}"#)
        assertRoundTrip("ALL items.price BETWEEN {1, 10}")
        assertRoundTrip("NONE items.price < 0")
        assertRoundTrip("SELF IN $list")
        assertRoundTrip("TRUEPREDICATE")
        assertRoundTrip("FALSEPREDICATE OR a == 1")
        assertRoundTrip("name MATCHES \"[a-z]+\\\\d\"")
        assertRoundTrip("name LIKE[c] \"*x?\"")
        assertRoundTrip("attachments.@count > 0")
        assertRoundTrip("SUBQUERY(items, $i, $i.price > 5).@count == 0")
        assertRoundTrip("#date < $now", "date < $now")
        assertRoundTrip("#between < 1", "#between < 1")
        assertRoundTrip("a == 1 AND b == 2", nil)
        assertRoundTrip("a = 1 and b <> 2", "a == 1 AND b != 2")
        assertRoundTrip("a =< 1 || b => 2 && !c == nil", "a <= 1 OR b >= 2 AND NOT c == nil")
    }

    func testFormatArgumentsAndVariables() throws {
        XCTAssertEqual(
            try parse("%K == %@", ["country", "Sweden"]),
            .comparison(.init(key("country"), .equal, .constant("Sweden"))))
        XCTAssertEqual(
            try parse("%K BETWEEN %@", ["n", .collection([1, 5])]),
            .comparison(.init(key("n"), .between, .constant(.collection([1, 5])))))
        XCTAssertEqual(
            try parse("n > %d AND x < %f", [3, 2.5]),
            .and([
                .comparison(.init(key("n"), .greater, .constant(3))),
                .comparison(.init(key("x"), .less, .constant(2.5))),
            ]))
        XCTAssertEqual(try parse("name == \"100%\" AND a == %@", [1]).description, "name == \"100%\" AND a == 1")
        XCTAssertEqual(
            try parse("country == $c", variables: ["c": "Finland"]),
            .comparison(.init(key("country"), .equal, .constant("Finland"))))
        XCTAssertEqual(
            try parse("country == $unknown"), .comparison(.init(key("country"), .equal, .variable("unknown"))))
        // A SUBQUERY variable is never substituted.
        XCTAssertEqual(
            try parse("SUBQUERY(items, $x, $x == 1).@count > 0", variables: ["x": 5]).description,
            "SUBQUERY(items, $x, $x == 1).@count > 0")
    }

    private func assertSyntaxError(
        _ text: String, _ args: [Value] = [], expected: String, offset: Int,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertThrowsError(try parse(text, args), file: file, line: line) { error in
            guard let e = error as? MigrationError else { return XCTFail("\(error)", file: file, line: line) }
            XCTAssertEqual(e.code, .expressionSyntax, file: file, line: line)
            XCTAssertEqual(e.offset, offset, e.message, file: file, line: line)
            XCTAssertTrue(e.message.hasPrefix("expected \(expected) but found "), e.message, file: file, line: line)
            XCTAssertTrue(e.message.contains("at character \(offset) in '\(text)'"), e.message, file: file, line: line)
        }
    }

    func testSyntaxErrors() {
        assertSyntaxError("", expected: "an expression", offset: 0)
        assertSyntaxError("name", expected: "a comparison operator", offset: 4)
        assertSyntaxError("name ~ 1", expected: "an expression", offset: 5)
        assertSyntaxError("name IS 1", expected: "a comparison operator", offset: 5)
        assertSyntaxError("name == ", expected: "an expression", offset: 8)
        assertSyntaxError("a == 1 AND", expected: "an expression", offset: 10)
        assertSyntaxError("a == 1 b == 2", expected: "end of text", offset: 7)
        assertSyntaxError("(a == 1", expected: "')' or a logical operator", offset: 7)
        assertSyntaxError("(a == 1 OR b == 2", expected: "')' or a logical operator", offset: 17)
        assertSyntaxError("name BEGINSWITH[x] \"a\"", expected: "comparison options made of c, d, n", offset: 16)
        assertSyntaxError("n BETWEEN {1, 2, 3}", expected: "two values {low, high} after BETWEEN", offset: 10)
        assertSyntaxError("a == %@", expected: "format argument 1 for '%@' (only 0 given)", offset: 5)
        assertSyntaxError("NOT", expected: "an expression", offset: 3)
        assertSyntaxError("ANY == 1", expected: "an expression", offset: 4)
        assertSyntaxError("name == \"unterminated", expected: "a closing \" for the string at character 8", offset: 21)
    }

    // MARK: Source expressions

    func testSourceExpressionFetchForm() throws {
        let text =
            #"FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:", "Note", "TRUEPREDICATE"), $manager.sourceContext, NO)"#
        let source = try SourceExpression.parse(text)
        XCTAssertEqual(source.entityName, "Note")
        XCTAssertEqual(source.predicate, .constant(true))
        XCTAssertEqual(source.description, text)
        XCTAssertEqual(try SourceExpression.parse(source.description), source)

        let filtered = try SourceExpression.parse(
            #"FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:", "InternationalUser", "country == 'Sweden'"), $manager.sourceContext, NO)"#
        )
        XCTAssertEqual(filtered.entityName, "InternationalUser")
        XCTAssertEqual(filtered.predicate, .comparison(.init(key("country"), .equal, .constant("Sweden"))))
    }

    func testSourceExpressionPlainPredicate() throws {
        let source = try SourceExpression.parse("image != nil")
        XCTAssertNil(source.entityName)
        XCTAssertEqual(source.predicate, .comparison(.init(key("image"), .notEqual, .constant(.null))))
        XCTAssertEqual(try SourceExpression.parse("  "), SourceExpression(entityName: nil, predicate: .constant(true)))
    }

    func testSourceExpressionErrors() {
        let text =
            #"FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:", "Note", "title =="), $manager.sourceContext, NO)"#
        XCTAssertThrowsError(try SourceExpression.parse(text)) { error in
            let e = error as? MigrationError
            XCTAssertEqual(e?.code, .expressionSyntax)
            // "title ==" ends at inner character 8; the offset points into the whole text.
            let start = text.distance(from: text.startIndex, to: text.firstRange(of: "\"title")!.lowerBound) + 1
            XCTAssertEqual(e?.offset, start + 8, e?.message ?? "")
            XCTAssertTrue(e?.message.contains("at character \(start + 8) in '\(text)'") ?? false, e?.message ?? "")
            XCTAssertTrue(
                e?.message.contains("expected an expression but found end of text") ?? false, e?.message ?? "")
        }
        XCTAssertThrowsError(try SourceExpression.parse(#"FETCH($x, $manager.sourceContext, NO)"#)) { error in
            XCTAssertEqual((error as? MigrationError)?.code, .expressionSyntax)
            XCTAssertTrue((error as? MigrationError)?.message.contains("fetchRequestForSourceEntityNamed") ?? false)
        }
    }
}
