import XCTest

@testable import CDMigrate

// Foundation (through XCTest) has its own ValueExpression and FilterPredicate.

final class ExpressionParserTests: XCTestCase {
    private func parse(_ text: String, _ args: [Value] = []) throws -> ValueExpression {
        return try ExpressionParser.parseExpression(text, arguments: args)
    }

    /// Parses, prints, and parses the print again: both parses must agree, and the print must be `expected`.
    private func assertRoundTrip(
        _ text: String, _ expected: String? = nil, file: StaticString = #filePath, line: UInt = #line
    ) {
        do {
            let e = try parse(text)
            XCTAssertEqual(e.description, expected ?? text, file: file, line: line)
            XCTAssertEqual(try parse(e.description), e, "reparse of \(e.description)", file: file, line: line)
        } catch {
            XCTFail("\(text): \(error)", file: file, line: line)
        }
    }

    func testMappingModelExpressionsRoundTrip() {
        assertRoundTrip("$source.name")
        assertRoundTrip("$source.note.body")
        assertRoundTrip("$source.ingredients")
        assertRoundTrip(#"FUNCTION($source, "valueForKey:", "tags")"#)
        assertRoundTrip(#"FUNCTION($source, "valueForKeyPath:", "note.body")"#)
        assertRoundTrip(
            #"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "IngredientToIngredient", $source.ingredients)"#
        )
        assertRoundTrip(
            #"FUNCTION($manager, "destinationInstancesForSourceRelationshipNamed:sourceInstances:", "tags", FUNCTION($source, "valueForKey:", "tags"))"#
        )
        assertRoundTrip(#"FUNCTION(CAST("MigrationFunctions", "Class"), "getFirstName:", $source.name)"#)
        assertRoundTrip(#"FUNCTION($source.name, "uppercaseString")"#)
        assertRoundTrip(#"FUNCTION($source.title, "substringToIndex:", 80)"#)
        assertRoundTrip(#"FUNCTION($entityPolicy, "customSelector:", $source.x)"#)
        assertRoundTrip(#"CAST($source.timeStamp, "NSNumber")"#)
        assertRoundTrip(#"CAST("2020-01-01 10:00:00 +0000", "NSDate")"#)
        assertRoundTrip(
            #"FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:", "Note", "TRUEPREDICATE"), $manager.sourceContext, NO)"#
        )
        assertRoundTrip("$entityMapping.userInfo.modelVersion")
    }

    func testStructure() throws {
        XCTAssertEqual(try parse("$source.note.body"), .keyPath(.variable("source"), ["note", "body"]))
        XCTAssertEqual(try parse("note.body"), .keyPath(.evaluatedObject, ["note", "body"]))
        XCTAssertEqual(try parse("SELF.name"), .keyPath(.evaluatedObject, ["name"]))
        XCTAssertEqual(try parse("SELF"), .evaluatedObject)
        XCTAssertEqual(try parse("self"), .evaluatedObject)
        XCTAssertEqual(
            try parse(#"FUNCTION($source, "valueForKey:", "tags")"#),
            .function(.variable("source"), "valueForKey:", [.constant("tags")]))
        XCTAssertEqual(try parse(#"CAST("C", "Class")"#), .builtin("CAST", [.constant("C"), .constant("Class")]))
        XCTAssertEqual(try parse("sum:({1, 2})"), .builtin("sum:", [.aggregate([.constant(1), .constant(2)])]))
        XCTAssertEqual(try parse("add:to:(1, 2)"), .builtin("add:to:", [.constant(1), .constant(2)]))
        XCTAssertEqual(try parse("now()"), .builtin("now", []))
        XCTAssertEqual(try parse("items[FIRST]"), .index(.keyPath(.evaluatedObject, ["items"]), .constant("FIRST")))
        XCTAssertEqual(try parse("items.@count"), .keyPath(.evaluatedObject, ["items", "@count"]))
        XCTAssertEqual(try parse("#in"), .keyPath(.evaluatedObject, ["in"]))
        XCTAssertEqual(try parse("$source.in"), .keyPath(.variable("source"), ["in"]))
    }

    func testLiterals() throws {
        XCTAssertEqual(try parse(#""text""#), .constant(.string("text")))
        XCTAssertEqual(try parse("'text'"), .constant(.string("text")))
        XCTAssertEqual(try parse(#""a\"b\\c\n\t\u00e9\x41""#), .constant(.string("a\"b\\c\n\té" + "A")))
        XCTAssertEqual(try parse(#"'it\'s'"#), .constant(.string("it's")))
        XCTAssertEqual(try parse("42"), .constant(.integer(42)))
        XCTAssertEqual(try parse("-3.5"), .constant(.double(-3.5)))
        XCTAssertEqual(try parse("1e3"), .constant(.double(1000)))
        XCTAssertEqual(try parse("2.5E-1"), .constant(.double(0.25)))
        XCTAssertEqual(try parse(".5"), .constant(.double(0.5)))
        XCTAssertEqual(try parse("0x1F"), .constant(.integer(31)))
        XCTAssertEqual(try parse("0o17"), .constant(.integer(15)))
        XCTAssertEqual(try parse("0b101"), .constant(.integer(5)))
        XCTAssertEqual(try parse("9223372036854775808"), .constant(.double(9_223_372_036_854_775_808)))
        for word in ["nil", "NULL", "Nil"] { XCTAssertEqual(try parse(word), .constant(.null)) }
        for word in ["YES", "TRUE", "true"] { XCTAssertEqual(try parse(word), .constant(.bool(true))) }
        for word in ["NO", "FALSE", "false"] { XCTAssertEqual(try parse(word), .constant(.bool(false))) }
        XCTAssertEqual(try parse("{}"), .aggregate([]))
        XCTAssertEqual(
            try parse("{1, 'a', {nil}}"), .aggregate([.constant(1), .constant("a"), .aggregate([.constant(.null)])]))
    }

    func testArithmeticPrecedence() throws {
        XCTAssertEqual(
            try parse("1 + 2 * 3"), .binary(.add, .constant(1), .binary(.multiply, .constant(2), .constant(3))))
        XCTAssertEqual(
            try parse("(1 + 2) * 3"), .binary(.multiply, .binary(.add, .constant(1), .constant(2)), .constant(3)))
        XCTAssertEqual(
            try parse("1 - 2 - 3"), .binary(.subtract, .binary(.subtract, .constant(1), .constant(2)), .constant(3)))
        XCTAssertEqual(
            try parse("2 ** 3 ** 2"), .binary(.power, .constant(2), .binary(.power, .constant(3), .constant(2))))
        XCTAssertEqual(try parse("-x"), .negation(.keyPath(.evaluatedObject, ["x"])))
        XCTAssertEqual(try parse("-2 ** 2"), .negation(.binary(.power, .constant(2), .constant(2))))
        assertRoundTrip("1 + 2 * 3")
        assertRoundTrip("(1 + 2) * 3")
        assertRoundTrip("1 - (2 - 3)")
        assertRoundTrip("1 - 2 - 3")
        assertRoundTrip("(2 ** 3) ** 2")
        assertRoundTrip("2 ** 3 ** 2")
        assertRoundTrip("-$source.price * 2")
        assertRoundTrip("-(a + b)")
        assertRoundTrip("a / -2")
        assertRoundTrip("$source.a.b + FUNCTION($source.name, \"length\") / 2")
        assertRoundTrip("{1, 2.5, \"x\", nil, YES}")
        assertRoundTrip("sum:({1, 2})")
        assertRoundTrip("now()")
        assertRoundTrip("items[0].name")
        assertRoundTrip("items[LAST]")
        assertRoundTrip("#in.#Like")
        assertRoundTrip("SUBQUERY(items, $x, $x.price > 2 AND $x.name BEGINSWITH[c] \"a\")")
        XCTAssertEqual(ValueExpression.binary(.power, .constant(-2), .constant(2)).description, "(-2) ** 2")
        XCTAssertEqual(ValueExpression.constant(.string("a\"b\\\n")).description, #""a\"b\\\n""#)
    }

    func testFormatArguments() throws {
        XCTAssertEqual(try parse("%@", ["x"]), .constant("x"))
        XCTAssertEqual(try parse("%K", ["note.body"]), .keyPath(.evaluatedObject, ["note", "body"]))
        XCTAssertEqual(
            try parse("%d + %f", [.double(3.9), .integer(2)]),
            .binary(.add, .constant(.integer(3)), .constant(.double(2))))
        XCTAssertEqual(try parse("%lld", [7]), .constant(.integer(7)))
        XCTAssertEqual(try parse("$source.%K", ["a.b"]), .keyPath(.variable("source"), ["a", "b"]))
        XCTAssertEqual(
            try parse(#"FUNCTION(%@, %@)"#, ["abc", "uppercaseString"]),
            .function(.constant("abc"), "uppercaseString", []))
        XCTAssertEqual(try parse("$x + 1", [], ), .binary(.add, .variable("x"), .constant(1)))
        XCTAssertEqual(
            try ExpressionParser.parseExpression("$x + 1", variables: ["x": 2]),
            .binary(.add, .constant(2), .constant(1)))
    }

    /// Asserts a syntax error whose message says what was expected and where.
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

    func testEscapesInStringLiterals() throws {
        XCTAssertEqual(try parse(#""\n\t\r\f\a\b\v\0\q\\""#), .constant(.string("\n\t\r\u{C}\u{7}\u{8}\u{B}\0q\\")))
        XCTAssertEqual(try parse(#""\x41\u00e9\u0042!""#), .constant(.string("AéB!")))
        XCTAssertEqual(try parse(#"'\u00E9t\u00e9'"#), .constant(.string("été")))
        assertSyntaxError(#""\x4""#, expected: "2 hexadecimal digits after '\\x'", offset: 4)
        assertSyntaxError(#""\u00"#, expected: "4 hexadecimal digits after '\\u'", offset: 5)
        assertSyntaxError(#""\ud800""#, expected: "a Unicode scalar value", offset: 1)
    }

    func testSyntaxErrors() throws {
        assertSyntaxError("", expected: "an expression", offset: 0)
        assertSyntaxError("$source.", expected: "a key after '.'", offset: 8)
        assertSyntaxError("1 +", expected: "an expression", offset: 3)
        assertSyntaxError("1 2", expected: "end of text", offset: 2)
        assertSyntaxError("(1 + 2", expected: "')' or an operator", offset: 6)
        assertSyntaxError(
            #"FUNCTION($source "valueForKey:")"#, expected: "',' and a selector string after the FUNCTION target",
            offset: 17)
        assertSyntaxError(#"FUNCTION($source, 42)"#, expected: "a selector string", offset: 18)
        assertSyntaxError(
            #"FUNCTION($source, "valueForKey:")"#,
            expected: "1 argument for selector 'valueForKey:' (one per ':'), not 0", offset: 18)
        assertSyntaxError(
            #"FUNCTION($source, "name", 1)"#, expected: "0 arguments for selector 'name' (one per ':'), not 1",
            offset: 18)
        assertSyntaxError(#"CAST($source.x)"#, expected: "2 arguments for CAST, not 1", offset: 0)
        assertSyntaxError(#"  foo:(1)"#, expected: "a known function (such as sum:, count:, now)", offset: 2)
        assertSyntaxError(#"abs:(1, 2)"#, expected: "1 argument for abs:, not 2", offset: 0)
        assertSyntaxError(#""abc"#, expected: "a closing \" for the string at character 0", offset: 4)
        assertSyntaxError(#"'a\"#, expected: "an escaped character after '\\'", offset: 3)
        assertSyntaxError(#""\u12G4""#, expected: "4 hexadecimal digits after '\\u'", offset: 5)
        assertSyntaxError("$", expected: "a variable name after '$'", offset: 1)
        assertSyntaxError("1 ^ 2", expected: "an expression", offset: 2)
        assertSyntaxError("12abc", expected: "an operator after the number", offset: 2)
        assertSyntaxError("0x", expected: "a base-16 number", offset: 0)
        assertSyntaxError("a AND b", expected: "end of text", offset: 2)
        assertSyntaxError("{1, 2", expected: "',' or '}'", offset: 5)
        assertSyntaxError("items[1", expected: "']' after the index", offset: 7)
        assertSyntaxError("%@ + %@", ["x"], expected: "format argument 2 for '%@' (only 1 given)", offset: 5)
        assertSyntaxError(
            "%K", [1], expected: "a key path string as format argument 1 for '%K', not integer '1'", offset: 0)
        assertSyntaxError("%d", ["x"], expected: "a number as format argument 1 for '%d', not string 'x'", offset: 0)
        assertSyntaxError("%y", expected: "a format conversion (%@, %K, %d or %f)", offset: 0)
        assertSyntaxError("AND", expected: "an expression", offset: 0)
        assertSyntaxError("é + ü ~", expected: "an expression", offset: 6)
    }

    func testTokenOffsetsCountCharacters() throws {
        let tokens = try ExpressionLexer.tokenize("\"é\" + $x")
        XCTAssertEqual(tokens.map { $0.offset }, [0, 4, 6, 8])
        XCTAssertEqual(tokens[2].kind, .variable("x"))
    }
}
