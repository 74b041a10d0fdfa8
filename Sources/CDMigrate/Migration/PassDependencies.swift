/// What one pass of a step needs from another: a relationship mapping whose `$manager` look-up
/// can only find destination instances that an entity mapping of another pass makes.
///
/// A pass's look-ups see the associations of its own mapping model only, as in Core Data, where
/// each pass is a migration of its own (`destinationInstancesForEntityMappingNamed:` and
/// `destinationInstancesForSourceRelationshipNamed:` find nothing for a mapping that has not run
/// in this migration). `destinationInstancesForSourceRelationshipNamed:` then gives nothing and the
/// relationship stays empty, silently: these are said before the run (`warnings`). A look-up
/// naming an entity mapping that only another pass has is refused before the run
/// (`lookUpsAcrossPasses`), naming both passes.
enum PassDependencies {
    /// One mapping model of the step, as it runs: its name for messages and the bound model.
    struct Pass {
        let name: String
        let model: MappingModel
    }

    /// The warnings for passes run in the order given (none for fewer than two passes).
    static func warnings(_ passes: [Pass]) -> [String] {
        guard passes.count > 1 else { return [] }
        var warnings: [String] = []
        for (index, pass) in passes.enumerated() {
            for mapping in pass.model.entityMappings {
                guard let sourceEntity = mapping.sourceEntity else { continue }
                for property in mapping.relationshipMappings {
                    guard let expression = property.valueExpression else { continue }
                    for relationshipName in sourceRelationshipLookUps(in: expression) {
                        guard let sourceTarget = sourceEntity.relationship(named: relationshipName)?.destinationEntity
                        else { continue }
                        let wanted = mapping.destinationEntity?.relationship(named: property.name)?.destinationEntity
                        if makers(of: sourceTarget, as: wanted, in: pass.model).isEmpty == false { continue }
                        let elsewhere = passes.enumerated().filter {
                            $0.offset != index && !makers(of: sourceTarget, as: wanted, in: $0.element.model).isEmpty
                        }
                        guard let other = elsewhere.first(where: { $0.offset > index }) ?? elsewhere.first else {
                            continue
                        }
                        let names = makers(of: sourceTarget, as: wanted, in: other.element.model).map { "'\($0)'" }
                            .joined(separator: ", ")
                        let when = other.offset > index ? "the later pass" : "the earlier pass"
                        warnings.append(
                            """
                            pass \(index + 1) '\(pass.name)', entity mapping '\(mapping.name)', relationship '\(property.name)': \
                            destinationInstancesForSourceRelationshipNamed: "\(relationshipName)" needs destination instances of \
                            '\(sourceTarget.name)' that only \(when) \(other.offset + 1) '\(other.element.name)' makes (entity mapping \(names)); \
                            a pass looks up only its own mapping model's instances, as in Core Data, so '\(property.name)' stays empty \
                            unless a policy sets it; map '\(sourceTarget.name)' in '\(pass.name)' as well
                            """)
                    }
                }
            }
        }
        return warnings
    }

    /// Look-ups by name (`destinationInstancesForEntityMappingNamed:`,
    /// `sourceInstancesForEntityMappingNamed:`) of an entity mapping that the pass's own mapping
    /// model lacks and another pass has: one error each, naming both passes, before the mapping
    /// models are checked (which would only say the name is not in the mapping model). Core Data's
    /// look-up finds nothing for a mapping not run in that migration; a relationship that would
    /// silently stay empty is refused here rather than run.
    static func lookUpsAcrossPasses(_ passes: [Pass]) -> [MigrationError] {
        guard passes.count > 1 else { return [] }
        let selectors: Set<String> = [
            "destinationInstancesForEntityMappingNamed:sourceInstances:",
            "sourceInstancesForEntityMappingNamed:destinationInstances:",
        ]
        var problems: [MigrationError] = []
        for (index, pass) in passes.enumerated() {
            for mapping in pass.model.entityMappings {
                for property in mapping.attributeMappings + mapping.relationshipMappings {
                    guard let expression = property.valueExpression else { continue }
                    for name in lookUps(in: expression, selectors: selectors)
                    where pass.model.entityMapping(named: name) == nil {
                        let others = passes.enumerated().filter {
                            $0.offset != index && $0.element.model.entityMapping(named: name) != nil
                        }
                        guard let other = others.first(where: { $0.offset > index }) ?? others.first else { continue }
                        let when = other.offset > index ? "the later pass" : "the earlier pass"
                        problems.append(
                            MigrationError(
                                .invalidMapping,
                                """
                                pass \(index + 1) '\(pass.name)', entity mapping '\(mapping.name)', property '\(property.name)': looks up \
                                entity mapping '\(name)', which only \(when) \(other.offset + 1) '\(other.element.name)' has; a pass looks up \
                                only its own mapping model's instances, as in Core Data, where the look-up finds nothing for a mapping \
                                not run in that migration: put '\(name)' in '\(pass.name)' as well, or set the relationship in a policy
                                """, path: property.path))
                    }
                }
            }
        }
        return problems
    }

    /// The entity mappings of `model` that `destinationInstancesForSourceRelationshipNamed:` looks
    /// through for targets of `sourceTarget` becoming `wanted` (as `MigrationManager.mappingIDs`).
    private static func makers(
        of sourceTarget: EntityDescription, as wanted: EntityDescription?, in model: MappingModel
    ) -> [String] {
        model.entityMappings.compactMap { candidate in
            guard let s = candidate.sourceEntity, let d = candidate.destinationEntity,
                s.isKind(of: sourceTarget) || sourceTarget.isKind(of: s)
            else { return nil }
            if let wanted = wanted, !d.isKind(of: wanted) { return nil }
            return candidate.name
        }
    }

    /// The source relationship names an expression looks up with
    /// `FUNCTION($manager, "destinationInstancesForSourceRelationshipNamed:sourceInstances:", "name", …)`.
    private static func sourceRelationshipLookUps(in expression: ValueExpression) -> [String] {
        lookUps(in: expression, selectors: ["destinationInstancesForSourceRelationshipNamed:sourceInstances:"])
    }

    /// The constant first arguments of the `$manager` calls of `selectors` in an expression.
    private static func lookUps(in expression: ValueExpression, selectors: Set<String>) -> [String] {
        var names: [String] = []
        var pending = [expression]
        // An explicit stack: however deep an expression nests, no recursion.
        while let next = pending.popLast() {
            switch next {
            case .constant, .evaluatedObject, .variable:
                break
            case .keyPath(let base, _):
                pending.append(base)
            case .function(let target, let selector, let arguments):
                if case .variable("manager") = target, selectors.contains(selector),
                    let name = arguments.first?.constantValue?.stringValue, !names.contains(name)
                {
                    names.append(name)
                }
                pending.append(target)
                pending += arguments
            case .builtin(_, let arguments), .aggregate(let arguments):
                pending += arguments
            case .binary(_, let lhs, let rhs), .index(let lhs, let rhs):
                pending += [lhs, rhs]
            case .negation(let operand):
                pending.append(operand)
            case .subquery(let collection, _, _):
                pending.append(collection)
            }
        }
        return names
    }
}
