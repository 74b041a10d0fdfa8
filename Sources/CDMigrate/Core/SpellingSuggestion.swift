/// The hint an error message gives for a misspelt name: the closest existing name, when it is close.
/// Used wherever a name is looked up (entities, properties, entity mappings, sort keys).
package enum SpellingSuggestion {
    /// " (did you mean 'x'?)" when a name is close to one that exists.
    package static func hint(_ name: String, among candidates: [String]) -> String {
        let lowered = name.lowercased()
        var best: (String, Int)?
        for candidate in candidates {
            let d = editDistance(lowered, candidate.lowercased())
            if d <= max(2, name.count / 3), d < name.count, d < (best?.1 ?? Int.max) { best = (candidate, d) }
        }
        return best.map { " (did you mean '\($0.0)'?)" } ?? ""
    }

    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + [Int](repeating: 0, count: b.count)
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}
