import XCTest

@testable import CDMigrate

final class PredicateEvaluatorTests: XCTestCase {
    private var fixture: ExpressionFixture!
    private var environment: TestEnvironment!

    override func setUpWithError() throws {
        fixture = try ExpressionFixture()
        environment = TestEnvironment()
        environment.variables["source"] = .object(fixture.note)
    }

    private func holds(_ text: String, _ args: [Value] = [], object: Value? = nil, variables: [String: Value] = [:])
        throws -> Bool
    {
        let p = try ExpressionParser.parsePredicate(text, arguments: args, variables: variables)
        return try PredicateEvaluator(environment: environment).evaluate(p, object: object ?? .object(fixture.note))
    }

    private func assertTrue(
        _ text: String, _ args: [Value] = [], object: Value? = nil, file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertTrue(
            (try? holds(text, args, object: object)) ?? false, "expected true: \(text)", file: file, line: line)
        XCTAssertNoThrow(try holds(text, args, object: object), file: file, line: line)
    }

    private func assertFalse(
        _ text: String, _ args: [Value] = [], object: Value? = nil, file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertFalse(
            (try? holds(text, args, object: object)) ?? true, "expected false: \(text)", file: file, line: line)
        XCTAssertNoThrow(try holds(text, args, object: object), file: file, line: line)
    }

    func testEqualityAndNil() {
        assertTrue(#"title == "Groceries""#)
        assertFalse(#"title == "groceries""#)
        assertTrue(#"title ==[c] "groceries""#)
        assertTrue("displayIndex == 3")
        assertTrue("displayIndex == 3.0")
        assertTrue("archived == YES")
        assertTrue("archived == 1")
        assertTrue("rating = 4.5")
        assertTrue("dateCreated == CAST(100, \"NSDate\")")
        assertFalse("dateCreated == 100")
        // nil: equal only to nil; != holds against a value; ordering is false.
        let empty = Value.object(fixture.emptyNote)
        assertTrue("title == nil", object: empty)
        assertTrue("title == NULL", object: empty)
        assertTrue(#"title != "x""#, object: empty)
        assertFalse(#"title == "x""#, object: empty)
        assertFalse(#"title < "x""#, object: empty)
        assertFalse(#"title >= "x""#, object: empty)
        assertTrue(#"NOT title < "x""#, object: empty)
        assertFalse(#"title BEGINSWITH "x""#, object: empty)
        assertFalse("title IN {\"x\"}", object: empty)
        assertTrue("title IN {\"x\", nil}", object: empty)
        assertFalse("title != nil", object: empty)
        assertTrue("SELF == $source")
        assertTrue("$source.title == title")
    }

    func testOrdering() {
        assertTrue("displayIndex > 2 AND displayIndex >= 3 AND displayIndex < 4 AND displayIndex <= 3")
        assertTrue("rating > 4")
        assertTrue(#"title < "H""#)
        assertFalse(#"title < "A""#)
        assertTrue(#"title <[c] "h""#)
        assertTrue("dateCreated > CAST(\"2001-01-01T00:00:00Z\", \"NSDate\")")
        assertFalse("title > 3")  // a string and a number do not order
        assertTrue("displayIndex BETWEEN {1, 3}")
        assertFalse("displayIndex BETWEEN {4, 9}")
        assertTrue("displayIndex BETWEEN %@", [.collection([3, 3])])
        XCTAssertThrowsError(try holds("displayIndex BETWEEN %@", [.collection([1])])) { error in
            XCTAssertEqual((error as? MigrationError)?.code, .expressionEvaluation)
            XCTAssertTrue("\(error)".contains("BETWEEN needs two values"))
        }
    }

    func testStringOperators() {
        assertTrue(#"title BEGINSWITH "Gro""#)
        assertFalse(#"title BEGINSWITH "gro""#)
        assertTrue(#"title BEGINSWITH[c] "gro""#)
        assertTrue(#"title ENDSWITH "ries""#)
        assertTrue(#"body CONTAINS "eggs""#)
        assertFalse(#"body CONTAINS """#)  // Foundation: an empty substring is never found
        assertFalse(#"body BEGINSWITH """#)
        assertTrue(#"title LIKE "Gro*s""#)
        assertTrue(#"title LIKE "G?oceries""#)
        assertFalse(#"title LIKE "Gro""#)
        assertTrue(#"title LIKE[c] "*CERIES""#)
        assertTrue(#"title LIKE "*""#)
        assertTrue(#"title MATCHES "G[a-z]+""#)
        assertFalse(#"title MATCHES "G[a-z]""#)  // whole-string match
        assertTrue(#"title MATCHES[c] "g[A-Z]+""#)
        assertTrue(#""eggs" IN body"#)
        assertTrue(#"ANY tags.name ==[cd] "CAFE""#)
        assertFalse(#"ANY tags.name == "cafe""#)
        assertTrue(#"ANY tags.name CONTAINS[d] "fe""#)
        assertTrue(#"ANY tags.name BEGINSWITH[cd] "CAF""#)
        XCTAssertTrue(ValueComparison.like("a*b", "a\\*b", []))
        XCTAssertFalse(ValueComparison.like("axb", "a\\*b", []))
        XCTAssertTrue(ValueComparison.like("", "*", []))
        XCTAssertTrue(ValueComparison.like("abcabd", "*ab?", []))
        XCTAssertEqual(ValueComparison.foldDiacritics("Crème brûlée Ærø Łódź e\u{301}"), "Creme brulee Æro Lodz e")
        XCTAssertThrowsError(try holds(#"displayIndex BEGINSWITH "3""#)) { error in
            XCTAssertEqual((error as? MigrationError)?.code, .expressionEvaluation)
            XCTAssertTrue("\(error)".contains("BEGINSWITH compares strings, not an integer value"))
        }
        XCTAssertThrowsError(try holds(#"title MATCHES "(""#)) { error in
            XCTAssertTrue("\(error)".contains("invalid regular expression '('"))
        }
    }

    func testCollectionsAndModifiers() {
        assertTrue(#"ANY tags.name == "home""#)
        assertTrue(#"SOME tags.name == "home""#)
        assertFalse(#"ALL tags.name == "home""#)
        assertTrue(#"ALL tags.name != "work""#)
        assertTrue(#"NONE tags.name == "work""#)
        assertFalse(#"NONE tags.name == "home""#)
        assertTrue("ALL attachments.dateCreated > CAST(5, \"NSDate\")")
        let empty = Value.object(fixture.emptyNote)
        assertTrue(#"ALL tags.name == "x""#, object: empty)  // vacuous
        assertFalse(#"ANY tags.name == "x""#, object: empty)
        assertTrue(#"NONE tags.name == "x""#, object: empty)
        assertTrue(#"tags.name CONTAINS "home""#)
        assertTrue(#""home" IN tags.name"#)
        assertTrue("displayIndex IN {1, 2, 3}")
        assertTrue("displayIndex IN %@", [.collection([3, 4])])
        assertFalse("displayIndex IN {}")
        assertTrue(#"title IN[c] {"groceries"}"#)
        assertTrue("attachments.@count == 3")
        assertTrue("tags.@count > 0 AND attachments.@count BETWEEN {1, 5}")
        assertTrue("SUBQUERY(attachments, $a, $a.caption == nil).@count == 1")
        assertTrue("ANY attachments.note == SELF")
        assertTrue(#"ANY attachments.note.title == "Groceries""#)
    }

    func testLogic() {
        assertTrue("TRUEPREDICATE")
        assertFalse("FALSEPREDICATE")
        assertTrue("displayIndex == 3 AND (rating > 10 OR archived == YES)")
        assertFalse("displayIndex == 3 AND NOT archived == YES")
        assertTrue("NOT (displayIndex == 4 OR rating == 1)")
        assertTrue("(displayIndex + 1) * 2 == 8")
    }

    func testVariablesAndArguments() throws {
        XCTAssertTrue(try holds("title == $wanted", variables: ["wanted": "Groceries"]))
        XCTAssertTrue(try holds("%K == %@", ["title", "Groceries"]))
        XCTAssertTrue(try holds("$source.displayIndex == 3", object: .null))
        XCTAssertThrowsError(try holds("title == $missing")) { error in
            XCTAssertEqual((error as? MigrationError)?.code, .expressionEvaluation)
            XCTAssertTrue("\(error)".contains("$missing"))
        }
    }

    func testRowsUseOneParsedPredicateAndCachedRegex() throws {
        let p = try ExpressionParser.parsePredicate(#"caption MATCHES "caption [0-9]" OR caption == nil"#)
        let evaluator = PredicateEvaluator(environment: environment)
        XCTAssertEqual(
            try fixture.attachments.map { try evaluator.evaluate(p, object: .object($0)) }, [true, true, true])
        XCTAssertEqual(evaluator.expressions.regexCache.count, 1)
    }
}
