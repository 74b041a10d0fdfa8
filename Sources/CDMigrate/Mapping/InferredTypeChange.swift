/// Which attribute type changes an inferred mapping model accepts.
///
/// Core Data's inferred mapping converts numbers between its numeric types ("Attributes —
/// numerical type conversion" among the changes lightweight migration infers: Apple, WWDC 2010
/// session 118, *Mastering Core Data*): the value expression `FUNCTION($source, "valueForKey:",
/// "x")` hands over an `NSNumber`, which the destination attribute takes as its own type. Its
/// mapping model builder (`_NSMappingModelBuilder`, inferring property mappings) accepts a
/// change between two of Integer 16, Integer 32, Integer 64, Decimal, Double and Float, and
/// between one of those and Boolean, and refuses every other change of type ("Source and
/// destination attribute types are incompatible", 134190). So do cdmigrate's inferred steps:
///
/// - a change that keeps every value (a wider integer, Integer 16/32 → Double, Float → Double,
///   any integer → Decimal, Boolean → any number) is accepted silently;
/// - any other accepted change comes with a note (`note(from:to:)`): an integer too large for a
///   narrower integer type is refused by validation (1610/1620, as Core Data refuses it at save),
///   a fraction going to an integer is cut, a Double or Integer 64 going to Float is rounded, a
///   number going to Boolean is NO when zero and YES otherwise.
///
/// Everything else is refused, as Core Data refuses it: between numbers or Booleans and text,
/// dates, binary data, UUIDs and URIs.
enum InferredTypeChange {
    static let numeric: Set<AttributeType> = [.integer16, .integer32, .integer64, .decimal, .double, .float]

    /// Whether an inferred mapping converts values of `source` type into `destination`.
    static func isAccepted(from source: AttributeType, to destination: AttributeType) -> Bool {
        if source == destination { return true }
        if numeric.contains(source) { return numeric.contains(destination) || destination == .boolean }
        return source == .boolean && numeric.contains(destination)
    }

    /// Whether every value of `source` type is kept exactly in `destination`.
    static func keepsEveryValue(from source: AttributeType, to destination: AttributeType) -> Bool {
        if source == destination { return true }
        switch (source, destination) {
        case (.integer16, .integer32), (.integer16, .integer64), (.integer32, .integer64): return true
        case (.integer16, .double), (.integer32, .double), (.integer16, .float): return true
        case (.float, .double): return true
        case (.integer16, .decimal), (.integer32, .decimal), (.integer64, .decimal): return true
        case (.boolean, _): return numeric.contains(destination)
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
        if destination == .boolean { return "a number becomes NO when it is zero and YES otherwise" }
        if destination == .float { return "values are rounded to Float's precision" }
        if destination == .double { return "values are rounded to Double's precision" }
        return "values are converted as Core Data converts an NSNumber"
    }

    /// The accepted changes, for error messages.
    static let acceptedText =
        "between the numeric types (Integer 16/32/64, Decimal, Double, Float) and between those and Boolean, as Core Data converts numbers"
}
