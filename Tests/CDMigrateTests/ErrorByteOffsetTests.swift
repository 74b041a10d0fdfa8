import XCTest

@testable import CDMigrate

/// Syntax errors give their position both in characters (`offset`, for messages) and in UTF-8
/// bytes (`byteOffset`, what the C API reports as sqlite3_error_offset does).
final class ErrorByteOffsetTests: XCTestCase {
    private func syntaxError(_ body: () throws -> Void, file: StaticString = #filePath, line: UInt = #line)
        -> MigrationError?
    {
        do {
            try body()
            XCTFail("no error", file: file, line: line)
        } catch let error as MigrationError {
            XCTAssertEqual(error.code, .expressionSyntax, error.message, file: file, line: line)
            return error
        } catch {
            XCTFail("\(error)", file: file, line: line)
        }
        return nil
    }

    func testExpressionErrorAfterNonASCIITextCountsUTF8Bytes() {
        // 'Grüße 👍🏽' + : the end is character 11 (👍🏽 is one character) and byte 20.
        let e = syntaxError { _ = try ExpressionParser.parseExpression("'Grüße 👍🏽' +") }
        XCTAssertEqual(e?.offset, 11)
        XCTAssertEqual(e?.byteOffset, 20)
    }

    func testErrorAfterManyNonASCIITokensCountsUTF8Bytes() {
        // The lexer counts bytes token by token; the error is at the ")" after the last comparison.
        let text = Array(repeating: "'ñü' == çà", count: 50).joined(separator: " AND ") + " + )"
        let e = syntaxError { _ = try ExpressionParser.parsePredicate(text) }
        let offset = text.count - 1
        XCTAssertEqual(e?.offset, offset)
        XCTAssertEqual(e?.byteOffset, text.prefix(offset).utf8.count)
    }

    func testErrorAfterManyParenthesesAndNonASCIITextCountsUTF8Bytes() {
        // Every "(" is tried as a predicate first; the error that is kept is far into the text,
        // after characters of one, two and four bytes (and a cluster of two scalars).
        let part = "(name + 'é👍🏽') > 'ß'"
        let text = Array(repeating: part, count: 300).joined(separator: " AND ") + " AND (x >"
        let e = syntaxError { _ = try ExpressionParser.parsePredicate(text) }
        XCTAssertEqual(e?.offset, text.count)
        XCTAssertEqual(e?.byteOffset, text.utf8.count)
    }

    func testLexerErrorAfterNonASCIITextCountsUTF8Bytes() {
        // The unknown operator "~" is character 10 and byte 12 (é, ö: 2 bytes each).
        let e = syntaxError { _ = try ExpressionParser.parsePredicate("café == ö ~ 1") }
        XCTAssertEqual(e?.offset, 10)
        XCTAssertEqual(e?.byteOffset, 12)
    }

    func testPredicateInsideFetchPointsIntoTheWholeTextInBytes() {
        let text =
            #"FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:", "Nöte", "tïtle =="), $manager.sourceContext, NO)"#
        let e = syntaxError { _ = try SourceExpression.parse(text) }
        let start = text.utf8.count - #""), $manager.sourceContext, NO)"#.utf8.count
        XCTAssertEqual(e?.byteOffset, start)
        XCTAssertEqual(e.map { $0.byteOffset! - $0.offset! }, 2)  // ö and ï
    }

    func testMappingProblemsKeepTheByteOffset() {
        let json =
            #"{"entityMappings": [{"name": "A", "sourceEntity": "Note", "destinationEntity": "Note", "attributeMappings": [{"name": "title", "valueExpression": "'ü' +"}]}]}"#
        let e = syntaxError { _ = try MappingModel(json: json) }
        let problem = e?.underlying.first ?? e
        XCTAssertEqual(problem?.offset, 5)
        XCTAssertEqual(problem?.byteOffset, 6)
    }
}
