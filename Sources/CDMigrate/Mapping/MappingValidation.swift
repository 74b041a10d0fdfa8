/// Checks a mapping model against its source and destination models before anything runs.
///
/// Where Core Data says only "Mismatch between mapping and source/destination models", the errors
/// here name the entity mapping, the property and, when the mapping recorded the entity's version
/// hash and properties, what changed since it was written.
extension MappingModel {
    /// Checks the mapping against a source and a destination model and returns a copy whose
    /// entity mappings are bound to those models' entities (with the warnings of the check).
    /// The mapping itself is not changed, so it may be checked against other models, or shared
    /// by migrations between different models (NSMigrationManager's init does this check).
    ///
    /// - Parameters:
    ///   - sourceModel: the model of the stores the mapping reads.
    ///   - destinationModel: the model of the stores the mapping writes.
    /// - Returns: the bound copy, which `MigrationManager` runs.
    /// - Throws: `MigrationError` `.invalidMapping` with every problem as an underlying error.
    @discardableResult
    public func validate(sourceModel: ManagedObjectModel, destinationModel: ManagedObjectModel) throws -> MappingModel {
        var problems: [MigrationError] = []
        var warnings: [String] = []
        var bound: [EntityMapping] = []
        var names: [String: String] = [:]
        for mapping in entityMappings {
            if let earlier = names[mapping.name] {
                problems.append(
                    MigrationError(
                        .invalidMapping, "duplicate entity mapping name '\(mapping.name)' (also at \(earlier))",
                        path: mapping.path + ".name"))
            }
            names[mapping.name] = mapping.path
        }
        for mapping in entityMappings {
            let (boundMapping, mappingProblems) = validate(
                mapping, sourceModel: sourceModel, destinationModel: destinationModel, warnings: &warnings)
            bound.append(boundMapping)
            problems += mappingProblems
        }
        if let error = MigrationError.collecting(
            problems, code: .invalidMapping,
            summary: "the mapping model \(name.map { "'\($0)' " } ?? "")does not fit its models")
        {
            throw error
        }
        // The reader's warnings stay; a copy validated again does not repeat them.
        let validated = MappingModel(
            name: name, entityMappings: bound, warnings: self.warnings + warnings.filter { !self.warnings.contains($0) }
        )
        validated.isInferred = isInferred
        return validated
    }

    private func validate(
        _ unbound: EntityMapping, sourceModel: ManagedObjectModel, destinationModel: ManagedObjectModel,
        warnings: inout [String]
    ) -> (EntityMapping, [MigrationError]) {
        var problems: [MigrationError] = []
        let mapping = unbound.binding(
            sourceEntity: unbound.sourceEntityName.flatMap { sourceModel.entity(named: $0) },
            destinationEntity: unbound.destinationEntityName.flatMap { destinationModel.entity(named: $0) })
        if let name = mapping.sourceEntityName {
            if let entity = mapping.sourceEntity {
                if let problem = MappingModel.versionProblem(
                    mapping: mapping, recorded: mapping.sourceEntityVersionHash, snapshot: mapping.sourceEntitySnapshot,
                    entity: entity, side: "source")
                {
                    problems.append(
                        MigrationError(.invalidMapping, problem, path: mapping.path + ".sourceEntityVersionHash"))
                }
            } else {
                problems.append(
                    MigrationError(
                        .invalidMapping,
                        "entity mapping '\(mapping.name)': source entity '\(name)' is not in the source model\(SpellingSuggestion.hint(name, among: sourceModel.entities.map { $0.name }))",
                        path: mapping.path + ".sourceEntity"))
            }
        }
        if let name = mapping.destinationEntityName {
            if let entity = mapping.destinationEntity {
                if entity.isAbstract && mapping.sourceExpression != nil && mapping.entityMigrationPolicyClassName == nil
                {
                    problems.append(
                        MigrationError(
                            .invalidMapping,
                            "entity mapping '\(mapping.name)': destination entity '\(name)' is abstract, so the default policy cannot create instances of it",
                            path: mapping.path + ".destinationEntity"))
                }
                if let problem = MappingModel.versionProblem(
                    mapping: mapping, recorded: mapping.destinationEntityVersionHash,
                    snapshot: mapping.destinationEntitySnapshot, entity: entity, side: "destination")
                {
                    problems.append(
                        MigrationError(.invalidMapping, problem, path: mapping.path + ".destinationEntityVersionHash"))
                }
            } else {
                problems.append(
                    MigrationError(
                        .invalidMapping,
                        "entity mapping '\(mapping.name)': destination entity '\(name)' is not in the destination model\(SpellingSuggestion.hint(name, among: destinationModel.entities.map { $0.name }))",
                        path: mapping.path + ".destinationEntity"))
            }
        }
        if let entity = mapping.sourceEntity, let predicate = mapping.sourceExpression?.predicate,
            let problem = KeyPathCheck(entity: entity).problem(in: predicate)
        {
            let key =
                mapping.sourceExpressionText.map { $0.hasPrefix("FETCH") } == true ? "sourceExpression" : "predicate"
            problems.append(
                MigrationError(
                    .invalidMapping,
                    "entity mapping '\(mapping.name)': the source predicate '\(predicate)' names a key that does not exist: \(problem)",
                    path: mapping.path + "." + key))
        }
        if mapping.sourceExpression == nil, mapping.sourceEntityName != nil, mapping.mappingType != .add,
            mapping.mappingType != .remove
        {
            warnings.append(
                "entity mapping '\(mapping.name)' has a source entity but no source expression or predicate, so it takes no source instances (as in Core Data); add \"predicate\": \"TRUEPREDICATE\" to take them all"
            )
        }
        if let source = mapping.sourceEntity, let destination = mapping.destinationEntity {
            warnUnfilled(mapping, source: source, destination: destination, warnings: &warnings)
        }
        if let destination = mapping.destinationEntity {
            problems += mapping.attributeMappings.compactMap {
                unknownDestinationProperty($0, of: mapping, destination: destination, isAttribute: true)
            }
            problems += mapping.relationshipMappings.compactMap {
                unknownDestinationProperty($0, of: mapping, destination: destination, isAttribute: false)
            }
        } else if !mapping.attributeMappings.isEmpty || !mapping.relationshipMappings.isEmpty {
            if mapping.destinationEntityName == nil {
                problems.append(
                    MigrationError(
                        .invalidMapping,
                        "entity mapping '\(mapping.name)' has property mappings but no destination entity",
                        path: mapping.path + ".destinationEntity"))
            }
        }
        problems += IntendedLosses.problems(of: mapping)
        if mapping.sourceEntity != nil || mapping.sourceEntityName == nil {
            do { _ = try DistinctValueMapping.attribute(of: mapping) } catch let error as MigrationError {
                problems.append(error)
            } catch {}
        }
        for property in mapping.attributeMappings + mapping.relationshipMappings {
            guard let expression = property.valueExpression else { continue }
            problems += ExpressionChecker(mappingModel: self, mapping: mapping, property: property).check(expression)
        }
        return (mapping, problems)
    }

    /// A silent trap: a destination attribute or relationship no property mapping fills while the
    /// source entity has a property of the same name, so its value is lost without a word (Core
    /// Data's mapping editor leaves such a property out when it was added after the mapping was
    /// made). Transient properties are left alone; so are mappings with a custom policy class,
    /// which may fill the property itself, and relationships whose inverse some entity mapping
    /// fills (setting one side sets the other, as in Core Data).
    func warnUnfilled(
        _ mapping: EntityMapping, source: EntityDescription, destination: EntityDescription, warnings: inout [String]
    ) {
        guard mapping.entityMigrationPolicyClassName == nil, mapping.sourceExpression != nil else { return }
        let attributes = Set(mapping.attributeMappings.map { $0.name })
        let relationships = Set(mapping.relationshipMappings.map { $0.name })
        for attribute in destination.attributes where !attribute.isTransient && !attributes.contains(attribute.name) {
            if let property = source.property(named: attribute.name), !property.isTransient {
                warnings.append(
                    "entity mapping '\(mapping.name)': destination attribute '\(attribute.name)' is filled by no mapping while the source entity '\(source.name)' has a property of that name"
                )
            }
        }
        for relationship in destination.relationships where !relationships.contains(relationship.name) {
            if let inverse = relationship.inverseName,
                entityMappings.contains(where: {
                    $0.relationshipMappings.contains { $0.name == inverse && $0.valueExpression != nil }
                })
            {
                continue
            }
            if let property = source.property(named: relationship.name), !property.isTransient {
                warnings.append(
                    "entity mapping '\(mapping.name)': destination relationship '\(relationship.name)' is filled by no mapping while the source entity '\(source.name)' has a property of that name"
                )
            }
        }
    }

    /// Why a recorded version hash no longer matches the model's entity, or nil when it does.
    static func versionProblem(
        mapping: EntityMapping, recorded: [UInt8]?, snapshot: [String: String]?, entity: EntityDescription, side: String
    ) -> String? {
        guard let recorded = recorded, recorded != entity.versionHash else { return nil }
        var text = "entity mapping '\(mapping.name)' was written for another version of \(side) entity '\(entity.name)'"
        guard let snapshot = snapshot else {
            return text
                + " (its version hash differs; record \(side)EntityProperties in the mapping to see what changed)"
        }
        let now = EntityMapping.snapshot(of: entity)
        var changes: [String] = []
        for (name, then) in snapshot.sorted(by: { $0.key < $1.key }) {
            let kind = then.hasPrefix("→") ? "relationship" : "attribute"
            if let current = now[name] {
                if current != then { changes.append("\(kind) '\(name)' changed from \(then) to \(current)") }
            } else {
                changes.append("\(kind) '\(name)' removed")
            }
        }
        for (name, current) in now.sorted(by: { $0.key < $1.key }) where snapshot[name] == nil {
            changes.append("\(current.hasPrefix("→") ? "relationship" : "attribute") '\(name)' added")
        }
        if changes.isEmpty {
            changes.append(
                "no property changed; the entity's own settings (abstract, parent, optionality or hash modifier) did")
        }
        text += ": " + changes.joined(separator: "; ")
        return text
    }
}

/// A property mapping naming no property of its kind in the destination entity: the problem, with
/// a hint (a property of the other kind by that name, or a name spelled nearly alike).
private func unknownDestinationProperty(
    _ property: PropertyMapping, of mapping: EntityMapping, destination: EntityDescription, isAttribute: Bool
) -> MigrationError? {
    let name = property.name
    let isAnAttribute = destination.attribute(named: name) != nil
    let isARelationship = destination.relationship(named: name) != nil
    guard !(isAttribute ? isAnAttribute : isARelationship) else { return nil }
    let hint =
        (isAttribute ? isARelationship : isAnAttribute)
        ? (isAttribute
            ? " ('\(name)' is a relationship: map it under relationshipMappings)"
            : " ('\(name)' is an attribute: map it under attributeMappings)")
        : SpellingSuggestion.hint(
            name,
            among: isAttribute ? destination.attributes.map { $0.name } : destination.relationships.map { $0.name })
    return MigrationError(
        .invalidMapping,
        "entity mapping '\(mapping.name)': destination entity '\(destination.name)' has no \(isAttribute ? "attribute" : "relationship") '\(name)'\(hint)",
        path: property.path)
}
