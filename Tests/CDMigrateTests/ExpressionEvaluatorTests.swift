import XCTest

@testable import CDMigrate

final class ExpressionEvaluatorTests: XCTestCase {
    private var fixture: ExpressionFixture!
    private var environment: TestEnvironment!

    override func setUpWithError() throws {
        fixture = try ExpressionFixture()
        environment = TestEnvironment()
        environment.variables["source"] = .object(fixture.note)
        environment.variables["empty"] = .object(fixture.emptyNote)
        environment.variables["attachment"] = .object(fixture.attachments[0])
    }

    private func eval(_ text: String, _ args: [Value] = [], object: Value? = nil) throws -> Value {
        let e = try ExpressionParser.parseExpression(text, arguments: args)
        return try ExpressionEvaluator(environment: environment).evaluate(e, object: object ?? .object(fixture.note))
    }

    private func assertEval(
        _ text: String, _ expected: Value, _ args: [Value] = [], file: StaticString = #filePath, line: UInt = #line
    ) {
        do {
            let v = try eval(text, args)
            XCTAssertEqual(v, expected, "\(text) gave \(v.typeName) \(v)", file: file, line: line)
            // Same kind, not only equal by NSNumber's rules.
            XCTAssertEqual(v.typeName, expected.typeName, text, file: file, line: line)
        } catch {
            XCTFail("\(text): \(error)", file: file, line: line)
        }
    }

    private func assertEvalError(
        _ text: String, contains culprit: String, file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertThrowsError(try eval(text), text, file: file, line: line) { error in
            let e = error as? MigrationError
            XCTAssertEqual(e?.code, .expressionEvaluation, "\(error)", file: file, line: line)
            XCTAssertTrue(
                e?.message.contains(culprit) ?? false, "\(e?.message ?? "") should mention \(culprit)", file: file,
                line: line)
        }
    }

    // MARK: Key paths

    func testKeyPathsThroughRelationships() throws {
        assertEval("$source.title", "Groceries")
        assertEval("title", "Groceries")
        assertEval("SELF.title", "Groceries")
        assertEval("$attachment.note.body", "Milk, eggs and bread")
        assertEval("$attachment.note.title.length", .integer(9))
        XCTAssertEqual(
            try eval("$source.attachments").elements.compactMap { $0.object }.map { $0.objectID.primaryKey }, [1, 2, 3])
        // A to-many key path collects the members' values (nil captions left out, as KVC flattens).
        assertEval("$source.attachments.caption", .collection(["caption 1", "caption 3"]))
        assertEval("$source.tags.name", .collection(["home", "Shopping", "café"]))
        assertEval("$source.attachments.note.title", .collection(["Groceries", "Groceries", "Groceries"]))
        assertEval("$source.attachments.@count", .integer(3))
        assertEval("$empty.attachments.@count", .integer(0))
        assertEval("$source.attachments.@max.dateCreated", .date(30))
        assertEval("$source.attachments[FIRST].caption", "caption 1")
        assertEval("$source.attachments[SIZE]", .integer(3))
        assertEval("$source.attachments[2].caption", "caption 3")
        // Nil anywhere gives nil.
        assertEval("$empty.title", .null)
        assertEval("$empty.title.length", .null)
        assertEval("$empty.attachments[FIRST].caption", .null)
        assertEvalError("$source.nope", contains: "nope")
        assertEvalError("$source.attachments[7]", contains: "index 7")
        assertEvalError("$undefined.title", contains: "$undefined")
    }

    func testEnvironmentDispatch() throws {
        assertEval("$manager.sourceContext", "source context")
        assertEval("$entityMapping.name", "NoteToNote")
        assertEval("$entityMapping.userInfo.modelVersion", "4")
        assertEval(
            #"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "AttachmentToAttachment", $source.attachments)"#,
            .collection(["caption 1", .null, "caption 3"]))
        assertEval(#"FUNCTION($entityPolicy, "customSelector:", $source.displayIndex)"#, "custom(3)")
        assertEval(#"FUNCTION(CAST("MigrationFunctions", "Class"), "getFirstName:", "Julia Child")"#, "Julia")
        XCTAssertEqual(environment.calls.last, "MigrationFunctions getFirstName:")
        // $source is not handled by the environment: the selector applies to its value.
        assertEval(#"FUNCTION($source, "valueForKey:", "title")"#, "Groceries")
        assertEval(#"FUNCTION($source, "valueForKeyPath:", "tags.name")"#, .collection(["home", "Shopping", "café"]))
        assertEval(#"FUNCTION($source, "title")"#, "Groceries")
        assertEval(#"FUNCTION($attachment, "valueForKeyPath:", "note.body")"#, "Milk, eggs and bread")
        XCTAssertThrowsError(try eval(#"FUNCTION(CAST("Other", "Class"), "x:", 1)"#)) { error in
            XCTAssertTrue("\(error)".contains("Other.x:"))
        }
        XCTAssertThrowsError(try eval(#"FUNCTION($manager, "bogus")"#)) { error in
            XCTAssertTrue("\(error)".contains("bogus"))
        }
        // FETCH: the environment answers the fetch request with the instances.
        assertEval(
            #"FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:", "Note", "TRUEPREDICATE"), $manager.sourceContext, NO)"#,
            .collection(["Note", "TRUEPREDICATE"]))
        // Without an environment, variables are unknown and host functions unavailable.
        let e = try ExpressionParser.parseExpression(
            #"FUNCTION(CAST("MigrationFunctions", "Class"), "getFirstName:", "A B")"#)
        XCTAssertThrowsError(try ExpressionEvaluator.evaluate(e)) {
            XCTAssertTrue("\($0)".contains("MigrationFunctions.getFirstName:"))
        }
        XCTAssertEqual(
            try ExpressionEvaluator.evaluate(
                try ExpressionParser.parseExpression("title"), object: .object(fixture.note)), "Groceries")
    }

    // MARK: Selectors

    func testStringSelectors() throws {
        assertEval(#"FUNCTION("straße Ab", "uppercaseString")"#, "STRASSE AB")
        assertEval(#"FUNCTION("ÉCOLE", "lowercaseString")"#, "école")
        assertEval(#"FUNCTION("hello wORLD-wide", "capitalizedString")"#, "Hello World-Wide")
        assertEval(#"FUNCTION("né😀", "length")"#, .integer(4))
        assertEval(#"FUNCTION($source.body, "substringToIndex:", 4)"#, "Milk")
        assertEval(#"FUNCTION($source.body, "substringToIndex:", 80)"#, "Milk, eggs and bread")
        assertEval(#"FUNCTION($source.body, "substringToIndex:", -3)"#, "")
        assertEval(#"FUNCTION("a😀b", "substringToIndex:", 2)"#, "a")
        assertEval(#"FUNCTION($source.body, "substringFromIndex:", 15)"#, "bread")
        assertEval(#"FUNCTION($source.body, "substringFromIndex:", 99)"#, "")
        assertEval(#"FUNCTION("a,b,,c", "componentsSeparatedByString:", ",")"#, .collection(["a", "b", "", "c"]))
        assertEval(#"FUNCTION("Trosa", "stringByReplacingOccurrencesOfString:withString:", "Trosa", "Nora")"#, "Nora")
        assertEval(#"FUNCTION("ab", "stringByAppendingString:", "cd")"#, "abcd")
        assertEval(#"FUNCTION("ab", "isEqualToString:", "ab")"#, .bool(true))
        assertEval(#"FUNCTION("ab", "isEqualToString:", nil)"#, .bool(false))
        assertEval(#"FUNCTION("abc", "hasPrefix:", "ab")"#, .bool(true))
        assertEval(#"FUNCTION("abc", "hasPrefix:", "")"#, .bool(false))
        assertEval(#"FUNCTION("abc", "hasSuffix:", "bc")"#, .bool(true))
        assertEval(#"FUNCTION("abc", "containsString:", "d")"#, .bool(false))
        assertEval(#"FUNCTION(" 42abc", "intValue")"#, .integer(42))
        assertEval(#"FUNCTION("-7.9", "integerValue")"#, .integer(-7))
        assertEval(#"FUNCTION("99999999999", "intValue")"#, .integer(Int64(Int32.max)))
        assertEval(#"FUNCTION("99999999999", "longLongValue")"#, .integer(99_999_999_999))
        assertEval(#"FUNCTION("x", "intValue")"#, .integer(0))
        assertEval(#"FUNCTION(" 2.5e2xyz", "doubleValue")"#, .double(250))
        assertEval(#"FUNCTION("0.1", "floatValue")"#, .double(Double(Float(0.1))))
        assertEval(#"FUNCTION("yes", "boolValue")"#, .bool(true))
        assertEval(#"FUNCTION(" 007", "boolValue")"#, .bool(true))
        assertEval(#"FUNCTION("0", "boolValue")"#, .bool(false))
        assertEval(#"FUNCTION("abc", "description")"#, "abc")
        assertEval(#"FUNCTION("abc", "length")"#, .integer(3))
        assertEval("$source.title.uppercaseString", "GROCERIES")
    }

    func testNumberDateAndCollectionSelectors() throws {
        assertEval(#"FUNCTION(3.9, "intValue")"#, .integer(3))
        assertEval(#"FUNCTION(-3.9, "integerValue")"#, .integer(-3))
        assertEval(#"FUNCTION(3, "doubleValue")"#, .double(3))
        assertEval(#"FUNCTION(0, "boolValue")"#, .bool(false))
        assertEval(#"FUNCTION(2.5, "stringValue")"#, "2.5")
        assertEval(#"FUNCTION(YES, "description")"#, "1")
        assertEval(#"FUNCTION(42, "description")"#, "42")
        assertEval(#"FUNCTION($source.dateCreated, "timeIntervalSince1970")"#, .double(978_307_300))
        assertEval(#"FUNCTION($source.dateCreated, "timeIntervalSinceReferenceDate")"#, .double(100))
        assertEval(#"FUNCTION($source.dateCreated, "description")"#, "2001-01-01 00:01:40 +0000")
        assertEval(#"FUNCTION({1, 2, 3}, "count")"#, .integer(3))
        assertEval(#"FUNCTION({1, 2, 3}, "firstObject")"#, .integer(1))
        assertEval(#"FUNCTION({1, 2, 3}, "lastObject")"#, .integer(3))
        assertEval(#"FUNCTION({}, "lastObject")"#, .null)
        assertEval(#"FUNCTION({1, 2, 3}, "objectAtIndex:", 1)"#, .integer(2))
        assertEval(#"FUNCTION({"a", 2, YES}, "componentsJoinedByString:", "-")"#, "a-2-1")
        assertEval(#"FUNCTION($source.tags, "allObjects")"#, .collection(fixture.tags.map { .object($0) }))
        assertEval(#"FUNCTION($source.tags, "valueForKey:", "name")"#, .collection(["home", "Shopping", "café"]))
        assertEvalError(#"FUNCTION({1}, "objectAtIndex:", 5)"#, contains: "index 5")
    }

    func testNilReceiversGiveNil() throws {
        for selector in ["uppercaseString", "length", "intValue", "count", "description", "bogusSelector"] {
            assertEval(#"FUNCTION($empty.title, "\#(selector)")"#, .null)
        }
        assertEval(#"FUNCTION($empty.title, "substringToIndex:", 80)"#, .null)
        assertEval(#"FUNCTION(nil, "valueForKey:", "x")"#, .null)
    }

    func testUnknownSelectorsNameSelectorAndReceiver() {
        assertEvalError(
            #"FUNCTION("abc", "frobnicate")"#, contains: "unknown selector 'frobnicate' for a string receiver")
        assertEvalError(
            #"FUNCTION(42, "uppercaseString")"#, contains: "unknown selector 'uppercaseString' for an integer receiver")
        assertEvalError(#"FUNCTION($source, "frobnicate:", 1)"#, contains: "'frobnicate:' for an instance receiver")
        assertEvalError(
            #"FUNCTION("abc", "substringToIndex:", "x")"#, contains: "substringToIndex: needs a number argument")
        assertEvalError(#"FUNCTION($source, "valueForKey:", 3)"#, contains: "valueForKey: needs one key string")
    }

    // MARK: Casts, arithmetic, functions

    func testCasts() throws {
        assertEval(#"CAST($source.dateCreated, "NSNumber")"#, .double(100))
        assertEval(#"CAST(100, "NSDate")"#, .date(100))
        assertEval(#"CAST("2001-01-01T00:01:40Z", "NSDate")"#, .date(100))
        assertEval(#"CAST("2001-01-01 01:00:00 +0100", "NSDate")"#, .date(0))
        assertEval(#"CAST("2020-01-01", "NSDate")"#, .date(599_529_600))
        assertEval(#"CAST("42", "NSNumber")"#, .integer(42))
        assertEval(#"CAST("4.5kg", "NSNumber")"#, .double(4.5))
        assertEval(#"CAST(42, "NSString")"#, "42")
        assertEval(#"CAST($source.dateCreated, "NSString")"#, "2001-01-01 00:01:40 +0000")
        assertEval(#"CAST("1.50", "NSDecimalNumber")"#, .decimal("1.50"))
        assertEval(#"CAST(nil, "NSNumber")"#, .null)
        assertEval(
            #"CAST("00000000-0000-0000-0000-0000000000FF", "NSUUID")"#, .uuid(Array(repeating: 0, count: 15) + [255]))
        assertEvalError(#"CAST("soon", "NSDate")"#, contains: "soon")
        assertEvalError(#"CAST(1, "NSWidget")"#, contains: "NSWidget")
        assertEvalError(#"CAST("MigrationFunctions", "Class")"#, contains: "target of FUNCTION")
    }

    func testArithmetic() throws {
        assertEval("1 + 2 * 3", .integer(7))
        assertEval("(1 + 2) * 3", .integer(9))
        assertEval("7 / 2", .double(3.5))
        assertEval("8 / 2", .integer(4))
        assertEval("2 ** 10", .integer(1024))
        assertEval("2 ** -1", .double(0.5))
        assertEval("2 ** 3 ** 2", .integer(512))
        assertEval("-2 ** 2", .integer(-4))
        assertEval("1.5 + 1", .double(2.5))
        assertEval("-$source.displayIndex", .integer(-3))
        assertEval("$source.rating * 2", .double(9))
        assertEval("9223372036854775807 + 1", .double(9_223_372_036_854_775_808))
        assertEval("$source.dateCreated + 60", .date(160))
        assertEval("$source.dateCreated - 60", .date(40))
        assertEval("$source.dateCreated - CAST(40, \"NSDate\")", .double(60))
        assertEval("$empty.title + 1", .null)
        assertEval("nil * 2", .null)
        assertEvalError("1 / 0", contains: "division by zero")
        assertEvalError("\"a\" + 1", contains: "cannot apply '+' to a string value")
        assertEvalError("-\"a\"", contains: "cannot negate a string")
    }

    func testBuiltinFunctions() throws {
        assertEval("sum:({1, 2, 3})", .integer(6))
        assertEval("sum:({1, 2.5})", .double(3.5))
        assertEval("sum:(1, 2, 3)", .integer(6))
        assertEval("sum:({})", .integer(0))
        assertEval("count:({1, nil, 3})", .integer(3))
        assertEval("count:($source.attachments)", .integer(3))
        assertEval("min:({3, 1, 2})", .integer(1))
        assertEval("max:({\"b\", \"a\"})", "b")
        assertEval("max:($source.attachments.dateCreated)", .date(30))
        assertEval("average:({1, 2})", .double(1.5))
        assertEval("average:({})", .null)
        assertEval("median:({5, 1, 3, 2})", .double(2.5))
        assertEval("mode:({1, 2, 2, 3})", .collection([2]))
        assertEval("stddev:({2, 4, 4, 4, 5, 5, 7, 9})", .double(2))
        assertEval("abs:(-4)", .integer(4))
        assertEval("abs:(-4.5)", .double(4.5))
        assertEval("sqrt:(16)", .double(4))
        assertEval("floor:(2.7)", .double(2))
        assertEval("ceiling:(2.1)", .double(3))
        assertEval("trunc:(-2.7)", .double(-2))
        assertEval("ln:(1)", .double(0))
        assertEval("log:(100)", .double(2))
        assertEval("uppercase:(\"abc\")", "ABC")
        assertEval("lowercase:($source.title)", "groceries")
        assertEval("length:(\"abc\")", .integer(3))
        assertEval("add:to:(1, 2)", .integer(3))
        assertEval("from:subtract:(5, 2)", .integer(3))
        assertEval("multiply:by:(2, 2.5)", .double(5))
        assertEval("divide:by:(9, 3)", .integer(3))
        assertEval("modulus:by:(7, 3)", .integer(1))
        assertEval("raise:toPower:(3, 2)", .integer(9))
        assertEval("bitwiseAnd:with:(12, 10)", .integer(8))
        assertEval("distinct:({1, 2, 1})", .collection([1, 2]))
        assertEval("castObject:toType:(\"7\", \"NSNumber\")", .integer(7))
        assertEval("uppercase:($empty.title)", .null)
        let now = try eval("now()")
        guard case .date(let seconds) = now else { return XCTFail("now() gave \(now)") }
        XCTAssertGreaterThan(seconds, 700_000_000)  // after 2023
        assertEvalError("sum:({1, \"a\"})", contains: "sum needs numbers, not a string value")
        assertEvalError("uppercase:(1)", contains: "uppercase: needs a string")
        assertEvalError("sqrt:(\"x\")", contains: "sqrt: needs a number")
    }

    func testHandBuiltExpressionsAreChecked() {
        XCTAssertThrowsError(try ExpressionEvaluator.evaluate(.builtin("CAST", [.constant(1)]))) { error in
            XCTAssertEqual((error as? MigrationError)?.code, .expressionEvaluation)
            XCTAssertTrue("\(error)".contains("CAST takes 2 arguments, not 1"))
        }
        XCTAssertThrowsError(try ExpressionEvaluator.evaluate(.builtin("add:to:", [.constant(1)]))) {
            XCTAssertTrue("\($0)".contains("add:to: takes 2"))
        }
        XCTAssertThrowsError(try ExpressionEvaluator.evaluate(.builtin("sum:", []))) {
            XCTAssertTrue("\($0)".contains("sum: needs an argument"))
        }
        XCTAssertThrowsError(try ExpressionEvaluator.evaluate(.builtin("frob:", []))) {
            XCTAssertTrue("\($0)".contains("unknown function 'frob:'"))
        }
        XCTAssertThrowsError(try ExpressionEvaluator.evaluate(.function(.constant("a"), "substringToIndex:", []))) {
            XCTAssertTrue("\($0)".contains("substringToIndex: needs a number argument, not nothing"))
        }
    }

    func testAggregatesAndSubquery() throws {
        assertEval("{1, $source.title, nil}", .collection([1, "Groceries", .null]))
        assertEval("SUBQUERY($source.attachments, $a, $a.caption != nil).@count", .integer(2))
        assertEval("SUBQUERY($source.tags, $t, $t.name BEGINSWITH[c] 's').name", .collection(["Shopping"]))
    }

    func testEvaluationDoesNotReparse() throws {
        // One parsed expression, many objects.
        let e = try ExpressionParser.parseExpression(#"FUNCTION(caption, "uppercaseString")"#)
        let evaluator = ExpressionEvaluator(environment: environment)
        XCTAssertEqual(
            try fixture.attachments.map { try evaluator.evaluate(e, object: .object($0)) },
            ["CAPTION 1", .null, "CAPTION 3"])
    }
}
