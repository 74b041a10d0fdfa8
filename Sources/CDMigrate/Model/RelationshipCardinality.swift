/// What a relationship's optionality and counts allow, as Core Data validates them.
///
/// Core Data enforces `minCount` and `maxCount` only on a relationship that holds something: an
/// optional relationship may be empty whatever its minimum (`NSRelationshipDescription`,
/// "Cardinality", and `maxCount`). A to-one that is not optional must hold an instance
/// (`NSValidationMissingMandatoryPropertyError`, 1570). A to-many's value is a set, never nil, so
/// "not optional" asks nothing more of it than its `minCount`: an empty non-optional to-many with
/// no minimum is valid, and one with a minimum fails with
/// `NSValidationRelationshipLacksMinimumCountError` (1580), as does any to-many holding fewer than
/// its minimum (docs/coming-from-core-data.md).
extension RelationshipDescription {
    /// Whether an instance may leave the relationship empty (nil for a to-one, no instance for a
    /// to-many) and still validate.
    public var allowsEmpty: Bool {
        if isOptional { return true }
        return isToMany && minCount <= 0
    }
}
