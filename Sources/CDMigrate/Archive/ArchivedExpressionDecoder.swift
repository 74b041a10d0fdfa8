/// Turns an archived NSExpression (as Xcode's mapping model compiler writes them into a `.cdm`, and
/// as Xcode keeps a typed-in value expression in `xcmapping.xml`) back into the text of Core Data's
/// expression syntax, the form cdmigrate's parser reads and `NSExpression.description` prints.
///
/// Classes and keys read: NSConstantValueExpression (`NSConstantValue`), NSSelfExpression,
/// NSVariableExpression (`NSVariable`), NSKeyPathSpecifierExpression (`NSKeyPath`),
/// NSKeyPathExpression (`NSOperand`, `NSArguments`: key path specifiers), NSFunctionExpression
/// (`NSOperand`, `NSSelectorName`, `NSArguments`; a built-in function when the selector is one of
/// NSExpression's and the operand is not an object expression), NSFetchRequestExpression
/// (`NSFRExpression`, `NSMOCExpression`, `NSCountOnlyFlag`), NSAggregateExpression (`NSCollection`).
/// Any other class is an error naming the object and its class. Nesting is bounded by
/// `KeyedArchive.maximumDepth`.
package struct ArchivedExpressionDecoder {
    let archive: KeyedArchive

    package init(archive: KeyedArchive) { self.archive = archive }

    /// The text of the expression `object` is.
    package func text(of object: ArchivedObject) throws -> String {
        return try text(of: object, depth: 0)
    }

    private func text(of object: ArchivedObject, depth: Int) throws -> String {
        guard depth < KeyedArchive.maximumDepth else {
            throw archive.error(
                "object \(object.reference.index) (\(object.className)) nests expressions deeper than \(KeyedArchive.maximumDepth) levels"
            )
        }
        func operand(_ key: String) throws -> ArchivedObject {
            guard let inner = try object.object(key) else { throw object.error(key, "is missing") }
            return inner
        }
        func arguments() throws -> [ArchivedObject] {
            var result: [ArchivedObject] = []
            for (i, item) in (try object.array("NSArguments") ?? []).enumerated() {
                guard case .object(let reference, _) = item else {
                    throw object.error("NSArguments", "holds a \(item.typeName) at \(i), not an expression")
                }
                result.append(try archive.object(reference))
            }
            return result
        }
        switch object.className {
        case "NSConstantValueExpression":
            return ValueExpression.literal(try constant(try object.value("NSConstantValue"), object: object))
        case "NSSelfExpression":
            return "SELF"
        case "NSVariableExpression":
            guard let name = try object.string("NSVariable") else { throw object.error("NSVariable", "is missing") }
            return "$" + name
        case "NSKeyPathSpecifierExpression":
            guard let keyPath = try object.string("NSKeyPath") else { throw object.error("NSKeyPath", "is missing") }
            return keyPath
        case "NSKeyPathExpression":
            let base = try operand("NSOperand")
            let keys = try arguments().map { try text(of: $0, depth: depth + 1) }
            guard !keys.isEmpty else { throw object.error("NSArguments", "holds no key path") }
            if base.className == "NSSelfExpression" { return keys.joined(separator: ".") }
            return try text(of: base, depth: depth + 1) + "." + keys.joined(separator: ".")
        case "NSFunctionExpression":
            guard let selector = try object.string("NSSelectorName") else {
                throw object.error("NSSelectorName", "is missing")
            }
            let arguments = try arguments().map { try text(of: $0, depth: depth + 1) }
            let target = try object.object("NSOperand")
            if ExpressionParser.builtinArity[selector] != nil,
                target.map({ $0.className == "NSConstantValueExpression" }) ?? true
            {
                return selector + "(" + arguments.joined(separator: ", ") + ")"
            }
            guard let target else { throw object.error("NSOperand", "is missing") }
            return "FUNCTION("
                + ([try text(of: target, depth: depth + 1), ValueExpression.literal(.string(selector))] + arguments)
                .joined(separator: ", ") + ")"
        case "NSFetchRequestExpression":
            let request = try text(of: try operand("NSFRExpression"), depth: depth + 1)
            let context = try text(of: try operand("NSMOCExpression"), depth: depth + 1)
            return "FETCH(\(request), \(context), \(try object.bool("NSCountOnlyFlag") ? "YES" : "NO"))"
        case "NSAggregateExpression":
            var items: [String] = []
            for item in try object.array("NSCollection") ?? [] {
                guard case .object(let reference, _) = item else {
                    throw object.error("NSCollection", "holds a \(item.typeName), not an expression")
                }
                items.append(try text(of: try archive.object(reference), depth: depth + 1))
            }
            return "{" + items.joined(separator: ", ") + "}"
        default:
            throw archive.error(
                "object \(object.reference.index) is an \(object.className), an expression class cdmigrate does not read (constant, SELF, variable, key path, function, FETCH and aggregate expressions are read)"
            )
        }
    }

    /// A constant's value as cdmigrate's `Value`.
    private func constant(_ value: ArchiveValue, object: ArchivedObject) throws -> Value {
        if let plain = value.plainValue { return plain }
        switch value {
        case .array(let items): return .collection(try items.map { try constant($0, object: object) })
        default:
            throw object.error(
                "NSConstantValue", "is a \(value.typeName), which has no literal in Core Data's expression syntax")
        }
    }
}
