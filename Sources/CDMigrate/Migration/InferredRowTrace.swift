/// Answers "how many rows lack this property" for a version the store is not at yet, where only
/// inferred steps lead there from the store's version: an inferred step makes one instance per
/// source instance (none for an added entity) and copies each value (a nil stays nil, an added
/// attribute takes its default), so an entity and a property of a later version are followed back
/// through the steps' mapping models to the store's entity and property, whose rows answer.
///
/// Where the trail cannot be followed with certainty (an entity with sub-entities, a property set
/// by anything but Core Data's inferred expressions, a to-many) the answer is nil and the change
/// is refused as without a store; migration validates every instance at save in any case.
struct InferredRowTrace {
    let census: StoreRowCensus
    /// The inferred stages from the store's version up to the step asking, in order.
    let stages: [MigrationStage]

    /// The rows of `entity` (of the last stage's destination model) lacking `property` (all its
    /// rows when nil), as the store's rows decide them; nil when the trail is lost.
    func rows(of entity: EntityDescription, lacking property: PropertyDescription?) throws -> Int? {
        var entity = entity
        var property = property
        for stage in stages.reversed() {
            guard stage.isInferred, stage.mappingModels.count == 1, let mapping = stage.mappingModels.first else {
                return nil
            }
            guard
                let entityMapping = mapping.entityMappings.first(where: {
                    $0.destinationEntityName == entity.name && $0.mappingType != .remove
                })
            else { return nil }
            if entityMapping.mappingType == .add { return 0 }
            guard let sourceName = entityMapping.sourceEntityName,
                let source = stage.sourceModel.entity(named: sourceName),
                entity.subentities.isEmpty, source.subentities.isEmpty
            else { return nil }
            if let attribute = property as? AttributeDescription {
                guard let propertyMapping = entityMapping.attributeMapping(named: attribute.name) else { return nil }
                if let text = propertyMapping.valueExpressionText {
                    guard
                        let origin = source.attributes.first(where: {
                            MappingInference.attributeExpression($0.name) == text
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
}
