/// What policies call on the manager: making, associating and looking up instances, and applying
/// a mapping's property mappings (Core Data's defaults, callable as `super`).
extension MigrationManager {
    /// Makes a new instance of a destination entity (buffered; written with the next batch).
    public func createDestinationInstance(entityName: String) throws -> ManagedObject {
        try runningStore(destination: true, "createDestinationInstance(entityName:)").insertObject(
            entityName: entityName)
    }

    /// `createDestinationInstance(entityName:)` for a destination entity already looked up.
    package func createDestinationInstance(entity: EntityDescription) throws -> ManagedObject {
        try runningStore(destination: true, "createDestinationInstance(entityName:)").insertObject(entity: entity)
    }

    /// Records that `destination` was made from `source` by `mapping` (Core Data's
    /// `associateSourceInstance:withDestinationInstance:forEntityMapping:`).
    public func associate(
        sourceInstance source: ManagedObject, withDestinationInstance destination: ManagedObject,
        for mapping: EntityMapping
    ) throws {
        guard let associations = run.associations else {
            throw MigrationError(
                .invalidArgument,
                "associate(sourceInstance:withDestinationInstance:for:) is only available while a migration runs")
        }
        guard source.entity.model === sourceModel, destination.entity.model === destinationModel else {
            throw MigrationError(
                .invalidArgument,
                "associate: the source instance must come from the source store and the destination instance from the destination store"
            )
        }
        let id = mappingID(mapping)
        guard id >= 0 else {
            throw MigrationError(
                .invalidArgument, "associate: entity mapping '\(mapping.name)' is not part of this migration")
        }
        try associations.insert(mapping: id, source: source, destination: destination)
    }

    /// The destination instances made from `sourceInstances` by the named entity mapping of the current pass.
    public func destinationInstances(forEntityMappingName name: String, sourceInstances: [ManagedObject]) throws
        -> [ManagedObject]
    {
        let mapping = try entityMappingOfCurrentPass(named: name)
        return try lookUpDestinations(mappings: [mappingID(mapping)], sources: sourceInstances)
    }

    /// The source instances the named entity mapping of the current pass made `destinationInstances` from.
    public func sourceInstances(forEntityMappingName name: String, destinationInstances: [ManagedObject]) throws
        -> [ManagedObject]
    {
        let mapping = try entityMappingOfCurrentPass(named: name)
        guard let associations = run.associations, let source = sourceStore else { return [] }
        var result: [ManagedObject] = []
        for destination in destinationInstances {
            for (entityNumber, pk) in try associations.sources(mapping: mappingID(mapping), destination: destination) {
                result.append(
                    source.fault(entity: try AssociationTable.entity(entityNumber, in: sourceModel), primaryKey: pk))
            }
        }
        return result
    }

    /// Core Data's `destinationInstancesForSourceRelationshipNamed:sourceInstances:`: the destination
    /// instances of `sourceInstances` (the targets of source relationship `relationshipName`) made by
    /// every entity mapping of the pass whose source and destination entities match the targets of
    /// the source relationship and of the destination relationship being mapped (sub-entities included).
    public func destinationInstances(
        forSourceRelationshipNamed relationshipName: String, sourceInstances: [ManagedObject]
    ) throws -> [ManagedObject] {
        guard let mapping = currentEntityMapping, let sourceEntity = mapping.sourceEntity else {
            throw MigrationError(
                .invalidArgument,
                "destinationInstancesForSourceRelationshipNamed: needs a current entity mapping with a source entity")
        }
        guard let sourceRelationship = sourceEntity.relationship(named: relationshipName),
            let sourceTarget = sourceRelationship.destinationEntity
        else {
            throw MigrationError(
                .expressionEvaluation,
                "destinationInstancesForSourceRelationshipNamed: source entity '\(sourceEntity.name)' has no relationship '\(relationshipName)' (entity mapping '\(mapping.name)')"
            )
        }
        let destinationName = currentPropertyMapping?.name ?? relationshipName
        let ids = mappingIDs(
            from: sourceTarget, to: mapping.destinationEntity?.relationship(named: destinationName)?.destinationEntity)
        return try lookUpDestinations(mappings: ids, sources: sourceInstances)
    }

    /// The entity mappings of the current pass whose source entity matches `sourceTarget` (either
    /// way along the hierarchy) and whose destination entity is a kind of `destinationTarget`.
    func mappingIDs(from sourceTarget: EntityDescription, to destinationTarget: EntityDescription?) -> [Int] {
        var ids: [Int] = []
        for candidate in mappingModels[currentPass].entityMappings {
            guard let s = candidate.sourceEntity, let d = candidate.destinationEntity else { continue }
            guard s.isKind(of: sourceTarget) || sourceTarget.isKind(of: s) else { continue }
            if let target = destinationTarget, !(d.isKind(of: target)) { continue }
            ids.append(mappingID(candidate))
        }
        return ids
    }

    private func lookUpDestinations(mappings ids: [Int], sources: [ManagedObject]) throws -> [ManagedObject] {
        guard let associations = run.associations, let destination = destinationStore, !ids.isEmpty else { return [] }
        var result: [ManagedObject] = []
        var seen = Set<ObjectID>()
        for source in sources {
            guard source.entity.model === sourceModel else {
                throw MigrationError(
                    .invalidArgument,
                    "destination instances can only be looked up for instances of the source store, not for '\(source.objectID)'"
                )
            }
            for (entityNumber, pk) in try associations.destinations(mappings: ids, source: source) {
                let object = destination.fault(
                    entity: try AssociationTable.entity(entityNumber, in: destinationModel), primaryKey: pk)
                if seen.insert(object.objectID).inserted { result.append(object) }
            }
        }
        return result
    }

    func entityMappingOfCurrentPass(named name: String) throws -> EntityMapping {
        guard currentPass < mappingModels.count, let mapping = mappingModels[currentPass].entityMapping(named: name)
        else {
            throw MigrationError(
                .expressionEvaluation, "there is no entity mapping named '\(name)' in the current mapping model")
        }
        return mapping
    }

    // MARK: Property mappings

    /// Evaluates the mapping's attribute mappings with `$source` and `$destination` and sets the
    /// results (what Core Data's default `createDestinationInstances` does; a mapping without an
    /// expression leaves the destination's default value).
    ///
    /// A new instance of the row being migrated, with nothing set yet, may have its values computed
    /// only when first read, or written by SQL with the insert buffer (`DeferredAttributeMappings`):
    /// what it holds, and any error, are the same.
    public func applyAttributeMappings(of mapping: EntityMapping, source: ManagedObject?, destination: ManagedObject)
        throws
    {
        if let deferred = run.deferredAttributeMappings, let source = source, source === run.currentSource,
            deferred.takes(mapping, source: source, destination: destination), let store = destinationStore,
            store.deferValues(of: destination, sourceKey: source.objectID.primaryKey, writer: deferred)
        {
            return
        }
        let plan: AttributeMappingPlan
        if let last = run.attributeMappingPlan, last.fits(mapping, source?.entity, destination.entity) {
            plan = last
        } else {
            plan = AttributeMappingPlan(
                mapping: mapping, sourceEntity: source?.entity, destinationEntity: destination.entity)
            run.attributeMappingPlan = plan
        }
        try evaluateAttributeMappings(plan, of: mapping, source: source, destination: destination)
    }

    /// `applyAttributeMappings` with the mapping resolved.
    func evaluateAttributeMappings(
        _ plan: AttributeMappingPlan, of mapping: EntityMapping, source: ManagedObject?, destination: ManagedObject
    ) throws {
        for step in plan.steps {
            let property = step.property
            guard let attribute = step.attribute else {
                throw MigrationError(
                    .entityMigrationPolicy,
                    "entity mapping '\(mapping.name)': destination entity '\(destination.entity.name)' has no attribute '\(property.name)'",
                    path: property.path)
            }
            let value: Value
            if let sourceAttribute = step.sourceAttribute, let source = source {
                // `$source.attribute`, the commonest mapping: what the evaluator would answer, without it.
                // Transformable into transformable keeps the stored bytes (the declarative copy does too).
                value =
                    sourceAttribute.attributeType == .transformable && attribute.attributeType == .transformable
                    ? try source.storedValue(for: sourceAttribute) : try source.value(for: sourceAttribute)
            } else {
                value = try evaluate(
                    step.expression, property: property, mapping: mapping, source: source, destination: destination)
            }
            do {
                try destination.setValue(value, for: attribute)
            } catch let error as MigrationError {
                throw MigrationError(
                    .entityMigrationPolicy,
                    "entity mapping '\(mapping.name)', attribute '\(property.name)': \(error.message)",
                    path: property.path)
            }
        }
    }

    /// Evaluates the mapping's relationship mappings for a destination instance, with `$source` the
    /// source instance it was made from, and sets the results as Core Data does: a collection into a
    /// to-many is added to what is there; into an ordered one, its members end up last and in the
    /// collection's order (members the mapping of the inverse to-one added already move to their
    /// place: the source's order is kept, whichever mapping ran first); into a to-one, no item
    /// gives nil, one item gives the item, more is an error.
    ///
    /// - Throws: 134110 when the destination instance was made from more than one source instance
    ///   (Core Data's "more than one source for destination in default mapping policy"): which
    ///   source `$source` should be is then the policy's decision, in its own `createRelationships`.
    public func applyRelationshipMappings(of mapping: EntityMapping, destination: ManagedObject) throws {
        var source = run.currentSource
        if source == nil || run.currentDestination !== destination {
            let sources = try sourceInstances(forEntityMappingName: mapping.name, destinationInstances: [destination])
            if sources.count > 1 {
                throw MigrationError(
                    .migration,
                    "more than one source for destination in default mapping policy: entity mapping '\(mapping.name)' made \(destination.objectID) from \(sources.count) source instances; override createRelationships in the mapping's policy to set its relationships"
                )
            }
            source = sources.first
        }
        for property in mapping.relationshipMappings {
            guard let expression = property.valueExpression else { continue }
            guard let relationship = destination.entity.relationship(named: property.name) else {
                throw MigrationError(
                    .entityMigrationPolicy,
                    "entity mapping '\(mapping.name)': destination entity '\(destination.entity.name)' has no relationship '\(property.name)'",
                    path: property.path)
            }
            let value = try evaluate(
                expression, property: property, mapping: mapping, source: source, destination: destination)
            var objects: [ManagedObject] = []
            for element in value.elements {
                guard let object = element.object else {
                    throw MigrationError(
                        .entityMigrationPolicy,
                        "entity mapping '\(mapping.name)', relationship '\(property.name)': the expression gave a \(element.typeName) value, not instances",
                        path: property.path)
                }
                objects.append(object)
            }
            do {
                if relationship.isToMany {
                    if !objects.isEmpty {
                        try destination.add(objects, to: relationship)
                        // An ordered to-many takes the expression's order, whatever order its members joined in.
                        // (An owner made of several sources, `DistinctValueMapping`, collects its members as they come.)
                        if relationship.isOrdered, let store = destinationStore, destination.context === store,
                            try DistinctValueMapping.attribute(of: mapping) == nil
                        {
                            try store.placeLast(objects, of: destination, in: relationship)
                        }
                    }
                } else {
                    if objects.count > 1 {
                        throw MigrationError(
                            .entityMigrationPolicy,
                            "to-one relationship '\(destination.entity.name).\(relationship.name)' cannot take the \(objects.count) instances its expression gave (\(destination.objectID))"
                        )
                    }
                    try destination.setValue(objects.first.map { .object($0) } ?? .null, for: relationship)
                }
            } catch let error as MigrationError {
                throw MigrationError(
                    .entityMigrationPolicy,
                    "entity mapping '\(mapping.name)', relationship '\(property.name)': \(error.message)",
                    path: property.path)
            }
        }
    }

    /// Evaluates a value expression as the mapping's property mappings are evaluated.
    public func evaluate(
        _ expression: ValueExpression, property: PropertyMapping? = nil, mapping: EntityMapping? = nil,
        source: ManagedObject?, destination: ManagedObject?
    ) throws -> Value {
        let saved = (currentPropertyMapping, run.currentSource, run.currentDestination, currentEntityMapping)
        run.currentPropertyMapping = property
        run.currentSource = source
        run.currentDestination = destination
        if let mapping = mapping { run.currentEntityMapping = mapping }
        defer {
            (run.currentPropertyMapping, run.currentSource, run.currentDestination, run.currentEntityMapping) = saved
        }
        // A host function may evaluate again while an evaluation runs: that one gets its own evaluator.
        let shared = run.evaluationDepth == 0 ? run.evaluator : nil
        run.evaluationDepth += 1
        defer { run.evaluationDepth -= 1 }
        do {
            return try (shared ?? ExpressionEvaluator(environment: self)).evaluate(
                expression, object: source.map { .object($0) } ?? .null)
        } catch let error as MigrationError where error.code == .expressionEvaluation {
            let owner = mapping.map { "entity mapping '\($0.name)'" } ?? "expression"
            let target = property.map { ", property '\($0.name)'" } ?? ""
            throw MigrationError(
                .expressionEvaluation, "\(owner)\(target): \(error.message) in '\(expression)'", path: property?.path,
                offset: error.offset, byteOffset: error.byteOffset)
        }
    }

    /// Parses and evaluates an expression text with the current instances.
    public func evaluate(_ text: String, source: ManagedObject?, destination: ManagedObject? = nil) throws -> Value {
        return try evaluate(
            try ExpressionParser.parseExpression(text), mapping: currentEntityMapping, source: source,
            destination: destination)
    }
}

extension Array {
    /// The element at `index`, or nil when it is out of range.
    func element(at index: Int) -> Element? { index >= 0 && index < count ? self[index] : nil }
}
