/// NSExpression's aggregate functions (`sum:`, `average:`, `min:`, `max:`, `median:`, `mode:`,
/// `stddev:`, `distinct:`) and the matching KVC collection operators. Nils are skipped.
enum Aggregates {
    static func numbers(_ values: [Value], _ function: String) throws -> [Value] {
        var result: [Value] = []
        for v in values where !v.isNull {
            guard v.doubleValue != nil, !isDate(v) else {
                throw MigrationError(
                    .expressionEvaluation, "\(function) needs numbers, not \(v.aTypeName) value ('\(v)')")
            }
            result.append(v)
        }
        return result
    }

    private static func isDate(_ v: Value) -> Bool { if case .date = v { return true } else { return false } }

    static func sum(_ values: [Value]) throws -> Value {
        var total: Value = .integer(0)
        for v in try numbers(values, "sum") { total = try Arithmetic.apply(.add, total, v) }
        return total
    }

    static func average(_ values: [Value]) throws -> Value? {
        let ns = try numbers(values, "average")
        guard !ns.isEmpty else { return nil }
        return .double(ns.reduce(0.0) { $0 + ($1.doubleValue ?? 0) } / Double(ns.count))
    }

    static func extreme(_ values: [Value], max: Bool) throws -> Value {
        var best: Value = .null
        for v in values where !v.isNull {
            if best.isNull {
                best = v
                continue
            }
            guard let order = ValueComparison.compare(v, best) else {
                throw MigrationError(
                    .expressionEvaluation,
                    "\(max ? "max" : "min") cannot compare \(v.aTypeName) value with \(best.aTypeName) value")
            }
            if (max && order > 0) || (!max && order < 0) { best = v }
        }
        return best
    }

    static func median(_ values: [Value]) throws -> Value {
        let ns = try numbers(values, "median").compactMap { $0.doubleValue }.sorted()
        guard !ns.isEmpty else { return .null }
        let mid = ns.count / 2
        return .double(ns.count % 2 == 1 ? ns[mid] : (ns[mid - 1] + ns[mid]) / 2)
    }

    static func mode(_ values: [Value]) -> Value {
        var counts: [Value: Int] = [:]
        var order: [Value] = []
        for v in values where !v.isNull {
            if counts[v] == nil { order.append(v) }
            counts[v, default: 0] += 1
        }
        let top = counts.values.max() ?? 0
        return .collection(order.filter { counts[$0] == top })
    }

    static func standardDeviation(_ values: [Value]) throws -> Value {
        let ns = try numbers(values, "stddev").compactMap { $0.doubleValue }
        guard !ns.isEmpty else { return .null }
        let mean = ns.reduce(0, +) / Double(ns.count)
        let variance = ns.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(ns.count)
        return .double(variance.squareRoot())
    }

    static func distinct(_ values: [Value]) -> [Value] {
        var seen = Set<Value>()
        return values.filter { seen.insert($0).inserted }
    }
}
