/// How predicates compare values: NSPredicate's `==` and ordering with `[c]` / `[d]`.
///
/// Numbers of any kind compare by value, dates with dates, strings with strings, instances by
/// identity. Strings compare literally, code point by code point, as `NSString.isEqual(_:)` and
/// Core Data's SQLite store do: a precomposed "é" and "e" + U+0301 differ (Swift's own `==` would
/// call them equal), so a predicate selects the same rows whether it runs as SQL or in memory.
/// `[c]` lower-cases (Unicode-aware) and `[d]` folds diacritics (see `foldDiacritics`) before the
/// literal comparison; `[d]` thereby makes the two forms of "é" equal.
enum ValueComparison {
    static func equal(_ a: Value, _ b: Value, _ options: FilterPredicate.ComparisonOptions = []) -> Bool {
        if case .string(let x) = a, case .string(let y) = b {
            return literallyEqual(fold(x, options), fold(y, options))
        }
        return a == b
    }

    /// -1, 0, 1; nil when the two cannot be ordered (nil, different kinds).
    static func compare(_ a: Value, _ b: Value, _ options: FilterPredicate.ComparisonOptions = []) -> Int? {
        switch (a, b) {
        case (.string(let x), .string(let y)):
            return literalOrder(fold(x, options), fold(y, options))
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

    /// Equal code point sequences.
    static func literallyEqual(_ a: String, _ b: String) -> Bool {
        a.unicodeScalars.elementsEqual(b.unicodeScalars)
    }

    /// Code point order (the order of UTF-8 bytes, SQLite's BINARY collation): -1, 0 or 1.
    static func literalOrder(_ a: String, _ b: String) -> Int {
        var i = a.unicodeScalars.makeIterator()
        var j = b.unicodeScalars.makeIterator()
        while true {
            switch (i.next(), j.next()) {
            case (nil, nil): return 0
            case (nil, _): return -1
            case (_, nil): return 1
            case (let x?, let y?): if x != y { return x.value < y.value ? -1 : 1 }
            }
        }
    }

    /// BEGINSWITH, ENDSWITH and CONTAINS on code points, after folding.
    static func hasPrefix(_ s: String, _ prefix: String, _ options: FilterPredicate.ComparisonOptions) -> Bool {
        let text = Array(fold(s, options).unicodeScalars)
        let p = Array(fold(prefix, options).unicodeScalars)
        return !p.isEmpty && text.starts(with: p)
    }

    static func hasSuffix(_ s: String, _ suffix: String, _ options: FilterPredicate.ComparisonOptions) -> Bool {
        let text = Array(fold(s, options).unicodeScalars)
        let p = Array(fold(suffix, options).unicodeScalars)
        return !p.isEmpty && text.count >= p.count && text[(text.count - p.count)...].elementsEqual(p)
    }

    static func contains(_ s: String, _ needle: String, _ options: FilterPredicate.ComparisonOptions) -> Bool {
        let text = Array(fold(s, options).unicodeScalars)
        let p = Array(fold(needle, options).unicodeScalars)
        guard !p.isEmpty, text.count >= p.count else { return false }
        for start in 0...(text.count - p.count) where text[start] == p[0] {
            if text[start..<(start + p.count)].elementsEqual(p) { return true }
        }
        return false
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
            if scalar.isASCII {
                out.append(scalar)
                continue
            }
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
        let small = "LATIN SMALL LETTER "
        let capital = "LATIN CAPITAL LETTER "
        let rest: Substring
        let isSmall: Bool
        if name.hasPrefix(small) {
            rest = name.dropFirst(small.count)
            isSmall = true
        } else if name.hasPrefix(capital) {
            rest = name.dropFirst(capital.count)
            isSmall = false
        } else {
            return nil
        }
        // "E WITH ACUTE", "O WITH STROKE": one base letter, then the mark.
        guard rest.count > 6, rest.dropFirst().hasPrefix(" WITH "), let letter = rest.first, letter.isASCII,
            letter.isLetter,
            let base = (isSmall ? letter.lowercased() : String(letter)).unicodeScalars.first
        else { return nil }
        return base
    }

    /// LIKE: `*` matches any run, `?` one character, `\` escapes the next one.
    /// Works on code points, as the other string operators and SQLite's GLOB (its SQL form) do:
    /// `?` matches one code point.
    static func like(_ text: String, _ pattern: String, _ options: FilterPredicate.ComparisonOptions) -> Bool {
        let t = Array(fold(text, options).unicodeScalars)
        let p = Array(fold(pattern, options).unicodeScalars)
        // Pattern items: (code point, isWildcard).
        var items: [(Unicode.Scalar, Bool)] = []
        var i = 0
        while i < p.count {
            if p[i] == "\\" && i + 1 < p.count {
                items.append((p[i + 1], false))
                i += 2
                continue
            }
            items.append((p[i], p[i] == "*" || p[i] == "?"))
            i += 1
        }
        // Iterative wildcard matching with one backtrack point (linear for each star).
        var ti = 0
        var pi = 0
        var starP = -1
        var starT = 0
        while ti < t.count {
            if pi < items.count && (items[pi] == ("?", true) || (!items[pi].1 && items[pi].0 == t[ti])) {
                ti += 1
                pi += 1
            } else if pi < items.count && items[pi] == ("*", true) {
                starP = pi
                starT = ti
                pi += 1
            } else if starP >= 0 {
                pi = starP + 1
                starT += 1
                ti = starT
            } else {
                return false
            }
        }
        while pi < items.count && items[pi] == ("*", true) { pi += 1 }
        return pi == items.count
    }
}
