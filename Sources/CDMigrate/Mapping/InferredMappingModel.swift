/// Inferred ("lightweight") mapping models, as Core Data's
/// `NSMappingModel.inferredMappingModel(forSourceModel:destinationModel:)` builds them.
extension MappingModel {
    /// The mapping model Core Data would infer between two models: one entity mapping per entity,
    /// named and typed as Core Data names them (`IEM_Copy_<Entity>` for an unchanged entity,
    /// `IEM_Transform_<Entity>` for a changed one, `IEM_Add_<Entity>`, `IEM_Remove_<Entity>`),
    /// entities and properties matched by name or renaming identifier, attributes copied with
    /// `FUNCTION($source, "valueForKey:", "<name>")` and relationships with
    /// `FUNCTION($manager, "destinationInstancesForSourceRelationshipNamed:sourceInstances:", …)`.
    ///
    /// The result is an ordinary, declarative mapping model (no policies): it runs as SQL where the
    /// engine can push it down, and it can be written out with `jsonText()`, edited and read back
    /// with `MappingModel(json:)`. docs/mapping-format.md ("Inferred mapping models") lists the rules.
    ///
    /// - Parameters:
    ///   - sourceModel: the model of the store to migrate.
    ///   - destinationModel: the model to migrate it to.
    /// - Returns: the inferred mapping model, already validated against both models.
    /// - Throws: `MigrationError` with code `.inferredMappingModel` (134190, Core Data's
    ///   `NSInferredMappingModelError`) when a change cannot be inferred; every problem is listed
    ///   in `underlying`, each naming the entity, the property and the rule it breaks, with the
    ///   property's path in the destination model's JSON.
    ///
    /// Core Data counterpart: `NSMappingModel.inferredMappingModel(forSourceModel:destinationModel:)`.
    public static func inferred(from sourceModel: ManagedObjectModel, to destinationModel: ManagedObjectModel) throws
        -> MappingModel
    {
        try inferred(from: sourceModel, to: destinationModel, rows: nil).model
    }

    /// As `inferred(from:to:)`, with "becomes non-optional" judged by the source store's rows
    /// where `rows` answers (see `MappingInference.RowCount`): such a change is refused only when
    /// rows would be left without a value, as Core Data's validation at save refuses them.
    /// Returns the model and what was judged by rows, for the plan to say.
    static func inferred(
        from sourceModel: ManagedObjectModel, to destinationModel: ManagedObjectModel,
        rows: MappingInference.RowCount?
    ) throws -> (model: MappingModel, notes: [String]) {
        var inference = MappingInference(source: sourceModel, destination: destinationModel)
        inference.rowCount = rows
        let model = inference.run()
        let name =
            "'\(sourceModel.versionIdentifier ?? sourceModel.name ?? "source")' to '\(destinationModel.versionIdentifier ?? destinationModel.name ?? "destination")'"
        if !inference.problems.isEmpty {
            let count = inference.problems.count
            let summary = count == 1 ? inference.problems[0].message : "\(count) changes cannot be inferred"
            throw MigrationError(
                .inferredMappingModel, "cannot infer a mapping model from \(name): \(summary)",
                underlying: inference.problems)
        }
        do {
            return (try model.validate(sourceModel: sourceModel, destinationModel: destinationModel), inference.notes)
        } catch let error as MigrationError {
            throw MigrationError(
                .inferredMappingModel,
                "the mapping model inferred from \(name) does not fit its models: \(error.message)", underlying: [error]
            )
        }
    }
}

/// Builds an inferred mapping model and collects what cannot be inferred.
struct MappingInference {
    let source: ManagedObjectModel
    let destination: ManagedObjectModel
    private(set) var problems: [MigrationError] = []
    /// How many rows of a source entity (sub-entities included) have no value for a property (an
    /// attribute or a to-one), or how many rows it has when the property is nil; nil when the
    /// store cannot say. Given, a "becomes non-optional" change is refused only when rows lack
    /// the value; not given, it is refused whatever the rows (no store to ask).
    typealias RowCount = (_ sourceEntity: EntityDescription, _ property: PropertyDescription?) throws -> Int?
    var rowCount: RowCount?
    /// What the plan should say about changes accepted with a consequence: judged by the store's
    /// rows, numbers converted, values not carried over.
    private(set) var notes: [String] = []

    init(source: ManagedObjectModel, destination: ManagedObjectModel) {
        self.source = source
        self.destination = destination
    }

    static func sourceExpression(for entity: EntityDescription) -> String {
        "FETCH(FUNCTION($manager, \"fetchRequestForSourceEntityNamed:predicateString:\", \"\(entity.name)\", \"TRUEPREDICATE\"), $manager.sourceContext, NO)"
    }

    static func attributeExpression(_ sourceName: String) -> String {
        "FUNCTION($source, \"valueForKey:\", \"\(sourceName)\")"
    }

    static func relationshipExpression(_ sourceName: String) -> String {
        "FUNCTION($manager, \"destinationInstancesForSourceRelationshipNamed:sourceInstances:\", \"\(sourceName)\", FUNCTION($source, \"valueForKey:\", \"\(sourceName)\"))"
    }

    mutating func run() -> MappingModel {
        let match = RenamingMatch(
            destination: destination.entities, source: source.entities,
            name: { $0.name }, renamingIdentifier: { $0.renamingIdentifier })
        for (sourceEntity, claimants) in match.conflicts {
            fail(
                claimants.first, nil,
                "entities \(claimants.map { "'\($0.name)'" }.joined(separator: " and ")) both take source entity '\(sourceEntity.name)' by their renaming identifiers; only one entity can continue it"
            )
        }
        // Destination entity → source entity, by identity.
        var sourceOf: [ObjectIdentifier: EntityDescription] = [:]
        var destinationOf: [ObjectIdentifier: EntityDescription] = [:]
        for (entity, sourceEntity) in zip(destination.entities, match.sources) {
            guard let sourceEntity = sourceEntity else { continue }
            sourceOf[ObjectIdentifier(entity)] = sourceEntity
            if destinationOf[ObjectIdentifier(sourceEntity)] == nil {
                destinationOf[ObjectIdentifier(sourceEntity)] = entity
            }
        }
        checkHierarchies(sourceOf: sourceOf)

        var mappings: [EntityMapping] = []
        func path() -> String { "$.entityMappings[\(mappings.count)]" }
        for entity in destination.entities {
            guard let sourceEntity = sourceOf[ObjectIdentifier(entity)] else {
                // New: no source instances; its properties' defaults apply to instances made later.
                mappings.append(
                    EntityMapping(
                        name: "IEM_Add_" + entity.name, mappingType: .add, sourceEntityName: nil,
                        destinationEntityName: entity.name,
                        sourceExpressionText: nil, sourceExpression: nil, attributeMappings: [],
                        relationshipMappings: [],
                        entityMigrationPolicyClassName: nil, userInfo: [:], sourceEntityVersionHash: nil,
                        destinationEntityVersionHash: MappingInference.recordable(entity.versionHash),
                        sourceEntitySnapshot: nil,
                        destinationEntitySnapshot: EntityMapping.snapshot(of: entity), path: path()))
                continue
            }
            if entity.isAbstract {
                if !sourceEntity.isAbstract {
                    fail(
                        entity, nil,
                        "entity '\(entity.name)' becomes abstract, but the source store may hold instances of '\(sourceEntity.name)', which an abstract entity cannot take"
                    )
                }
                // Both abstract: no instances of their own; the sub-entities' mappings carry their rows.
                continue
            }
            let mappingPath = path()
            let attributes = inferAttributes(entity, from: sourceEntity, path: mappingPath)
            let relationships = inferRelationships(
                entity, from: sourceEntity, destinationOf: destinationOf, path: mappingPath)
            let unchanged = entity.name == sourceEntity.name && entity.versionHash == sourceEntity.versionHash
            let text = MappingInference.sourceExpression(for: sourceEntity)
            mappings.append(
                EntityMapping(
                    name: (unchanged ? "IEM_Copy_" : "IEM_Transform_") + entity.name,
                    mappingType: unchanged ? .copy : .transform,
                    sourceEntityName: sourceEntity.name, destinationEntityName: entity.name,
                    sourceExpressionText: text, sourceExpression: try? SourceExpression.parse(text),
                    attributeMappings: attributes, relationshipMappings: relationships,
                    entityMigrationPolicyClassName: nil, userInfo: [:],
                    sourceEntityVersionHash: MappingInference.recordable(sourceEntity.versionHash),
                    destinationEntityVersionHash: MappingInference.recordable(entity.versionHash),
                    sourceEntitySnapshot: EntityMapping.snapshot(of: sourceEntity),
                    destinationEntitySnapshot: EntityMapping.snapshot(of: entity),
                    path: mappingPath))
        }
        for sourceEntity in source.entities where destinationOf[ObjectIdentifier(sourceEntity)] == nil {
            // A removed sub-entity's rows would otherwise be fetched with its parent's: its remove
            // mapping takes them (and makes nothing of them), as the rows of a removed entity go.
            let takesRows = sourceEntity.parent != nil
            let text = takesRows ? MappingInference.sourceExpression(for: sourceEntity) : nil
            mappings.append(
                EntityMapping(
                    name: "IEM_Remove_" + sourceEntity.name, mappingType: .remove, sourceEntityName: sourceEntity.name,
                    destinationEntityName: nil,
                    sourceExpressionText: text, sourceExpression: text.flatMap { try? SourceExpression.parse($0) },
                    attributeMappings: [], relationshipMappings: [], entityMigrationPolicyClassName: nil, userInfo: [:],
                    sourceEntityVersionHash: MappingInference.recordable(sourceEntity.versionHash),
                    destinationEntityVersionHash: nil,
                    sourceEntitySnapshot: EntityMapping.snapshot(of: sourceEntity), destinationEntitySnapshot: nil,
                    path: path()))
        }
        let name =
            "Inferred_" + MappingInference.label(source, "source") + "_to_"
            + MappingInference.label(destination, "destination")
        let inferred = MappingModel(name: name, entityMappings: mappings)
        inferred.isInferred = true
        return inferred
    }

    // MARK: Entities

    /// Apple: "if two existing entities do not share a common parent in the source, they cannot
    /// share a common parent in the destination" (entity hierarchies cannot be merged).
    private mutating func checkHierarchies(sourceOf: [ObjectIdentifier: EntityDescription]) {
        for root in destination.entities where root.parent == nil {
            var seen: [ObjectIdentifier: (EntityDescription, EntityDescription)] = [:]
            var order: [ObjectIdentifier] = []
            for entity in root.selfAndDescendants {
                guard let sourceEntity = sourceOf[ObjectIdentifier(entity)] else { continue }
                let key = ObjectIdentifier(sourceEntity.rootEntity)
                if seen[key] == nil {
                    seen[key] = (entity, sourceEntity)
                    order.append(key)
                }
            }
            guard order.count > 1 else { continue }
            let pairs = order.compactMap { seen[$0] }
            let listed = pairs.map { "'\($0.0.name)' (from '\($0.1.name)' under '\($0.1.rootEntity.name)')" }.joined(
                separator: ", ")
            fail(
                root, nil,
                "entity hierarchy '\(root.name)' merges entities of separate source hierarchies: \(listed); entities that share no parent in the source cannot share one in the destination"
            )
        }
    }

    /// Each wanted property's source property, by name or renaming identifier (`RenamingMatch`);
    /// a source property two wanted ones claim by renaming identifier is a problem (`kind`:
    /// "attribute" or "relationship", for the message).
    private mutating func matchRenamed<Property: PropertyDescription>(
        _ wanted: [Property], _ candidates: [Property], _ kind: String, of entity: EntityDescription,
        from sourceEntity: EntityDescription
    ) -> [Property?] {
        let match = RenamingMatch(
            destination: wanted, source: candidates, name: { $0.name }, renamingIdentifier: { $0.renamingIdentifier })
        for (property, claimants) in match.conflicts {
            fail(
                entity, claimants.first,
                "\(kind)s \(claimants.map { "'\($0.name)'" }.joined(separator: " and ")) of entity '\(entity.name)' both take source \(kind) '\(sourceEntity.name).\(property.name)' by their renaming identifiers"
            )
        }
        return match.sources
    }

    // MARK: Attributes

    private mutating func inferAttributes(
        _ entity: EntityDescription, from sourceEntity: EntityDescription, path: String
    ) -> [PropertyMapping] {
        let wanted = entity.attributes.filter { !$0.isTransient }
        let sources = matchRenamed(
            wanted, sourceEntity.attributes.filter { !$0.isTransient }, "attribute", of: entity, from: sourceEntity)
        var result: [PropertyMapping] = []
        for (attribute, sourceAttribute) in zip(wanted, sources) {
            let propertyPath = path + ".attributeMappings[\(result.count)]"
            guard let sourceAttribute = sourceAttribute else {
                if sourceEntity.relationship(named: attribute.renamingIdentifier ?? attribute.name) != nil {
                    // Core Data matches attributes with attributes: a relationship of that name
                    // is removed and the attribute is new (its default applies).
                    notes.append(
                        "'\(entity.name).\(attribute.name)' was a relationship of '\(sourceEntity.name)' and is now an attribute: as Core Data matches attributes only with attributes, the relationship's objects are not carried over and the attribute starts \(attribute.defaultValue.isNull ? "empty" : "at its default value")"
                    )
                }
                if !attribute.isOptional && attribute.defaultValue.isNull {
                    failUnlessRowsAllow(
                        entity, attribute, sourceEntity: sourceEntity, sourceProperty: nil,
                        "new attribute '\(entity.name).\(attribute.name)' is non-optional and has no default value, so the migrated instances would have none"
                    )
                }
                // New: no expression, the default value applies.
                result.append(
                    PropertyMapping(
                        name: attribute.name, valueExpressionText: nil, valueExpression: nil, userInfo: [:],
                        path: propertyPath))
                continue
            }
            if !InferredTypeChange.isAccepted(from: sourceAttribute.attributeType, to: attribute.attributeType) {
                fail(
                    entity, attribute,
                    "attribute '\(entity.name).\(attribute.name)' changes type from \(sourceAttribute.attributeType.rawValue) to \(attribute.attributeType.rawValue) (source attribute '\(sourceEntity.name).\(sourceAttribute.name)'); Core Data's inferred mapping converts only \(InferredTypeChange.acceptedText), and refuses this change: write a mapping model with a value expression (or a policy) that converts it"
                )
            } else if let note = InferredTypeChange.note(
                from: sourceAttribute.attributeType, to: attribute.attributeType)
            {
                notes.append(
                    "'\(entity.name).\(attribute.name)' changes type from \(sourceAttribute.attributeType.rawValue) to \(attribute.attributeType.rawValue), which Core Data's inferred mapping converts: \(note)"
                )
            }
            if sourceAttribute.isOptional && !attribute.isOptional && attribute.defaultValue.isNull {
                failUnlessRowsAllow(
                    entity, attribute, sourceEntity: sourceEntity, sourceProperty: sourceAttribute,
                    "attribute '\(entity.name).\(attribute.name)' becomes non-optional without a default value (source attribute '\(sourceEntity.name).\(sourceAttribute.name)' is optional)",
                    advice: "give it a default value")
            }
            result.append(
                PropertyMapping(
                    inferred: attribute.name, MappingInference.attributeExpression(sourceAttribute.name),
                    path: propertyPath))
        }
        return result
    }

    // MARK: Relationships

    private mutating func inferRelationships(
        _ entity: EntityDescription, from sourceEntity: EntityDescription,
        destinationOf: [ObjectIdentifier: EntityDescription], path: String
    ) -> [PropertyMapping] {
        let wanted = entity.relationships.filter { !$0.isTransient }
        let sources = matchRenamed(
            wanted, sourceEntity.relationships.filter { !$0.isTransient }, "relationship", of: entity,
            from: sourceEntity)
        var result: [PropertyMapping] = []
        for (relationship, sourceRelationship) in zip(wanted, sources) {
            let propertyPath = path + ".relationshipMappings[\(result.count)]"
            guard let sourceRelationship = sourceRelationship else {
                if sourceEntity.attribute(named: relationship.renamingIdentifier ?? relationship.name) != nil {
                    // Core Data matches relationships with relationships: the attribute of that
                    // name is removed and the relationship is new (empty).
                    notes.append(
                        "'\(entity.name).\(relationship.name)' was an attribute of '\(sourceEntity.name)' and is now a relationship: as Core Data matches relationships only with relationships, the attribute's values are not carried over and the relationship starts empty"
                    )
                }
                if !relationship.allowsEmpty {
                    failUnlessRowsAllow(
                        entity, relationship, sourceEntity: sourceEntity, sourceProperty: nil,
                        "new relationship '\(entity.name).\(relationship.name)' \(relationship.isToMany ? "has minCount \(relationship.minCount) and is non-optional" : "is non-optional"); the migrated instances would have no object for it"
                    )
                }
                result.append(
                    PropertyMapping(
                        name: relationship.name, valueExpressionText: nil, valueExpression: nil, userInfo: [:],
                        path: propertyPath))
                continue
            }
            if let sourceTarget = sourceRelationship.destinationEntity, let target = relationship.destinationEntity {
                if let mappedTarget = destinationOf[ObjectIdentifier(sourceTarget)] {
                    if !mappedTarget.isKind(of: target) {
                        noteRetargeted(
                            entity, relationship, sourceEntity: sourceEntity, sourceRelationship: sourceRelationship,
                            becomes: "'\(sourceTarget.name)', which becomes '\(mappedTarget.name)'")
                    }
                } else if !sourceTarget.isAbstract || sourceTarget.subentities.isEmpty {
                    // Core Data infers it: the objects it reached are not migrated (their entity is
                    // removed), so no destination instance answers for them and it starts empty.
                    let message =
                        "relationship '\(entity.name).\(relationship.name)' continues source relationship '\(sourceEntity.name).\(sourceRelationship.name)', whose destination entity '\(sourceTarget.name)' has no counterpart in the destination model, so it starts empty"
                    if relationship.allowsEmpty {
                        notes.append(
                            "'\(entity.name).\(relationship.name)' continues '\(sourceEntity.name).\(sourceRelationship.name)', whose destination entity '\(sourceTarget.name)' is removed: as in Core Data's inferred mapping, the objects it reached are not migrated and it starts empty"
                        )
                    } else {
                        failUnlessRowsAllow(
                            entity, relationship, sourceEntity: sourceEntity, sourceProperty: nil, message)
                    }
                    result.append(
                        PropertyMapping(
                            name: relationship.name, valueExpressionText: nil, valueExpression: nil, userInfo: [:],
                            path: propertyPath))
                    continue
                } else if !sourceTarget.selfAndDescendants.allSatisfy({ e in
                    e.isAbstract || (destinationOf[ObjectIdentifier(e)].map { $0.isKind(of: target) } ?? false)
                }) {
                    noteRetargeted(
                        entity, relationship, sourceEntity: sourceEntity, sourceRelationship: sourceRelationship,
                        becomes: "'\(sourceTarget.name)' and its sub-entities, which do not all become kinds of it")
                }
            }
            if sourceRelationship.allowsEmpty && !relationship.allowsEmpty {
                let becomes =
                    relationship.isToMany
                    ? "becomes non-optional with minCount \(relationship.minCount)" : "becomes non-optional"
                let was = sourceRelationship.isOptional ? "is optional" : "may be empty"
                let message =
                    "relationship '\(entity.name).\(relationship.name)' \(becomes) (source relationship '\(sourceEntity.name).\(sourceRelationship.name)' \(was)); a relationship has no default value to fill the instances where it is empty"
                if !relationship.isToMany && !sourceRelationship.isToMany {
                    failUnlessRowsAllow(
                        entity, relationship, sourceEntity: sourceEntity, sourceProperty: sourceRelationship, message)
                } else {
                    fail(entity, relationship, message)
                }
            }
            result.append(
                PropertyMapping(
                    inferred: relationship.name, MappingInference.relationshipExpression(sourceRelationship.name),
                    path: propertyPath))
        }
        return result
    }

    /// A relationship whose destination entity changed to one its old objects do not become kinds
    /// of. Core Data infers it: `destinationInstancesForSourceRelationshipNamed:sourceInstances:`
    /// answers only with the instances of entity mappings whose source entity is a kind of the
    /// source relationship's destination and whose destination entity is a kind of the destination
    /// relationship's (`NSMigrationManager`), so the objects of other entities are left out and
    /// the relationship keeps the rest (often none). A non-optional one is judged by the rows.
    private mutating func noteRetargeted(
        _ entity: EntityDescription, _ relationship: RelationshipDescription, sourceEntity: EntityDescription,
        sourceRelationship: RelationshipDescription, becomes: String
    ) {
        let target = relationship.destinationEntity?.name ?? "?"
        let message =
            "relationship '\(entity.name).\(relationship.name)' points to '\(target)', but source relationship '\(sourceEntity.name).\(sourceRelationship.name)' points to \(becomes), not a kind of '\(target)': as in Core Data's inferred mapping, only the objects that become kinds of '\(target)' are kept"
        if relationship.allowsEmpty {
            notes.append(message)
        } else {
            failUnlessRowsAllow(entity, relationship, sourceEntity: sourceEntity, sourceProperty: nil, message)
        }
    }

    // MARK: Judged by rows

    /// A destination property that becomes (or is added as) non-optional with nothing to fill it:
    /// Core Data infers the mapping anyway and refuses at save the instances left without a
    /// value (validation error 1570). With a store to ask, refused only when rows lack the value
    /// (`sourceProperty` nil: every row of `sourceEntity` would lack it), naming how many.
    private mutating func failUnlessRowsAllow(
        _ entity: EntityDescription, _ property: PropertyDescription,
        sourceEntity: EntityDescription, sourceProperty: PropertyDescription?,
        _ message: String, advice: String? = nil
    ) {
        let coreData =
            "Core Data would infer this step and refuse at save (validation error 1570, NSValidationMissingMandatoryPropertyError) every instance left without a value, so only a store in which none lacks it migrates"
        guard let rowCount else {
            fail(entity, property, message + "; " + coreData + (advice.map { "; " + $0 } ?? ""))
            return
        }
        let lacking: Int?
        do {
            lacking = try rowCount(sourceEntity, sourceProperty)
        } catch {
            let reason = (error as? MigrationError)?.message ?? "\(error)"
            fail(
                entity, property,
                message + "; the store's rows could not be counted to see whether any lacks a value: " + reason)
            return
        }
        guard let lacking else {
            fail(entity, property, message + "; " + coreData + (advice.map { "; " + $0 } ?? ""))
            return
        }
        let what = sourceProperty.map { "no value for '\(sourceEntity.name).\($0.name)'" } ?? "no value for it"
        if lacking == 0 {
            let rows =
                sourceProperty == nil
                ? "the store has no '\(sourceEntity.name)' instance"
                : "every '\(sourceEntity.name)' instance of the store has a value for '\(sourceEntity.name).\(sourceProperty?.name ?? "")'"
            notes.append(
                "'\(entity.name).\(property.name)' may be non-optional: \(rows), as Core Data's validation at save asks"
            )
            return
        }
        let instances =
            lacking == 1
            ? "1 '\(sourceEntity.name)' instance of the store has"
            : "\(lacking) '\(sourceEntity.name)' instances of the store have"
        fail(
            entity, property,
            message
                + "; \(instances) \(what), which Core Data's inferred migration would refuse at save with validation error 1570 (NSValidationMissingMandatoryPropertyError) on entity '\(entity.name)', property '\(property.name)'"
                + (advice.map { "; " + $0 + " or a mapping model" } ?? "; write a mapping model that gives them one"))
    }

    // MARK: Reporting

    /// Records a problem with `entity` (and `property`), with the path where the destination
    /// model's JSON declares it.
    private mutating func fail(_ entity: EntityDescription?, _ property: PropertyDescription?, _ message: String) {
        problems.append(MigrationError(.inferredMappingModel, message, path: modelPath(entity, property)))
    }

    private func modelPath(_ entity: EntityDescription?, _ property: PropertyDescription?) -> String? {
        let declaring = property?.entity ?? entity
        guard let owner = declaring, let i = destination.entities.firstIndex(where: { $0 === owner }) else {
            return nil
        }
        let entityPath = "$.entities[\(i)]"
        if let attribute = property as? AttributeDescription,
            let j = owner.ownAttributes.firstIndex(where: { $0 === attribute })
        {
            return entityPath + ".attributes[\(j)]"
        }
        if let relationship = property as? RelationshipDescription,
            let j = owner.ownRelationships.firstIndex(where: { $0 === relationship })
        {
            return entityPath + ".relationships[\(j)]"
        }
        return entityPath
    }

    /// A hash the mapping JSON can carry (32 bytes), or nil.
    static func recordable(_ hash: [UInt8]) -> [UInt8]? { hash.count == 32 ? hash : nil }

    static func label(_ model: ManagedObjectModel, _ fallback: String) -> String {
        let text = model.versionIdentifier ?? model.name ?? fallback
        return String(text.map { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "." ? $0 : "_" })
    }
}
