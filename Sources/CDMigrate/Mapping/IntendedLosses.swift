/// How a mapping declares that it leaves source data behind on purpose, so that the loss report
/// marks it intended and a strict run (`MigrationManager.failsOnUnintendedLoss`) accepts it
/// (docs/loss-report.md):
///
/// - the entity mapping's user info key `cdmigrate.intendedLosses`, text listing source property
///   names separated by commas (`"color, legacyFlag"`): in the mapping JSON's `userInfo` and in
///   Xcode's mapping model editor (the entity mapping's User Info) alike; `*` stands for every
///   property the mapping does not read, `@instances` for the instances of its source entity
///   that no mapping takes (those its policy makes nothing of);
/// - the key `cdmigrate.carriedByPolicy`, in the same form, for the source properties that the
///   mapping's custom policy carries in its own code (which the engine cannot see): they count
///   as read, so they are no loss at all;
/// - a remove entity mapping (Core Data's `NSRemoveEntityMappingType`) in a written mapping model:
///   the source entity's instances are meant to go;
/// - a source predicate of a written mapping model: the instances it leaves out are meant to stay behind.
///
/// An inferred mapping model declares nothing: everything an inferred step drops is a loss.
package enum IntendedLosses {
    package static let userInfoKey = "cdmigrate.intendedLosses"
    /// The source properties a mapping's custom policy carries in its own code, which the engine
    /// cannot see: the loss report counts them as read (same form as `userInfoKey`).
    /// In `userInfoKey`: the source instances that the mapping (its policy) does not take.
    package static let instancesName = "@instances"
    package static let carriedByPolicyKey = "cdmigrate.carriedByPolicy"

    /// The source property names a mapping declares (empty when it declares none); "*" is all.
    package static func names(of mapping: EntityMapping, key: String = userInfoKey) -> Set<String> {
        guard case .string(let text)? = mapping.userInfo[key] else { return [] }
        var names = Set<String>()
        for part in text.split(separator: ",") {
            let name = trimmed(part)
            if !name.isEmpty { names.insert(name) }
        }
        return names
    }

    /// Problems of the declaration: not text, or naming no property of the source entity.
    static func problems(of mapping: EntityMapping) -> [MigrationError] {
        var problems: [MigrationError] = []
        for key in [userInfoKey, carriedByPolicyKey] {
            guard let value = mapping.userInfo[key] else { continue }
            let path = mapping.path + ".userInfo." + key
            guard case .string = value else {
                problems.append(
                    MigrationError(
                        .invalidMapping,
                        "entity mapping '\(mapping.name)': '\(key)' must be text listing source property names separated by commas",
                        path: path))
                continue
            }
            guard let entity = mapping.sourceEntity else { continue }
            for name in names(of: mapping, key: key).sorted()
            where !(key == userInfoKey && (name == "*" || name == instancesName)) && entity.property(named: name) == nil
            {
                problems.append(
                    MigrationError(
                        .invalidMapping,
                        "entity mapping '\(mapping.name)': '\(key)' names '\(name)', which source entity '\(entity.name)' does not have\(SpellingSuggestion.hint(name, among: (entity.attributes.map { $0.name } + entity.relationships.map { $0.name })))",
                        path: path))
            }
        }
        return problems
    }

    /// The source keys an entity mapping's property mappings read (`$source.key…`,
    /// `FUNCTION($source, "valueForKey:", "key")`, the relationship named by
    /// `destinationInstancesForSourceRelationshipNamed:`, the attribute of `cdmigrate.distinctValueKeyPath`).
    package static func sourceKeysRead(by mapping: EntityMapping) -> Set<String> {
        var keys = Set<String>()
        for property in mapping.attributeMappings + mapping.relationshipMappings {
            if let expression = property.valueExpression { collect(expression, into: &keys) }
        }
        // One destination per distinct value of an attribute: the mapping carries that attribute.
        if case .string(let key)? = mapping.userInfo[DistinctValueMapping.userInfoKey] { keys.insert(key) }
        // What the mapping says its policy carries.
        keys.formUnion(names(of: mapping, key: carriedByPolicyKey))
        return keys
    }

    /// The source keys one expression reads.
    package static func sourceKeysRead(byExpression expression: ValueExpression) -> Set<String> {
        var keys = Set<String>()
        collect(expression, into: &keys)
        return keys
    }

    /// The key of a plain copy (`$source.key`, `FUNCTION($source, "valueForKey:", "key")`), nil for anything else.
    package static func sameKeyCopy(_ expression: ValueExpression) -> String? {
        switch expression {
        case .keyPath(.variable("source"), let keys) where keys.count == 1: return keys[0]
        case .function(.variable("source"), "valueForKey:", let arguments) where arguments.count == 1:
            return arguments[0].constantValue?.stringValue
        default: return nil
        }
    }

    private static func collect(_ expression: ValueExpression, into keys: inout Set<String>) {
        switch expression {
        case .keyPath(.variable("source"), let path):
            if let first = path.first { keys.insert(first) }
        case .function(.variable("source"), let selector, let arguments)
        where selector == "valueForKey:" || selector == "valueForKeyPath:" || selector == "mutableSetValueForKey:"
            || selector == "mutableOrderedSetValueForKey:":
            if let key = arguments.first?.constantValue?.stringValue, let first = key.split(separator: ".").first {
                keys.insert(String(first))
            }
            for argument in arguments { collect(argument, into: &keys) }
        case .function(
            .variable("manager"), "destinationInstancesForSourceRelationshipNamed:sourceInstances:", let arguments):
            if let name = arguments.first?.constantValue?.stringValue { keys.insert(name) }
            for argument in arguments { collect(argument, into: &keys) }
        case .keyPath(let base, _): collect(base, into: &keys)
        case .function(let target, _, let arguments):
            collect(target, into: &keys)
            for argument in arguments { collect(argument, into: &keys) }
        case .builtin(_, let arguments), .aggregate(let arguments):
            for argument in arguments { collect(argument, into: &keys) }
        case .binary(_, let lhs, let rhs), .index(let lhs, let rhs):
            collect(lhs, into: &keys)
            collect(rhs, into: &keys)
        case .negation(let operand): collect(operand, into: &keys)
        case .subquery(let collection, _, _): collect(collection, into: &keys)
        case .constant, .variable, .evaluatedObject: break
        }
    }

    private static func trimmed(_ text: Substring) -> String {
        var part = text
        while let first = part.first, first == " " || first == "\t" || first == "\n" { part.removeFirst() }
        while let last = part.last, last == " " || last == "\t" || last == "\n" { part.removeLast() }
        return String(part)
    }
}
