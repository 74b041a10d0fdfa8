/// How predicates compare values: NSPredicate's `==` and ordering with `[c]` / `[d]`.
///
/// Numbers of any kind compare by value, dates with dates, strings with strings (by Unicode
/// scalars after canonical equivalence, as Swift compares them), instances by identity.
/// `[c]` lower-cases (Unicode-aware); `[d]` folds diacritics (see `foldDiacritics`).
enum ValueComparison {
    static func equal(_ a: Value, _ b: Value, _ options: FilterPredicate.ComparisonOptions = []) -> Bool {
        if case .string(let x) = a, case .string(let y) = b {
            if options.isDisjoint(with: [.caseInsensitive, .diacriticInsensitive]) { return x == y }
            return fold(x, options) == fold(y, options)
        }
        return a == b
    }

    /// -1, 0, 1; nil when the two cannot be ordered (nil, different kinds).
    static func compare(_ a: Value, _ b: Value, _ options: FilterPredicate.ComparisonOptions = []) -> Int? {
        switch (a, b) {
        case (.string(let x), .string(let y)):
            if options.isDisjoint(with: [.caseInsensitive, .diacriticInsensitive]) { return x < y ? -1 : (x == y ? 0 : 1) }
            let fx = fold(x, options), fy = fold(y, options)
            return fx < fy ? -1 : (fx == fy ? 0 : 1)
        case (.date(let x), .date(let y)):
            return x < y ? -1 : (x == y ? 0 : 1)
        case (.integer(let x), .integer(let y)):
            return x < y ? -1 : (x == y ? 0 : 1)
        case (.bool, _), (.integer, _), (.double, _), (.decimal, _):
            guard let x = a.doubleValue, let y = b.doubleValue else { return nil }
            if case .date = b { return nil }
            if x.isNaN || y.isNaN { return nil }
            return x < y ? -1 : (x == y ? 0 : 1)
        default:
            return nil
        }
    }

    static func fold(_ s: String, _ options: FilterPredicate.ComparisonOptions) -> String {
        var result = s
        if options.contains(.diacriticInsensitive) { result = foldDiacritics(result) }
        if options.contains(.caseInsensitive) { result = result.lowercased() }
        return result
    }

    /// Removes diacritics without Foundation: combining marks are dropped, and precomposed Latin
    /// letters ("é", "Ø", "ł", …) become their base letter, found from the Unicode character name
    /// ("LATIN SMALL LETTER E WITH ACUTE" → "e"). Non-Latin precomposed letters (Greek tonos, …)
    /// keep their marks — a known gap against NSString's full decomposition.
    static func foldDiacritics(_ s: String) -> String {
        guard !s.utf8.allSatisfy({ $0 < 0x80 }) else { return s }
        var out = String.UnicodeScalarView()
        for scalar in s.unicodeScalars {
            if scalar.isASCII { out.append(scalar); continue }
            switch scalar.properties.generalCategory {
            case .nonspacingMark, .enclosingMark, .spacingMark: continue
            default: break
            }
            out.append(baseLetter(scalar) ?? scalar)
        }
        return String(out)
    }

    private static func baseLetter(_ scalar: Unicode.Scalar) -> Unicode.Scalar? {
        guard let name = scalar.properties.name else { return nil }
        let small = "LATIN SMALL LETTER ", capital = "LATIN CAPITAL LETTER "
        let rest: Substring
        let isSmall: Bool
        if name.hasPrefix(small) { rest = name.dropFirst(small.count); isSmall = true }
        else if name.hasPrefix(capital) { rest = name.dropFirst(capital.count); isSmall = false }
        else { return nil }
        // "E WITH ACUTE", "O WITH STROKE": one base letter, then the mark.
        guard rest.count > 6, rest.dropFirst().hasPrefix(" WITH "), let letter = rest.first, letter.isASCII, letter.isLetter,
              let base = (isSmall ? letter.lowercased() : String(letter)).unicodeScalars.first else { return nil }
        return base
    }

    /// LIKE: `*` matches any run, `?` one character, `\` escapes the next one.
    static func like(_ text: String, _ pattern: String, _ options: FilterPredicate.ComparisonOptions) -> Bool {
        let t = Array(fold(text, options)), p = Array(fold(pattern, options))
        // Pattern items: (character, isWildcard).
        var items: [(Character, Bool)] = []
        var i = 0
        while i < p.count {
            if p[i] == "\\" && i + 1 < p.count { items.append((p[i + 1], false)); i += 2; continue }
            items.append((p[i], p[i] == "*" || p[i] == "?"))
            i += 1
        }
        // Iterative wildcard matching with one backtrack point (linear for each star).
        var ti = 0, pi = 0, starP = -1, starT = 0
        while ti < t.count {
            if pi < items.count && (items[pi] == ("?", true) || (!items[pi].1 && items[pi].0 == t[ti])) {
                ti += 1; pi += 1
            } else if pi < items.count && items[pi] == ("*", true) {
                starP = pi; starT = ti; pi += 1
            } else if starP >= 0 {
                pi = starP + 1; starT += 1; ti = starT
            } else {
                return false
            }
        }
        while pi < items.count && items[pi] == ("*", true) { pi += 1 }
        return pi == items.count
    }
}
