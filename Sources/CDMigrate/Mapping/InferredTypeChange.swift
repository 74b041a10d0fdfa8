/// Which attribute type changes an inferred mapping model accepts.
///
/// Apple's lightweight-migration rules list no attribute type change among the changes Core Data
/// infers (adding, removing and renaming properties and entities, optionality, relationship
/// cardinality and the entity hierarchy). cdmigrate accepts only the changes that keep every
/// value exactly, so that `FUNCTION($source, "valueForKey:", "x")` copies it unchanged:
///
/// - a wider integer: Integer 16 → Integer 32 or 64, Integer 32 → Integer 64;
/// - Integer 16 or 32 → Double (a double holds every 32-bit integer exactly; Integer 64 does not
///   fit in a double's 53-bit mantissa, so it is refused);
/// - Float → Double (every float is a double).
///
/// Everything else is refused: narrowing (values could be cut), between numbers and text, dates,
/// binary data, booleans, decimals (their text form and exactness differ), UUIDs and URIs.
enum InferredTypeChange {
    /// Whether values of `source` type carry over unchanged into `destination`.
    static func isAccepted(from source: AttributeType, to destination: AttributeType) -> Bool {
        if source == destination { return true }
        switch (source, destination) {
        case (.integer16, .integer32), (.integer16, .integer64), (.integer32, .integer64): return true
        case (.integer16, .double), (.integer32, .double): return true
        case (.float, .double): return true
        default: return false
        }
    }

    /// The accepted changes, for error messages.
    static let acceptedText = "Integer 16 → Integer 32/64, Integer 32 → Integer 64, Integer 16/32 → Double, Float → Double"
}
