/// NSExpression: a value expression as written in mapping models (`$source.name`,
/// `FUNCTION($manager, "…", …)`, `CAST(…)`, literals, arithmetic, aggregates).
public indirect enum ValueExpression: Equatable, CustomStringConvertible {
    /// A literal or a substituted format argument (NSConstantValueExpressionType).
    case constant(Value)
    /// `$name`, without the `$` (NSVariableExpressionType).
    case variable(String)
    /// `SELF` (NSEvaluatedObjectExpressionType).
    case evaluatedObject
    /// A key path applied to a base: `name` is `keyPath(.evaluatedObject, ["name"])`,
    /// `$source.note.body` is `keyPath(.variable("source"), ["note", "body"])`.
    case keyPath(ValueExpression, [String])
    /// `FUNCTION(target, "selector:", args…)`: a message sent to the target's value.
    case function(ValueExpression, String, [ValueExpression])
    /// `CAST(…)`, `FETCH(…)` and NSExpression's own functions (`sum:`, `now`, …), named as written.
    case builtin(String, [ValueExpression])
    case binary(ArithmeticOperator, ValueExpression, ValueExpression)
    /// Unary minus.
    case negation(ValueExpression)
    /// `{a, b, c}`.
    case aggregate([ValueExpression])
    /// `SUBQUERY(collection, $variable, predicate)`.
    case subquery(ValueExpression, String, FilterPredicate)
    /// `collection[index]`, `collection[FIRST]`, `collection[LAST]`, `collection[SIZE]` (index is then a constant string).
    case index(ValueExpression, ValueExpression)

    /// `+`, `-`, `*`, `/`, `**` (NSExpression's `add:to:`, … functions).
    public enum ArithmeticOperator: String, Equatable {
        case add = "+"
        case subtract = "-"
        case multiply = "*"
        case divide = "/"
        case power = "**"

        /// Binding strength: higher binds tighter.
        var precedence: Int {
            switch self {
            case .add, .subtract: return 1
            case .multiply, .divide: return 2
            case .power: return 3
            }
        }
    }

    /// The keys of a bare key path (`name`, `note.body`), nil for anything else.
    public var bareKeyPath: [String]? {
        if case .keyPath(.evaluatedObject, let keys) = self { return keys }
        return nil
    }

    /// The value of a constant expression, nil for anything else.
    public var constantValue: Value? {
        if case .constant(let v) = self { return v }
        return nil
    }

    // MARK: Text

    /// The expression as format text that parses back to the same expression.
    public var description: String { text(context: 0) }

    /// `context` is the precedence of the enclosing operator, so only needed parentheses are written.
    func text(context: Int) -> String {
        switch self {
        case .constant(let value):
            let text = ValueExpression.literal(value)
            // A negative literal as the base of `**` needs parentheses: `-2 ** 2` is `-(2 ** 2)`.
            return context > 3 && text.hasPrefix("-") ? "(" + text + ")" : text
        case .variable(let name): return "$" + name
        case .evaluatedObject: return "SELF"
        case .keyPath(let base, let keys):
            let path = keys.map(ValueExpression.keyText).joined(separator: ".")
            switch base {
            case .evaluatedObject: return path
            case .variable, .keyPath, .function, .builtin, .subquery, .index:
                return base.text(context: 10) + "." + path
            default: return "(" + base.text(context: 0) + ")." + path
            }
        case .function(let target, let selector, let args):
            return "FUNCTION("
                + ([target.text(context: 0), ValueExpression.literal(.string(selector))]
                + args.map { $0.text(context: 0) }).joined(separator: ", ") + ")"
        case .builtin(let name, let args):
            let list = args.map { $0.text(context: 0) }.joined(separator: ", ")
            if name == "CAST" || name == "FETCH" { return name + "(" + list + ")" }
            return name + "(" + list + ")"
        case .binary(let op, let lhs, let rhs):
            // Left-associative except `**`, which is right-associative.
            let p = op.precedence
            let left = lhs.text(context: op == .power ? p + 1 : p)
            let right = rhs.text(context: op == .power ? p : p + 1)
            let body = left + " " + op.rawValue + " " + right
            return context > p ? "(" + body + ")" : body
        case .negation(let operand):
            let body = "-" + operand.text(context: 4)
            return context > 3 ? "(" + body + ")" : body
        case .aggregate(let items):
            return "{" + items.map { $0.text(context: 0) }.joined(separator: ", ") + "}"
        case .subquery(let collection, let variable, let predicate):
            return "SUBQUERY(" + collection.text(context: 0) + ", $" + variable + ", " + predicate.description + ")"
        case .index(let collection, let index):
            let inner: String
            if case .constant(.string(let s)) = index, ["FIRST", "LAST", "SIZE"].contains(s) {
                inner = s
            } else {
                inner = index.text(context: 0)
            }
            return collection.text(context: 10) + "[" + inner + "]"
        }
    }

    /// A key, `#`-escaped when it would otherwise read as a keyword.
    static func keyText(_ key: String) -> String {
        if key.hasPrefix("@") { return key }
        return ExpressionParser.reservedWords.contains(key.uppercased()) ? "#" + key : key
    }

    /// Literal text for a value; kinds with no literal are written as the CAST Core Data prints.
    static func literal(_ value: Value) -> String {
        switch value {
        case .null: return "nil"
        case .bool(let b): return b ? "YES" : "NO"
        case .integer(let i): return String(i)
        case .double(let d):
            if d.isNaN || d.isInfinite { return "CAST(\(quoted(String(d))), \"NSNumber\")" }
            return Value.format(d)
        case .decimal(let s): return "CAST(\(quoted(s)), \"NSDecimalNumber\")"
        case .string(let s): return quoted(s)
        case .date(let d): return "CAST(\(Value.format(d)), \"NSDate\")"
        case .uuid(let bytes): return "CAST(\(quoted(Value.uuidString(bytes))), \"NSUUID\")"
        case .uri(let s): return "CAST(\(quoted(s)), \"NSURL\")"
        case .binary(let bytes): return "CAST(\(quoted(Base64.encode(bytes))), \"NSData\")"
        case .object(let object): return quoted(object.objectID.uriRepresentation)
        case .collection(let items): return "{" + items.map(literal).joined(separator: ", ") + "}"
        case .dictionary(let entries):
            // No expression syntax reads a dictionary back: written as NSDictionary describes itself.
            return "{" + entries.map { literal($0.key) + " = " + literal($0.value) + "; " }.joined() + "}"
        case .migrationManager: return "$manager"
        }
    }

    /// A string constant of Core Data's expression syntax, every character the parser reads back.
    static func quoted(_ s: String) -> String {
        var out = "\""
        for c in s.unicodeScalars {
            switch c {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            case "\0": out += "\\0"
            default:
                if c.value < 0x20 || c.value == 0x7F {
                    let hex = String(c.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(c)
                }
            }
        }
        return out + "\""
    }
}
