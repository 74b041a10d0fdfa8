import XCTest

@testable import CDMigrate

/// Mangled input never traps: every reader either succeeds or throws a MigrationError.
final class RobustnessTests: XCTestCase {
    /// A small deterministic generator (SplitMix64), so failures reproduce.
    struct Generator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static let pieces = [
        "$source", "$manager", ".", "(", ")", ",", "\"", "'", "FUNCTION", "CAST", "FETCH", "SUBQUERY", "{", "}",
        "[", "]", "+", "-", "*", "/", "**", "==", "!=", "<", ">=", "AND", "OR", "NOT", "IN", "BETWEEN",
        "ANY", "ALL", "LIKE[cd]", "MATCHES", "CONTAINS", "nil", "YES", "1e309", "-0x", "0x1F", "%@", "%K",
        "name", "note.body", "\\", "\\u00e9", "é", "🙂", " ", "SELF", "$", "#", "@count", "9999999999999999999999",
    ]

    func mutations(of seeds: [String], count: Int, seed: UInt64) -> [String] {
        var generator = Generator(state: seed)
        var results: [String] = []
        for i in 0..<count {
            var chars = Array(seeds[i % seeds.count])
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                switch Int.random(in: 0..<4, using: &generator) {
                case 0 where !chars.isEmpty: chars.remove(at: Int.random(in: 0..<chars.count, using: &generator))
                case 1:
                    chars.insert(
                        contentsOf: Self.pieces.randomElement(using: &generator) ?? "",
                        at: Int.random(in: 0...chars.count, using: &generator))
                case 2 where !chars.isEmpty:
                    chars = Array(chars.prefix(Int.random(in: 0..<chars.count, using: &generator)))
                default: chars.shuffle(using: &generator)
                }
            }
            results.append(String(chars))
        }
        return results
    }

    func testExpressionsAndPredicatesFromMangledTextParseAndEvaluate() {
        let expressions = [
            #"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "A", $source.items)"#,
            #"FUNCTION(CAST("MigrationFunctions", "Class"), "getFirstName:", $source.name)"#,
            #"FUNCTION($source.title, "substringToIndex:", 80) + " …""#, #"{1, 2.5, 'x', nil}[LAST]"#,
            #"-2 ** 3 ** 2 / (4 - 4.0)"#,
            #"FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:", "Note", "title BEGINSWITH[c] 'a'"), $manager.sourceContext, NO)"#,
        ]
        let predicates = [
            #"name ==[cd] "Å" AND (age BETWEEN {1, 9} OR NOT tags.@count > 2)"#,
            #"ANY tags.label IN {"a", "b"} && title MATCHES ".*x$""#,
            #"SUBQUERY(items, $i, $i.price > 3).@count == 0"#, #"date < CAST(0, "NSDate") || %K == %@"#,
        ]
        var outcomes = (parsed: 0, refused: 0)
        for text in mutations(of: expressions, count: 3_000, seed: 1) + mutations(of: predicates, count: 3_000, seed: 2)
        {
            // One argument per '%' at most: left-over arguments are refused.
            let specifiers = text.filter { $0 == "%" }.count
            let evaluateExpression = {
                let expression = try ExpressionParser.parseExpression(
                    text, arguments: Array(repeating: "x", count: specifiers))
                do { _ = try ExpressionEvaluator().evaluate(expression, object: .null) } catch is MigrationError {}
            }
            let evaluatePredicate = {
                let predicate = try ExpressionParser.parsePredicate(
                    text, arguments: Array((["name", 1] as [Value]).prefix(specifiers)))
                do { _ = try PredicateEvaluator().evaluate(predicate, object: .null) } catch is MigrationError {}
            }
            for parse in [evaluateExpression, evaluatePredicate] {
                do {
                    try parse()
                    outcomes.parsed += 1
                } catch let error as MigrationError {
                    XCTAssertTrue(
                        error.code == .expressionSyntax || error.code == .expressionEvaluation,
                        "\(error.code) for '\(text)'")
                    outcomes.refused += 1
                } catch {
                    XCTFail("not a MigrationError for '\(text)': \(error)")
                }
            }
        }
        XCTAssertGreaterThan(outcomes.parsed, 100)
        XCTAssertGreaterThan(outcomes.refused, 1_000)
    }

    func testModelsAndMappingsFromMangledJSON() throws {
        let models = [MigrationManagerTests.v1, MigrationManagerTests.v2, MigrationBehaviourTests.people]
        let mappings = [MigrationManagerTests.mapping]
        let source = try ManagedObjectModel(json: MigrationManagerTests.v1)
        let destination = try ManagedObjectModel(json: MigrationManagerTests.v2)
        for text in mutations(of: models, count: 1_500, seed: 3) {
            do { _ = try ManagedObjectModel(json: text) } catch is MigrationError {} catch { XCTFail("\(error)") }
        }
        for text in mutations(of: mappings, count: 1_500, seed: 4) {
            do {
                let mapping = try MappingModel(json: text)
                try mapping.validate(sourceModel: source, destinationModel: destination)
            } catch is MigrationError {} catch { XCTFail("\(error)") }
        }
    }
}
