import CDMigrate

/// The host functions of Apple's MigrationV2 sample, which value expressions call as
/// `FUNCTION(CAST("MigrationFunctions", "Class"), "getFirstName:", $source.name)`.
///
/// The rule, the same in Swift, C and Python (examples/2-recipes/README.md): the name is trimmed
/// of whitespace at both ends, then split at its first run of whitespace, where whitespace is a
/// Unicode scalar with the White_Space property (ASCII space, tab, line breaks, no-break space,
/// the ideographic space U+3000 of Japanese text, …; not the zero-width space U+200B).
/// "Juan Mari Arzak" → "Juan" + "Mari Arzak"; "  Gordon   Ramsay " → "Gordon" + "Ramsay"; a
/// one-word name has an empty last name; an empty or all-space name gives two empty strings; no
/// name (nil) gives nil for both. Scalars, not Characters: a space followed by a combining mark
/// is a separator followed by the mark, as in C and Python.
public enum MigrationFunctions {
    public static let className = "MigrationFunctions"

    public static func firstName(_ name: String) -> String { split(name).first }
    public static func lastName(_ name: String) -> String { split(name).last }

    static func isSpace(_ s: Unicode.Scalar) -> Bool { s.properties.isWhitespace }

    static func split(_ name: String) -> (first: String, last: String) {
        let scalars = Array(name.unicodeScalars)
        var start = 0, end = scalars.count
        while start < end, isSpace(scalars[start]) { start += 1 }
        while end > start, isSpace(scalars[end - 1]) { end -= 1 }
        var gap = start
        while gap < end, !isSpace(scalars[gap]) { gap += 1 }
        var rest = gap
        while rest < end, isSpace(scalars[rest]) { rest += 1 }
        func text(_ a: Int, _ b: Int) -> String {
            var s = String.UnicodeScalarView()
            s.append(contentsOf: scalars[a..<b])
            return String(s)
        }
        return (text(start, gap), text(rest, end))
    }

    /// Registers `getFirstName:` and `getLastName:` with a manager.
    public static func register(with manager: MigrationManager) {
        manager.registerFunction(className: className, selector: "getFirstName:") { arguments in
            guard let name = arguments.first?.stringValue else { return .null }
            return .string(firstName(name))
        }
        manager.registerFunction(className: className, selector: "getLastName:") { arguments in
            guard let name = arguments.first?.stringValue else { return .null }
            return .string(lastName(name))
        }
    }
}
