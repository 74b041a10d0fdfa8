/// Answers "how many rows lack this property" for a version the store is not at yet: each step
/// on the way makes one instance per source instance and copies each value (a nil stays nil, an
/// added attribute takes its default), so an entity and a property of a later version are
/// followed back through the steps' mapping models to the store's entity and property, whose rows
/// answer.
///
/// Inferred steps are followed as Core Data infers them. A step with a mapping model is followed
/// where its entity mapping for the entity is one such copy too: the only one making instances of
/// the entity, with no policy class, taking every source instance of its source entity, and the
/// property copied by a plain key path (`$source.name`, as Xcode writes it) or not set (the
/// attribute's default); where no entity mapping makes the entity and no policy class could, the
/// step makes no instance of it. Where the trail cannot be followed with certainty (an entity with
/// sub-entities, a policy, a filter, a property set by any other expression, a to-many) the answer
/// is nil and the change is refused as without a store; migration validates every instance at
/// save in any case.
struct InferredRowTrace {
    let census: StoreRowCensus
    /// The stages from the store's version up to the step asking, in order.
    let stages: [MigrationStage]

    /// The rows of `entity` (of the last stage's destination model) lacking `property` (all its
    /// rows when nil), as the store's rows decide them; nil when the trail is lost.
    func rows(of entity: EntityDescription, lacking property: PropertyDescription?) throws -> Int? {
        var entity = entity
        var property = property
        for stage in stages.reversed() {
            guard stage.mappingModels.count == 1, let mapping = stage.mappingModels.first else { return nil }
            let making = mapping.entityMappings.filter {
                $0.destinationEntityName == entity.name && $0.mappingType != .remove
            }
            if making.isEmpty, !stage.isInferred,
                mapping.entityMappings.allSatisfy({ Self.hasNoPolicyOfTheApp($0) })
            {
                return 0  // no entity mapping makes it, and no policy could: the step makes none
            }
            guard making.count == 1, let entityMapping = making.first else { return nil }
            if entityMapping.mappingType == .add { return 0 }
            guard let sourceName = entityMapping.sourceEntityName,
                let source = stage.sourceModel.entity(named: sourceName),
                entity.subentities.isEmpty, source.subentities.isEmpty
            else { return nil }
            if !stage.isInferred && !Self.copiesEveryInstance(entityMapping, of: sourceName) { return nil }
            let copiedName: (PropertyMapping) -> String? = { mapping in
                stage.isInferred ? nil : Self.copiedKey(mapping.valueExpression)
            }
            if let attribute = property as? AttributeDescription {
                guard let propertyMapping = entityMapping.attributeMapping(named: attribute.name) else { return nil }
                if let text = propertyMapping.valueExpressionText {
                    let name = copiedName(propertyMapping)
                    guard
                        let origin = source.attributes.first(where: {
                            MappingInference.attributeExpression($0.name) == text || $0.name == name
                        })
                    else { return nil }
                    property = origin
                } else if !attribute.defaultValue.isNull {
                    return 0
                } else {
                    property = nil  // added here without a default: every row lacks it
                }
            } else if let relationship = property as? RelationshipDescription {
                guard !relationship.isToMany,
                    let propertyMapping = entityMapping.relationshipMapping(named: relationship.name)
                else { return nil }
                if let text = propertyMapping.valueExpressionText {
                    guard
                        let origin = source.relationships.first(where: {
                            !$0.isToMany && MappingInference.relationshipExpression($0.name) == text
                        })
                    else { return nil }
                    property = origin
                } else {
                    property = nil  // added (or emptied) here: every row lacks it
                }
            } else if property != nil {
                return nil
            }
            entity = source
        }
        return try census.rows(of: entity, lacking: property)
    }

    /// Whether a mapping model's entity mapping makes one instance of every source instance of
    /// `sourceName` the way Core Data's default policy does: no policy class of the app's, a
    /// source expression taking every instance of that entity (or none written).
    static func copiesEveryInstance(_ mapping: EntityMapping, of sourceName: String) -> Bool {
        guard hasNoPolicyOfTheApp(mapping) else { return false }
        guard mapping.mappingType == .copy || mapping.mappingType == .transform || mapping.mappingType == .undefined
        else { return false }
        guard let source = mapping.sourceExpression else { return mapping.sourceExpressionText == nil }
        return (source.entityName == nil || source.entityName == sourceName) && source.predicate == .constant(true)
    }

    /// Whether an entity mapping runs Core Data's own `NSEntityMigrationPolicy` (no class of the
    /// app's, which could make instances of any entity or change any value).
    static func hasNoPolicyOfTheApp(_ mapping: EntityMapping) -> Bool {
        guard let policy = mapping.entityMigrationPolicyClassName, !policy.isEmpty else { return true }
        return policy == "NSEntityMigrationPolicy"
    }

    /// The source attribute a value expression copies as it is: `$source.name` (Xcode's form) or
    /// `FUNCTION($source, "valueForKey:", "name")`; nil for any other expression.
    static func copiedKey(_ expression: ValueExpression?) -> String? {
        switch expression {
        case .keyPath(.variable("source"), let keys) where keys.count == 1:
            return keys[0]
        case .function(.variable("source"), "valueForKey:", let arguments) where arguments.count == 1:
            if case .constant(.string(let key)) = arguments[0] { return key }
            return nil
        default:
            return nil
        }
    }
}
