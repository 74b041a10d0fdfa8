/// The bounds on what an expression's functions may build, so that a short expression cannot
/// grow a value without end (eight nested `stringByReplacingOccurrencesOfString:withString:` in
/// 700 bytes would otherwise build a string of 4.3 × 10⁹ characters):
/// - a string a function returns is at most `maximumStringBytes` UTF-8 bytes;
/// - a collection a function returns has at most `maximumCollectionCount` members.
/// Each function checks the size of its result before building it where the size is known in
/// advance (replacing, appending, joining), so the work of any one function is bounded by
/// these sizes too. Values read from a store are not limited: only what functions make.
/// Core Data has no such limit; no real mapping comes near it.
package enum ExpressionValueLimits {
    package static let maximumStringBytes = 16 << 20
    package static let maximumCollectionCount = 1_000_000

    /// Refuses a string of `bytes` UTF-8 bytes as the result of `selector`.
    static func checkString(bytes: Int, _ selector: String) throws {
        guard bytes <= maximumStringBytes else {
            throw MigrationError(
                .expressionEvaluation,
                "\(selector) would build a string of \(bytes) bytes, above the limit of \(maximumStringBytes) bytes for a value an expression makes"
            )
        }
    }

    /// Refuses a collection of `count` members as the result of `selector`.
    static func checkCollection(count: Int, _ selector: String) throws {
        guard count <= maximumCollectionCount else {
            throw MigrationError(
                .expressionEvaluation,
                "\(selector) would build a collection of more than \(maximumCollectionCount) members, above the limit for a value an expression makes"
            )
        }
    }

    /// `s` with every occurrence of `target` replaced, refused before it is built when the
    /// result would pass the limit.
    static func replacing(_ s: String, _ target: String, with replacement: String, _ selector: String) throws -> String
    {
        guard !target.isEmpty else { return s }
        let growth = replacement.utf8.count - target.utf8.count
        if growth > 0 {
            var occurrences = 0
            var rest = s[...]
            while let range = rest.firstRange(of: target) {
                occurrences += 1
                rest = rest[range.upperBound...]
            }
            let (extra, overflow) = occurrences.multipliedReportingOverflow(by: growth)
            try checkString(bytes: overflow ? Int.max : s.utf8.count.addingClampedToMax(extra), selector)
        }
        return s.replacingAll(target, with: replacement)
    }

    /// The strings joined by `separator`, refused as soon as the result passes the limit.
    static func joined(_ parts: [String], separator: String, _ selector: String) throws -> String {
        var total = 0
        for (i, part) in parts.enumerated() {
            total = total.addingClampedToMax(part.utf8.count).addingClampedToMax(i > 0 ? separator.utf8.count : 0)
            try checkString(bytes: total, selector)
        }
        return parts.joined(separator: separator)
    }
}

extension Int {
    /// The sum, or Int.max when it would overflow (sizes compared against a limit).
    func addingClampedToMax(_ other: Int) -> Int {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? Int.max : sum
    }
}
