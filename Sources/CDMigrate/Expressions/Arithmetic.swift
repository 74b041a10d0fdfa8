#if canImport(Glibc)
    import Glibc
#endif

/// Arithmetic of value expressions: integers stay integers while the result is exact, otherwise
/// doubles; a date plus or minus seconds is a date, a date minus a date is seconds. Nil anywhere
/// gives nil (as messaging nil does). Division by zero is an error rather than an infinity, so
/// that a bad value never reaches the destination store silently.
enum Arithmetic {
    static func apply(_ op: ValueExpression.ArithmeticOperator, _ a: Value, _ b: Value) throws -> Value {
        if a.isNull || b.isNull { return .null }
        switch (a, b) {
        case (.date(let x), _) where op == .add || op == .subtract:
            if case .date(let y) = b, op == .subtract { return .double(x - y) }
            guard let y = number(b, op, a) else { break }
            return .date(op == .add ? x + y : x - y)
        case (_, .date(let y)) where op == .add:
            guard let x = number(a, op, b) else { break }
            return .date(x + y)
        default:
            break
        }
        guard let x = number(a, op, b), let y = number(b, op, a) else {
            throw MigrationError(
                .expressionEvaluation,
                "cannot apply '\(op.rawValue)' to \(a.aTypeName) value ('\(a)') and \(b.aTypeName) value ('\(b)')")
        }
        if let i = exactInteger(a), let j = exactInteger(b) {
            switch op {
            case .add:
                let (r, overflow) = i.addingReportingOverflow(j)
                if !overflow { return .integer(r) }
            case .subtract:
                let (r, overflow) = i.subtractingReportingOverflow(j)
                if !overflow { return .integer(r) }
            case .multiply:
                let (r, overflow) = i.multipliedReportingOverflow(by: j)
                if !overflow { return .integer(r) }
            case .divide:
                if j == 0 { throw divisionByZero(a) }
                if j != -1 || i != Int64.min, i % j == 0 { return .integer(i / j) }
            case .power:
                if j >= 0, let r = integerPower(i, j) { return .integer(r) }
            }
        }
        switch op {
        case .add: return .double(x + y)
        case .subtract: return .double(x - y)
        case .multiply: return .double(x * y)
        case .divide:
            if y == 0 { throw divisionByZero(a) }
            return .double(x / y)
        case .power: return .double(pow(x, y))
        }
    }

    static func negate(_ a: Value) throws -> Value {
        switch a {
        case .null: return .null
        case .integer(let i) where i != Int64.min: return .integer(-i)
        case .decimal(let s): return .decimal(s.hasPrefix("-") ? String(s.dropFirst()) : "-" + s)
        default:
            guard let d = number(a, .subtract, a) else {
                throw MigrationError(.expressionEvaluation, "cannot negate \(a.aTypeName) value ('\(a)')")
            }
            return .double(-d)
        }
    }

    private static func divisionByZero(_ a: Value) -> MigrationError {
        return MigrationError(.expressionEvaluation, "division by zero ('\(a)' / 0)")
    }

    /// Numbers and booleans take part in arithmetic; dates only where handled above.
    private static func number(_ v: Value, _ op: ValueExpression.ArithmeticOperator, _ other: Value) -> Double? {
        switch v {
        case .integer, .double, .bool, .decimal: return v.doubleValue
        default: return nil
        }
    }

    private static func exactInteger(_ v: Value) -> Int64? {
        switch v {
        case .integer(let i): return i
        case .bool(let b): return b ? 1 : 0
        default: return nil
        }
    }

    private static func integerPower(_ base: Int64, _ exponent: Int64) -> Int64? {
        var result: Int64 = 1
        var b = base
        var e = exponent
        while e > 0 {
            if e & 1 == 1 {
                let (r, o) = result.multipliedReportingOverflow(by: b)
                if o { return nil }
                result = r
            }
            e >>= 1
            if e > 0 {
                let (sq, o) = b.multipliedReportingOverflow(by: b)
                if o { return nil }
                b = sq
            }
        }
        return result
    }
}
