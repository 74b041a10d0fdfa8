/// An entity mapping's source expression: which source instances the mapping takes.
///
/// Xcode writes `FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:",
/// "Note", "TRUEPREDICATE"), $manager.sourceContext, NO)`; a plain predicate string is accepted
/// as well (the entity is then the mapping's source entity). Empty text means every instance.
public struct SourceExpression: Equatable, CustomStringConvertible {
    /// The entity fetched, nil when the expression gives only a predicate.
    public var entityName: String?
    /// The predicate the source instances must match.
    public var predicate: FilterPredicate

    /// A source expression for `entityName` instances matching `predicate`.
    public init(entityName: String?, predicate: FilterPredicate) {
        self.entityName = entityName
        self.predicate = predicate
    }

    /// Parses a source expression: Xcode's `FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:", …), …)` or a plain predicate.
    ///
    /// - parameter text: The expression as written.
    /// - throws: `MigrationError` `.expressionSyntax` with the offset at fault.
    public static func parse(_ text: String) throws -> SourceExpression {
        if text.trimmingWhitespace.isEmpty { return SourceExpression(entityName: nil, predicate: .constant(true)) }
        if text.trimmingWhitespace.uppercased().hasPrefix("FETCH") {
            let expression = try ExpressionParser.parseExpression(text)
            guard case .builtin("FETCH", let args) = expression, let request = args.first,
                case .function(
                    .variable("manager"), "fetchRequestForSourceEntityNamed:predicateString:", let requestArgs) =
                    request,
                requestArgs.count == 2,
                case .constant(.string(let entity)) = requestArgs[0],
                case .constant(.string(let predicateText)) = requestArgs[1]
            else {
                throw MigrationError(
                    .expressionSyntax,
                    "expected FETCH(FUNCTION($manager, \"fetchRequestForSourceEntityNamed:predicateString:\", \"<Entity>\", \"<predicate>\"), $manager.sourceContext, NO) but found '\(text)'",
                    offset: 0, byteOffset: 0)
            }
            do {
                return SourceExpression(
                    entityName: entity, predicate: try ExpressionParser.parsePredicate(predicateText))
            } catch var error as MigrationError {
                // Point into the outer text: the predicate string starts after its quote.
                if let inner = error.offset, let start = literalOffset(of: predicateText, in: text) {
                    error.offset = start + inner
                    error.byteOffset = MigrationError.utf8Offset(ofCharacter: start + inner, in: text)
                    error.message = error.message.replacingAll(
                        " at character \(inner) in '\(predicateText)'",
                        with: " at character \(start + inner) in '\(text)'")
                }
                throw error
            }
        }
        return SourceExpression(entityName: nil, predicate: try ExpressionParser.parsePredicate(text))
    }

    /// The character offset of the first character of `literal` quoted in `text`, if written without escapes.
    private static func literalOffset(of literal: String, in text: String) -> Int? {
        for quote in ["\"", "'"] {
            if let range = text.firstRange(of: quote + literal + quote) {
                return text.distance(from: text.startIndex, to: range.lowerBound) + 1
            }
        }
        return nil
    }

    /// The FETCH form Xcode writes.
    public var description: String {
        return
            "FETCH(FUNCTION($manager, \"fetchRequestForSourceEntityNamed:predicateString:\", \(ValueExpression.quoted(entityName ?? "")), \(ValueExpression.quoted(predicate.description))), $manager.sourceContext, NO)"
    }
}
