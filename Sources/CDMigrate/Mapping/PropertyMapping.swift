/// NSPropertyMapping: a destination property and the value expression that computes it.
public final class PropertyMapping {
    /// The destination attribute or relationship name.
    public let name: String
    /// The expression as written; nil means "no value" (the destination default stays).
    public let valueExpressionText: String?
    /// Parsed once when the mapping model loads.
    public let valueExpression: ValueExpression?
    /// The property mapping's user info (Core Data: `userInfo`): values for policies and value expressions (`$propertyMapping.userInfo.key`), each of the type it was written as.
    public let userInfo: [String: Value]
    /// Where the mapping stands in the mapping JSON, for error messages.
    public let path: String

    init(name: String, valueExpressionText: String?, valueExpression: ValueExpression?, userInfo: [String: Value], path: String) {
        self.name = name
        self.valueExpressionText = valueExpressionText
        self.valueExpression = valueExpression
        self.userInfo = userInfo
        self.path = path
    }
}
