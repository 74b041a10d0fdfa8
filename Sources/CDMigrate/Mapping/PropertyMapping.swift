/// NSPropertyMapping: a destination property and the value expression that computes it.
///
/// A policy may change the value expression while its migration runs (Core Data lets a policy set
/// `valueExpression`, typically in `begin` before calling `super`): the change applies to every
/// instance evaluated after it, for the rest of the pass. A `MigrationManager` works on its own
/// copies of the mapping models it was given, and puts every expression back as declared when a
/// pass ends, so a change never reaches another pass, another run or another migration.
public final class PropertyMapping {
    /// The destination attribute or relationship name.
    public let name: String
    /// The expression as written (or as last set); nil means "no value" (the destination default stays).
    public private(set) var valueExpressionText: String?
    /// The expression, parsed (Core Data: `valueExpression`). Setting it replaces the text by the
    /// expression's description; `setValueExpression(_:)` sets it from text.
    public var valueExpression: ValueExpression? {
        didSet {
            valueExpressionText = valueExpression?.description
            revision &+= 1
        }
    }
    /// The property mapping's user info (Core Data: `userInfo`): values for policies and value expressions (`$propertyMapping.userInfo.key`), each of the type it was written as.
    public let userInfo: [String: Value]
    /// Where the mapping stands in the mapping JSON, for error messages.
    public let path: String
    /// The expression as the mapping model declares it, which a pass's end puts back.
    let declaredText: String?
    let declaredExpression: ValueExpression?
    /// Counts changes of the expression, so that plans resolved from it can tell they are stale.
    package private(set) var revision = 0

    init(
        name: String, valueExpressionText: String?, valueExpression: ValueExpression?, userInfo: [String: Value],
        path: String
    ) {
        self.name = name
        self.valueExpressionText = valueExpressionText
        self.valueExpression = valueExpression
        self.userInfo = userInfo
        self.path = path
        self.declaredText = valueExpressionText
        self.declaredExpression = valueExpression
    }

    /// A mapping inference made: `text` is one of the expressions `MappingInference` writes.
    convenience init(inferred name: String, _ text: String, path: String) {
        self.init(
            name: name, valueExpressionText: text, valueExpression: try? ExpressionParser.parseExpression(text),
            userInfo: [:], path: path)
    }

    /// Replaces the value expression by one parsed from `text` (nil: no value, the destination's
    /// default stays), for every instance evaluated from now on in this pass.
    ///
    /// - parameter text: The expression, in the syntax of mapping models (`$source.name`,
    ///   `FUNCTION($source.title, "uppercaseString")`, a literal, …), or nil.
    /// - throws: `MigrationError` `.expressionSyntax` (with the offset in `text`) when the text
    ///   does not parse; the expression is then unchanged.
    ///
    /// Core Data: setting `NSPropertyMapping.valueExpression` to `NSExpression(format: text)`.
    public func setValueExpression(_ text: String?) throws {
        guard let text = text else {
            valueExpression = nil
            return
        }
        let parsed: ValueExpression
        do {
            parsed = try ExpressionParser.parseExpression(text)
        } catch var error as MigrationError {
            error.message = "the value expression for property mapping '\(name)' does not parse: " + error.message
            throw error
        }
        valueExpression = parsed
        valueExpressionText = text
    }

    /// A copy with its own expression, as declared.
    func copy() -> PropertyMapping {
        PropertyMapping(
            name: name, valueExpressionText: declaredText, valueExpression: declaredExpression, userInfo: userInfo,
            path: path)
    }

    /// Puts the declared expression back if a policy changed it.
    func restoreDeclaredExpression() {
        guard revision != 0 else { return }
        valueExpression = declaredExpression
        valueExpressionText = declaredText
    }
}
