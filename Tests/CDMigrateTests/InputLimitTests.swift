import XCTest

@testable import CDMigrate

/// Hostile inputs to the readers end with an error naming the limit they pass, quickly and
/// without building large values: XML entity declarations and elements with too many
/// attributes, JSON files that are not UTF-8, and expressions whose functions would grow a
/// value without end.
final class InputLimitTests: XCTestCase {
    var scratch: ScratchDirectory!
    override func setUp() { scratch = ScratchDirectory() }

    func error(_ body: () throws -> Any) -> MigrationError? {
        do {
            _ = try body()
            return nil
        } catch { return error as? MigrationError }
    }

    // MARK: Xcode XML

    /// 20,000 references to one 50 KB internal entity in an attribute: 1 GB once expanded.
    func testAnEntityDeclarationIsRefusedBeforeExpansion() {
        let entity = String(repeating: "x", count: 50_000)
        let references = String(repeating: "&e;", count: 20_000)
        let xml =
            "<?xml version=\"1.0\"?>\n<!DOCTYPE model [\n<!ENTITY e \"\(entity)\">\n]>\n<model><entity name=\"\(references)\"/></model>"
        let e = error { try XMLElement.parse(bytes: Array(xml.utf8), name: "contents") }
        XCTAssertEqual(e?.code, .invalidModel)
        XCTAssertTrue(e?.message.contains("declares an XML entity at line 3") ?? false, "\(String(describing: e))")
        // A parameter entity and one declared after a comment: refused too.
        for subset in ["<!ENTITY % p \"x\">", "<!-- c --><!ENTITY a \"b\">"] {
            let text = "<!DOCTYPE model [\(subset)]><model/>"
            XCTAssertTrue(
                error { try XMLElement.parse(bytes: Array(text.utf8), name: "c") }?.message.contains("entity") ?? false,
                subset)
        }
    }

    func testEntityDeclarationTextInsideACommentOrCDATAIsNotADeclaration() throws {
        let xml =
            "<model><!-- <!ENTITY e \"x\"> a=1 b=2 --><entity name=\"A\"><![CDATA[<!ENTITY x \"y\"> = = =]]></entity></model>"
        let root = try XMLElement.parse(bytes: Array(xml.utf8), name: "contents")
        XCTAssertEqual(root.child(named: "entity")?.text, "<!ENTITY x \"y\"> = = =")
    }

    /// 100,000 attributes on one element (a 1 MB file): libxml2 would take minutes over them.
    func testAnElementWithTooManyAttributesIsRefusedNamingTheLimit() throws {
        let many = (0..<100_000).map { "a\($0)=\"1\"" }.joined(separator: " ")
        let e = error {
            try XMLElement.parse(bytes: Array("<model>\n<entity \(many)/></model>".utf8), name: "contents")
        }
        XCTAssertEqual(e?.code, .invalidModel)
        XCTAssertTrue(
            e?.message.contains("more than \(XMLInputLimits.maximumAttributesPerElement) attributes at line 2")
                ?? false, "\(String(describing: e))")
        // At the limit, and with `=` inside quoted values, it reads.
        let atLimit = (0..<XMLInputLimits.maximumAttributesPerElement).map { "a\($0)=\"x=y\"" }.joined(separator: " ")
        let root = try XMLElement.parse(bytes: Array("<model \(atLimit)/>".utf8), name: "contents")
        XCTAssertEqual(root.attributes.count, XMLInputLimits.maximumAttributesPerElement)
        XCTAssertEqual(root["a0"], "x=y")
    }

    func testAnXMLFileAboveTheSizeLimitIsRefusedBeforeItIsRead() throws {
        let path = scratch.file("contents")
        let file = fopen(path, "wb")
        XCTAssertNotNil(file)
        fputs("<model>", file)
        fseek(file, XMLInputLimits.maximumBytes, SEEK_SET)  // sparse: no disk used
        fputs("</model>", file)
        fclose(file)
        let e = error { try XMLElement.parse(file: path) }
        XCTAssertEqual(e?.code, .invalidModel)
        XCTAssertTrue(
            e?.message.contains("above the limit of \(XMLInputLimits.maximumBytes) bytes") ?? false,
            "\(String(describing: e))")
        XCTAssertTrue(
            error {
                try XMLElement.parse(
                    bytes: [UInt8](repeating: 0x20, count: XMLInputLimits.maximumBytes + 1), name: "big")
            }?.message.contains("above the limit") ?? false)
    }

    // MARK: UTF-8 in JSON files

    func testAJSONFileThatIsNotUTF8IsRefusedWithItsLineAndByteOffset() throws {
        // "Café" in Latin-1: é is the single byte 0xE9.
        let path = scratch.file("latin1.mapping.json")
        let text = Array("{\"entityMappings\": [\n  {\"name\": \"Caf".utf8) + [0xE9] + Array("\"}]}".utf8)
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(text)))
        let e = error { try MappingModel(contentsOf: path) }
        XCTAssertEqual(e?.code, .invalidJSON)
        XCTAssertTrue(
            e?.message.contains("'\(path)' is not valid UTF-8: byte 0xE9 at line 2, byte offset 36") ?? false,
            "\(String(describing: e))")
        XCTAssertEqual(e?.byteOffset, 36)
        let model = scratch.file("latin1.json")
        XCTAssertTrue(
            FileManager.default.createFile(
                atPath: model,
                contents: Data(Array("{\"entities\": [{\"name\": \"N".utf8) + [0xE9] + Array("\"}]}".utf8))))
        XCTAssertEqual(error { try ManagedObjectModel(contentsOf: model) }?.code, .invalidJSON)
    }

    func testTheUTF8CheckFollowsUnicodesDefinitionOfWellFormed() {
        let valid: [[UInt8]] = [Array("aé€😀".utf8), [], [0x7F], [0xF4, 0x8F, 0xBF, 0xBF]]
        for bytes in valid { XCTAssertNil(UTF8Text.firstInvalidByte(bytes), "\(bytes)") }
        let invalid: [([UInt8], Int)] = [
            ([0x61, 0xC0, 0xAF], 1),  // overlong
            ([0xE0, 0x80, 0x80], 0),  // overlong
            ([0xED, 0xA0, 0x80], 0),  // a surrogate
            ([0xF4, 0x90, 0x80, 0x80], 0),  // above U+10FFFF
            ([0x61, 0x62, 0xE2, 0x82], 2),  // cut short
            ([0x80], 0), ([0xFF], 0), ([0xC3, 0x28], 0),
        ]
        for (bytes, offset) in invalid { XCTAssertEqual(UTF8Text.firstInvalidByte(bytes), offset, "\(bytes)") }
    }

    func testTheUTF8CheckFindsTheBadByteAfterRunsOfASCIIOfEveryLength() {
        // ASCII is skipped eight bytes at a time: a bad byte (or a valid sequence cut short) at
        // every offset around those eight-byte steps, with ASCII or a valid sequence after it.
        for run in 0...20 {
            let ascii = Array(repeating: UInt8(ascii: "a"), count: run)
            XCTAssertNil(UTF8Text.firstInvalidByte(ascii), "\(run)")
            XCTAssertNil(UTF8Text.firstInvalidByte(ascii + Array("é".utf8) + ascii), "\(run)")
            XCTAssertNil(UTF8Text.firstInvalidByte(ascii + Array("a€😀é".utf8)), "\(run)")
            XCTAssertEqual(UTF8Text.firstInvalidByte(ascii + Array("é".utf8) + [0xFF]), run + 2, "\(run)")
            XCTAssertEqual(UTF8Text.firstInvalidByte(ascii + Array("€".utf8) + ascii + [0xC3]), 2 * run + 3, "\(run)")
            for bad: [UInt8] in [[0xFF], [0x80], [0xC3], [0xE2, 0x82], [0xC0, 0xAF]] {
                for tail in [[], Array("abcdefghij".utf8), Array("é".utf8)] {
                    XCTAssertEqual(UTF8Text.firstInvalidByte(ascii + bad + tail), run, "\(run) \(bad) \(tail)")
                }
            }
        }
    }

    // MARK: Expressions

    func evaluate(_ text: String, isCancelled: (() -> Bool)? = nil) throws -> Value {
        let evaluator = ExpressionEvaluator()
        evaluator.isCancelled = isCancelled
        return try evaluator.evaluate(try ExpressionParser.parseExpression(text))
    }

    /// Eight nested replacements, each making every character 16: 16⁸ = 4.3 × 10⁹ characters.
    static var growingExpression: String {
        var e = "'ab'"
        for _ in 0..<8 {
            e = "FUNCTION(\(e), 'stringByReplacingOccurrencesOfString:withString:', 'a', 'aaaaaaaaaaaaaaaa')"
        }
        return e
    }

    func testAnExpressionCannotGrowAStringPastTheLimit() throws {
        XCTAssertLessThan(Self.growingExpression.utf8.count, 1_000)
        let e = error { try self.evaluate(Self.growingExpression) }
        XCTAssertEqual(e?.code, .expressionEvaluation)
        XCTAssertTrue(
            e?.message.contains("above the limit of \(ExpressionValueLimits.maximumStringBytes) bytes") ?? false,
            "\(String(describing: e))")
        // Appending and joining stop at the same limit; a string just under it is made.
        let big =
            "FUNCTION(FUNCTION(FUNCTION('x', 'stringByReplacingOccurrencesOfString:withString:', 'x', '\(String(repeating: "y", count: 4096))'), 'stringByReplacingOccurrencesOfString:withString:', 'y', '\(String(repeating: "z", count: 64))'), 'stringByReplacingOccurrencesOfString:withString:', 'z', '\(String(repeating: "w", count: 64))')"
        XCTAssertEqual(try evaluate(big).stringValue?.utf8.count, ExpressionValueLimits.maximumStringBytes)
        XCTAssertTrue(
            error { try self.evaluate("FUNCTION(" + big + ", 'stringByAppendingString:', 'x')") }?.message.contains(
                "above the limit") ?? false)
        XCTAssertTrue(
            error { try self.evaluate("FUNCTION({" + big + ", 'x'}, 'componentsJoinedByString:', '')") }?.message
                .contains("above the limit") ?? false)
    }

    func testACollectionAFunctionBuildsIsBounded() throws {
        let many =
            "FUNCTION(FUNCTION(FUNCTION(FUNCTION('x', 'stringByReplacingOccurrencesOfString:withString:', 'x', '\(String(repeating: ",", count: 2048))'), 'stringByReplacingOccurrencesOfString:withString:', ',', ',,,,,,,,'), 'stringByReplacingOccurrencesOfString:withString:', ',', '\(String(repeating: ",", count: 64))'), 'componentsSeparatedByString:', ',')"
        let e = error { try self.evaluate(many) }
        XCTAssertEqual(e?.code, .expressionEvaluation)
        XCTAssertTrue(
            e?.message.contains("more than \(ExpressionValueLimits.maximumCollectionCount) members") ?? false,
            "\(String(describing: e))")
    }

    func testCancellationStopsAnExpressionBetweenItsFunctions() {
        var polls = 0
        let e = error {
            try self.evaluate(
                Self.growingExpression,
                isCancelled: {
                    polls += 1
                    return polls > 3
                })
        }
        XCTAssertEqual(e?.code, .migrationCancelled)
        XCTAssertEqual(polls, 4)
    }
}
