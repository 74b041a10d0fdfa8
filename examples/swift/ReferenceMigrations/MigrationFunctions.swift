import CDMigrate

/// The host functions of Apple's MigrationV2 sample, which value expressions call as
/// `FUNCTION(CAST("MigrationFunctions", "Class"), "getFirstName:", $source.name)`.
///
/// A name splits at its first run of spaces (ASCII or the ideographic space U+3000 that Japanese
/// text uses): "Juan Mari Arzak" → "Juan" + "Mari Arzak"; a one-word name has an empty last name;
/// an empty name gives two empty strings; no name (nil) gives nil for both.
public enum MigrationFunctions {
    public static let className = "MigrationFunctions"

    public static func firstName(_ name: String) -> String { split(name).first }
    public static func lastName(_ name: String) -> String { split(name).last }

    static func isSpace(_ c: Character) -> Bool { c == " " || c == "\u{3000}" || c == "\t" }

    static func split(_ name: String) -> (first: String, last: String) {
        let trimmed = Substring(name).drop(while: isSpace)
        var trimmedEnd = trimmed
        while let c = trimmedEnd.last, isSpace(c) { trimmedEnd = trimmedEnd.dropLast() }
        guard let gap = trimmedEnd.firstIndex(where: isSpace) else { return (String(trimmedEnd), "") }
        return (String(trimmedEnd[..<gap]), String(trimmedEnd[gap...].drop(while: isSpace)))
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
