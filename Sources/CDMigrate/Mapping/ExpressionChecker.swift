/// Checks a property mapping's value expression against the models before anything runs:
/// key paths on `$source` and `$destination` must name properties of those entities, and the entity
/// mappings and relationships that `$manager` functions name must exist.
struct ExpressionChecker {
    let mappingModel: MappingModel
    let mapping: EntityMapping
    let property: PropertyMapping

    func check(_ expression: ValueExpression) -> [MigrationError] {
        var problems: [MigrationError] = []
        walk(expression, &problems)
        return problems
    }

    private func fail(_ message: String) -> MigrationError {
        MigrationError(
            .invalidMapping,
            "entity mapping '\(mapping.name)', property '\(property.name)': \(message) in '\(property.valueExpressionText ?? "")'",
            path: property.path)
    }

    private func walk(_ expression: ValueExpression, _ problems: inout [MigrationError]) {
        switch expression {
        case .constant, .evaluatedObject, .variable:
            break
        case .keyPath(let base, let keys):
            if case .variable(let name) = base {
                checkKeyPath(variable: name, keys: keys, &problems)
            } else {
                walk(base, &problems)
            }
        case .function(let target, let selector, let arguments):
            walk(target, &problems)
            for argument in arguments { walk(argument, &problems) }
            if case .variable("manager") = target { checkManagerCall(selector, arguments, &problems) }
            if case .variable("source") = target, selector == "valueForKey:" || selector == "valueForKeyPath:",
                let key = arguments.first?.constantValue?.stringValue
            {
                let keys = selector == "valueForKey:" ? [key] : key.split(separator: ".").map(String.init)
                checkKeyPath(variable: "source", keys: keys, &problems)
            }
        case .builtin(_, let arguments), .aggregate(let arguments):
            for argument in arguments { walk(argument, &problems) }
        case .binary(_, let lhs, let rhs), .index(let lhs, let rhs):
            walk(lhs, &problems)
            walk(rhs, &problems)
        case .negation(let operand):
            walk(operand, &problems)
        case .subquery(let collection, _, _):
            walk(collection, &problems)
        }
    }

    private func checkKeyPath(variable: String, keys: [String], _ problems: inout [MigrationError]) {
        let start: EntityDescription?
        switch variable {
        case "source": start = mapping.sourceEntity
        case "destination": start = mapping.destinationEntity
        default: return
        }
        guard var entity = start else {
            if variable == "source" && mapping.sourceEntityName == nil {
                problems.append(fail("uses $source but the entity mapping has no source entity"))
            }
            return
        }
        for (i, key) in keys.enumerated() {
            if key.hasPrefix("@") { return }  // collection operators (@count, @sum.x) end the static check
            if let attribute = entity.attribute(named: key) {
                // Past an attribute, Foundation's key-value coding asks the value itself
                // (`flag.boolValue`, `name.length`); the keys must be messages its type answers.
                if i < keys.count - 1,
                    let unknown = KeyValueCoding.unansweredKey(keys[(i + 1)...], afterValueOf: attribute.attributeType)
                {
                    problems.append(
                        fail(
                            "'\(key)' of entity '\(entity.name)' is an attribute of type \(attribute.attributeType.rawValue), whose values do not answer '\(unknown)' in '$\(variable).\(keys.joined(separator: "."))'"
                        ))
                }
                return
            }
            guard let relationship = entity.relationship(named: key), let next = relationship.destinationEntity else {
                let names = entity.attributes.map { $0.name } + entity.relationships.map { $0.name }
                let subentityHint =
                    entity.selfAndDescendants.dropFirst().contains { $0.property(named: key) != nil }
                    ? " (only a sub-entity has it)" : ""
                problems.append(
                    fail(
                        "\(variable) entity '\(entity.name)' has no property '\(key)'\(subentityHint)\(SpellingSuggestion.hint(key, among: names))"
                    ))
                return
            }
            entity = next
        }
    }

    private func checkManagerCall(
        _ selector: String, _ arguments: [ValueExpression], _ problems: inout [MigrationError]
    ) {
        guard let name = arguments.first?.constantValue?.stringValue else { return }
        switch selector {
        case "destinationInstancesForEntityMappingNamed:sourceInstances:",
            "sourceInstancesForEntityMappingNamed:destinationInstances:":
            if mappingModel.entityMapping(named: name) == nil {
                problems.append(
                    fail(
                        "names entity mapping '\(name)', which is not in the mapping model\(SpellingSuggestion.hint(name, among: mappingModel.entityMappings.map { $0.name }))"
                    ))
            }
        case "destinationInstancesForSourceRelationshipNamed:sourceInstances:":
            if let source = mapping.sourceEntity, source.relationship(named: name) == nil {
                problems.append(
                    fail(
                        "names source relationship '\(name)', which entity '\(source.name)' does not have\(SpellingSuggestion.hint(name, among: source.relationships.map { $0.name }))"
                    ))
            }
        default:
            break
        }
    }
}
