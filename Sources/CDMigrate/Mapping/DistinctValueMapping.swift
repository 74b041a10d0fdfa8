/// cdmigrate's extension to Core Data's entity mappings: "one destination instance per distinct
/// value of a source attribute", said in the mapping's user info (which Core Data keeps and ignores):
///
///     "userInfo": {"cdmigrate.distinctValueKeyPath": "categoria"}
///
/// The mapping then makes one destination instance for each distinct value of that attribute
/// among the source instances it takes, in the order of each value's first source instance (by
/// key), evaluating its attribute mappings with `$source` that first instance; every source
/// instance with the value is associated with it, so relationship mappings elsewhere
/// (`destinationInstancesForEntityMappingNamed:sourceInstances:`) link each source to the
/// destination of its value. A source whose value is nil, or an empty string, makes nothing and
/// is associated with nothing (to keep empty strings out as well as nil is what a policy making
/// categories from free text does; a mapping wanting other values left out says so in its
/// predicate). Values compare exactly as stored: text byte for byte (case, accents and Unicode
/// normalization count), numbers by value.
///
/// The mapping's own relationship mappings are evaluated once for each of its sources and their
/// results added together (a to-one takes the last source's), where Core Data's default refuses
/// a destination made of several sources.
///
/// Rules (checked with the mapping model, `MigrationError.invalidMapping` naming the mapping): the
/// value is text naming one stored attribute of the source entity (no dotted key paths); the
/// mapping has a source and a destination entity and no custom policy.
package enum DistinctValueMapping {
    package static let userInfoKey = "cdmigrate.distinctValueKeyPath"

    /// The source attribute whose distinct values the mapping makes one destination each for;
    /// nil for a mapping without the key.
    ///
    /// - Throws: `MigrationError.invalidMapping` when the key is set but breaks a rule.
    package static func attribute(of mapping: EntityMapping) throws -> AttributeDescription? {
        guard let value = mapping.userInfo[userInfoKey] else { return nil }
        let fail = { (reason: String) in
            MigrationError(
                .invalidMapping, "entity mapping '\(mapping.name)': user info '\(userInfoKey)' \(reason)",
                path: mapping.path + ".userInfo." + userInfoKey)
        }
        guard case .string(let key) = value else {
            throw fail("must be text naming a source attribute, not a \(value.typeName) value")
        }
        if mapping.entityMigrationPolicyClassName != nil {
            throw fail(
                "takes the place of a policy: the mapping cannot also name the policy '\(mapping.entityMigrationPolicyClassName ?? "")'"
            )
        }
        guard let source = mapping.sourceEntity else { throw fail("needs a source entity") }
        guard mapping.destinationEntity != nil else { throw fail("needs a destination entity") }
        if key.contains(".") {
            throw fail("'\(key)' is a key path of several keys: name one attribute of source entity '\(source.name)'")
        }
        guard let attribute = source.attribute(named: key) else {
            throw fail(
                "names '\(key)', which is not an attribute of source entity '\(source.name)'\(SpellingSuggestion.hint(key, among: source.attributes.map { $0.name }))"
            )
        }
        if attribute.isTransient {
            throw fail("names '\(key)', a transient attribute of '\(source.name)': the store keeps no value to compare")
        }
        return attribute
    }

    /// The value as the store compares it: text by its UTF-8 bytes (Swift's `==` on strings would
    /// join canonically equivalent texts that SQLite keeps apart).
    package static func comparable(_ value: Value) -> Value {
        if case .string(let s) = value { return .binary(Array(s.utf8)) }
        return value
    }

    /// Whether `value` of the attribute makes no destination instance: nil, or an empty string.
    package static func isNoValue(_ value: Value) -> Bool {
        switch value {
        case .null: return true
        case .string(let s): return s.isEmpty
        default: return false
        }
    }
}
