/// Which attribute type changes an inferred mapping model accepts.
///
/// Core Data's inferred mapping converts numbers between its numeric types ("Attributes —
/// numerical type conversion" among the changes lightweight migration infers: Apple, WWDC 2010
/// session 118, *Mastering Core Data*): the value expression `FUNCTION($source, "valueForKey:",
/// "x")` hands over an `NSNumber`, which the destination attribute takes as its own type. So do
/// cdmigrate's inferred steps, between Integer 16, Integer 32, Integer 64, Decimal, Double and
/// Float:
///
/// - a change that keeps every value (a wider integer, Integer 16/32 → Double, Float → Double,
///   any integer → Decimal) is accepted silently;
/// - any other numeric change is accepted with a note (`note(from:to:)`): an integer too large for
///   a narrower integer type is refused by validation (1610/1620, as Core Data refuses it at save),
///   a fraction going to an integer is cut, a Double or Integer 64 going to Float is rounded.
///
/// Everything else is refused, as Core Data refuses it: between numbers and text, dates, binary
/// data, booleans, UUIDs and URIs.
enum InferredTypeChange {
    static let numeric: Set<AttributeType> = [.integer16, .integer32, .integer64, .decimal, .double, .float]

    /// Whether an inferred mapping converts values of `source` type into `destination`.
    static func isAccepted(from source: AttributeType, to destination: AttributeType) -> Bool {
        source == destination || (numeric.contains(source) && numeric.contains(destination))
    }

    /// Whether every value of `source` type is kept exactly in `destination`.
    static func keepsEveryValue(from source: AttributeType, to destination: AttributeType) -> Bool {
        if source == destination { return true }
        switch (source, destination) {
        case (.integer16, .integer32), (.integer16, .integer64), (.integer32, .integer64): return true
        case (.integer16, .double), (.integer32, .double), (.integer16, .float): return true
        case (.float, .double): return true
        case (.integer16, .decimal), (.integer32, .decimal), (.integer64, .decimal): return true
        default: return false
        }
    }

    /// What happens to values in an accepted change that may not keep them; nil when every value is kept.
    static func note(from source: AttributeType, to destination: AttributeType) -> String? {
        guard isAccepted(from: source, to: destination), !keepsEveryValue(from: source, to: destination) else {
            return nil
        }
        let integers: Set<AttributeType> = [.integer16, .integer32, .integer64]
        if integers.contains(destination) {
            return integers.contains(source)
                ? "a value outside \(destination.rawValue)'s range fails validation (1610/1620), as at Core Data's save"
                : "fractions are cut, and a value outside \(destination.rawValue)'s range fails validation (1610/1620), as at Core Data's save"
        }
        if destination == .float { return "values are rounded to Float's precision" }
        if destination == .double { return "values are rounded to Double's precision" }
        return "values are converted as Core Data converts an NSNumber"
    }

    /// The accepted changes, for error messages.
    static let acceptedText =
        "between the numeric types (Integer 16/32/64, Decimal, Double, Float), as Core Data converts numbers"
}
