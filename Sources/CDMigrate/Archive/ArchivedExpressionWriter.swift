/// Writes an expression as NSKeyedArchiver archives an NSExpression: the mirror of
/// `ArchivedExpressionDecoder`, used for the derivation expressions of derived attributes in the
/// model cache (`CompiledModelWriter`).
///
/// The classes and keys are those of the archived expressions in Apple's compiled mapping models
/// (`Tests/Fixtures/xcode/XcodeServer/*/MappingModel.cdm_precompiled`) and of Foundation's
/// `encodeWithCoder:` methods as public decompilations show them (docs/store-layout.md, "Derived
/// attributes in the model cache"):
///
/// - every expression: `NSExpressionType` (0 constant, 1 SELF, 2 variable, 4 function — also for
///   key path expressions, as Apple's archives hold them — 10 key path specifier);
/// - NSConstantValueExpression: `NSConstantValue`, or `NSConstantValueClassName` when the constant
///   is a class (`_NSPredicateUtilities`, the target of NSExpression's built-in functions);
/// - NSSelfExpression: nothing more; NSVariableExpression: `NSVariable`;
/// - NSKeyPathExpression (a subclass of NSFunctionExpression): `NSSelectorName` `valueForKeyPath:`,
///   `NSOperand` (SELF, or the variable or expression the path starts from), `NSArguments` (an
///   NSMutableArray of one NSKeyPathSpecifierExpression, `NSKeyPath` the dotted path);
/// - NSFunctionExpression: `NSSelectorName`, `NSOperand` (for a built-in function the constant
///   class `_NSPredicateUtilities`), `NSArguments` (an NSArray).
///
/// Expressions with no part in a derivation Core Data keeps (arithmetic, aggregates, subqueries,
/// FETCH, casts, indexes) are not written: `isArchivable(_:)` says so first.
package enum ArchivedExpressionWriter {
    /// The class NSExpression's built-in functions are called on.
    static let builtinTarget = "_NSPredicateUtilities"

    /// Whether `encode(_:_:)` can write `expression` (nesting bounded by `KeyedArchive.maximumDepth`).
    package static func isArchivable(_ expression: ValueExpression, depth: Int = 0) -> Bool {
        guard depth < KeyedArchive.maximumDepth else { return false }
        switch expression {
        case .constant(let value):
            switch value {
            case .null, .string, .integer, .double, .bool: return true
            default: return false
            }
        case .variable, .evaluatedObject:
            return true
        case .keyPath(let base, let keys):
            return !keys.isEmpty && isArchivable(base, depth: depth + 1)
        case .builtin(let name, let arguments):
            return !["CAST", "FETCH"].contains(name) && arguments.allSatisfy { isArchivable($0, depth: depth + 1) }
        case .function(let target, _, let arguments):
            return isArchivable(target, depth: depth + 1) && arguments.allSatisfy { isArchivable($0, depth: depth + 1) }
        case .binary, .negation, .aggregate, .subquery, .index:
            return false
        }
    }

    /// Encodes `expression` into `writer` and returns the reference to it; an expression
    /// `isArchivable(_:)` refuses is written as `$null`.
    package static func encode(_ expression: ValueExpression, _ writer: KeyedArchiveWriter) -> PropertyListValue {
        guard isArchivable(expression) else { return KeyedArchiveWriter.null }
        return write(expression, writer)
    }

    /// Nesting is bounded: `isArchivable` has checked the depth.
    private static func write(_ expression: ValueExpression, _ writer: KeyedArchiveWriter) -> PropertyListValue {
        switch expression {
        case .constant(let value):
            return writer.encode(nil, classes: ["NSConstantValueExpression", "NSExpression"]) {
                [("NSExpressionType", .integer(0)), ("NSConstantValue", constant(value, writer))]
            }
        case .evaluatedObject:
            return writer.encode(nil, classes: ["NSSelfExpression", "NSExpression"]) {
                [("NSExpressionType", .integer(1))]
            }
        case .variable(let name):
            return writer.encode(nil, classes: ["NSVariableExpression", "NSExpression"]) {
                [("NSExpressionType", .integer(2)), ("NSVariable", writer.string(name))]
            }
        case .keyPath(let base, let keys):
            return writer.encode(nil, classes: ["NSKeyPathExpression", "NSFunctionExpression", "NSExpression"]) {
                let selector = writer.string("valueForKeyPath:")
                let operand = write(base, writer)
                let arguments = writer.array(["NSMutableArray", "NSArray"]) {
                    [
                        writer.encode(nil, classes: ["NSKeyPathSpecifierExpression", "NSExpression"]) {
                            [
                                ("NSExpressionType", .integer(10)),
                                ("NSKeyPath", writer.string(keys.joined(separator: "."))),
                            ]
                        }
                    ]
                }
                return [
                    ("NSExpressionType", .integer(4)), ("NSSelectorName", selector), ("NSOperand", operand),
                    ("NSArguments", arguments),
                ]
            }
        case .builtin(let name, let arguments):
            return function(selector: name, arguments: arguments, writer) {
                writer.encode(nil, classes: ["NSConstantValueExpression", "NSExpression"]) {
                    [("NSExpressionType", .integer(0)), ("NSConstantValueClassName", writer.string(builtinTarget))]
                }
            }
        case .function(let target, let selector, let arguments):
            return function(selector: selector, arguments: arguments, writer) { write(target, writer) }
        case .binary, .negation, .aggregate, .subquery, .index:
            return KeyedArchiveWriter.null
        }
    }

    /// NSFunctionExpression's keys in the order its `encodeWithCoder:` writes them.
    private static func function(
        selector: String, arguments: [ValueExpression], _ writer: KeyedArchiveWriter,
        operand: () -> PropertyListValue
    ) -> PropertyListValue {
        return writer.encode(nil, classes: ["NSFunctionExpression", "NSExpression"]) {
            let name = writer.string(selector)
            let target = operand()
            let list = writer.array { arguments.map { write($0, writer) } }
            return [
                ("NSExpressionType", .integer(4)), ("NSSelectorName", name), ("NSOperand", target),
                ("NSArguments", list),
            ]
        }
    }

    private static func constant(_ value: Value, _ writer: KeyedArchiveWriter) -> PropertyListValue {
        switch value {
        case .string(let s): return writer.string(s)
        case .integer(let i): return writer.number(.integer(i))
        case .double(let d): return writer.number(.real(d))
        case .bool(let b): return writer.number(.bool(b))
        default: return KeyedArchiveWriter.null
        }
    }

    // MARK: The form Core Data keeps

    /// The derivation expression as an NSDerivedAttributeDescription holds it: its
    /// `setDerivationExpression:` turns a key path ending in `@count` into `count:(path)` and one
    /// ending in `@sum` or `@total` into `sum:(path)`; every other expression is kept as it is
    /// (the text form of the same rule: `DerivationForm`).
    package static func derivationForm(_ expression: ValueExpression) -> ValueExpression {
        guard case .keyPath(let base, let keys) = expression, keys.count > 1, let last = keys.last else {
            return expression
        }
        let function: String
        switch last {
        case "@count": function = "count:"
        case "@sum", "@total": function = "sum:"
        default: return expression
        }
        return .builtin(function, [.keyPath(base, Array(keys.dropLast()))])
    }
}
