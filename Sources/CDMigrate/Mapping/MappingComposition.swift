/// Two consecutive mapping models (A → B, then B → C) composed into one mapping model from A to C
/// that gives the same store as running them one after the other: each destination property of C
/// takes what B's mapping put into the B property C's mapping reads, so renames follow renames,
/// and a property B does not carry (dropped, or added with a default) is not carried.
///
/// Composition is conservative: it accepts only what it can show gives the identical result, and
/// otherwise says why not (`NotComposable`), so the steps run one after the other. Accepted:
/// mapping models without policies and without user info (so without declared intended losses),
/// entity mappings of type add, remove, copy and transform whose source expression fetches every
/// instance of their source entity, attribute mappings that read one source attribute
/// (`$source.name` or Core Data's inferred `FUNCTION($source, "valueForKey:", "name")`) or none,
/// and relationship mappings in Core Data's inferred form
/// (`destinationInstancesForSourceRelationshipNamed:sourceInstances:`) or Xcode's
/// (`destinationInstancesForEntityMappingNamed:sourceInstances:` over one source relationship,
/// naming the one entity mapping that takes its targets) or none; models without
/// entity inheritance. Refused, besides: an attribute converted to another type in both steps, an
/// attribute added in B whose default is not C's, derived attributes and validation rules (non-
/// optional, bounds, counts, uniqueness) of B that C does not check the same way (the step-by-step
/// run validates B's store; the composed one only C's).
///
/// Core Data counterpart: none (Core Data runs each stage of `NSStagedMigrationManager` on its own).
package enum MappingComposition {
    /// Why two mapping models cannot be composed exactly.
    package struct NotComposable: Error {
        package let reason: String
    }

    /// The composition of `first` (bound to `a` → `b`) and `second` (bound to `b` → `c`), bound to `a` → `c`.
    ///
    /// - Throws: `NotComposable` naming the entity or property at fault; `MigrationError` if the
    ///   composed model does not validate against `a` and `c`.
    package static func compose(
        _ first: MappingModel, _ second: MappingModel, a: ManagedObjectModel, b: ManagedObjectModel,
        c: ManagedObjectModel
    ) throws -> MappingModel {
        for model in [a, b, c] {
            if let entity = model.entities.first(where: { $0.parent != nil || $0.isAbstract }) {
                throw NotComposable(
                    reason:
                        "entity '\(entity.name)' of \(label(model)) is part of an entity hierarchy, which is not composed"
                )
            }
        }
        for model in [first, second] { try checkComposable(model) }
        var mappings: [EntityMapping] = []
        var removed: Set<String> = []
        var taken: Set<String> = []
        var followed: [Followed] = []
        for late in second.entityMappings {
            switch late.mappingType {
            case .add:
                guard let name = late.destinationEntityName, let entity = c.entity(named: name) else { continue }
                if late.attributeMappings.contains(where: { $0.valueExpression != nil })
                    || late.relationshipMappings.contains(where: { $0.valueExpression != nil })
                {
                    throw NotComposable(reason: "add mapping '\(late.name)' gives values")
                }
                mappings.append(addMapping(entity, path: "$.entityMappings[\(mappings.count)]"))
            case .remove:
                guard let name = late.sourceEntityName else { continue }
                let early = try earlyMapping(into: name, of: first, for: late)
                taken.insert(early.name)
                if let source = early.sourceEntityName { removed.insert(source) }
            case .copy, .transform:
                guard let middleName = late.sourceEntityName, let middle = b.entity(named: middleName),
                    let destinationName = late.destinationEntityName, let destination = c.entity(named: destinationName)
                else { throw NotComposable(reason: "entity mapping '\(late.name)' names no entities") }
                let early = try earlyMapping(into: middleName, of: first, for: late)
                taken.insert(early.name)
                guard early.mappingType != .add, let sourceName = early.sourceEntityName,
                    let source = a.entity(named: sourceName)
                else {
                    // B's entity is new, so empty: C's gets nothing either.
                    mappings.append(addMapping(destination, path: "$.entityMappings[\(mappings.count)]"))
                    continue
                }
                mappings.append(
                    try composeEntity(
                        early, late, source: source, middle: middle, destination: destination,
                        path: "$.entityMappings[\(mappings.count)]", followed: &followed))
            case .custom, .undefined:
                throw NotComposable(reason: "entity mapping '\(late.name)' is of type \(late.mappingType.rawValue)")
            }
        }
        for early in first.entityMappings where !taken.contains(early.name) {
            switch early.mappingType {
            case .remove:
                if let source = early.sourceEntityName { removed.insert(source) }
            case .add:
                continue
            default:
                throw NotComposable(
                    reason:
                        "what entity mapping '\(early.name)' makes of \(label(a)) is taken by no entity mapping of the next step"
                )
            }
        }
        for entity in a.entities where removed.contains(entity.name) {
            mappings.append(
                EntityMapping(
                    name: "IEM_Remove_" + entity.name, mappingType: .remove, sourceEntityName: entity.name,
                    destinationEntityName: nil, sourceExpressionText: nil, sourceExpression: nil,
                    attributeMappings: [], relationshipMappings: [], entityMigrationPolicyClassName: nil,
                    userInfo: [:], sourceEntityVersionHash: MappingInference.recordable(entity.versionHash),
                    destinationEntityVersionHash: nil, sourceEntitySnapshot: EntityMapping.snapshot(of: entity),
                    destinationEntitySnapshot: nil, path: "$.entityMappings[\(mappings.count)]"))
        }
        // A written mapping model's remove mappings declare their losses intended, an inferred
        // one's do not: the composed model can be only one of the two.
        if first.isInferred != second.isInferred,
            let removal = (first.entityMappings + second.entityMappings).first(where: { $0.mappingType == .remove })
        {
            throw NotComposable(
                reason:
                    "remove mapping '\(removal.name)' joins an inferred step and a written mapping model, whose removals the loss report counts differently"
            )
        }
        // A relationship followed by its source relationship's name finds the instances of the one
        // entity mapping that takes the relationship's target entity: it must be one in each step
        // and in the composed model, so both runs find the same ones.
        // A step that names the entity mapping (`destinationInstancesForEntityMappingNamed:`) must
        // name that one, so following the relationship by name finds the same instances.
        func copies(_ list: [EntityMapping], from entity: String?) -> [EntityMapping] {
            list.filter { ($0.mappingType == .copy || $0.mappingType == .transform) && $0.sourceEntityName == entity }
        }
        for link in followed {
            let target = a.entity(named: link.sourceEntity)?.relationship(named: link.sourceRelationship)?
                .destinationEntityName
            let middleTarget = b.entity(named: link.middleEntity)?.relationship(named: link.middleRelationship)?
                .destinationEntityName
            let early = copies(first.entityMappings, from: target)
            let late = copies(second.entityMappings, from: middleTarget)
            guard early.count == 1, late.count == 1, copies(mappings, from: target).count == 1,
                early.first?.destinationEntityName == middleTarget,
                link.earlyMapping == nil || link.earlyMapping == early.first?.name,
                link.lateMapping == nil || link.lateMapping == late.first?.name
            else {
                throw NotComposable(
                    reason:
                        "relationship '\(link.middleEntity).\(link.middleRelationship)' reaches instances that no single entity mapping makes in every step"
                )
            }
        }
        let name =
            "Fused_" + MappingInference.label(a, "source") + "_to_" + MappingInference.label(c, "destination")
        let composed = MappingModel(name: name, entityMappings: mappings)
        let bound = try composed.validate(sourceModel: a, destinationModel: c)
        bound.isInferred = first.isInferred && second.isInferred
        return bound
    }

    // MARK: Entities

    private static func label(_ model: ManagedObjectModel) -> String {
        "'\(model.versionIdentifier ?? model.name ?? "model")'"
    }

    /// The mapping models' parts that composition does not handle.
    private static func checkComposable(_ model: MappingModel) throws {
        for mapping in model.entityMappings {
            if let policy = mapping.entityMigrationPolicyClassName {
                throw NotComposable(reason: "entity mapping '\(mapping.name)' runs policy '\(policy)'")
            }
            if !mapping.userInfo.isEmpty {
                throw NotComposable(
                    reason: "entity mapping '\(mapping.name)' has user info (intended losses or values for expressions)"
                )
            }
            if let expression = mapping.sourceExpression {
                guard expression.entityName == nil || expression.entityName == mapping.sourceEntityName,
                    expression.predicate == .constant(true)
                else {
                    throw NotComposable(
                        reason: "entity mapping '\(mapping.name)' filters its source instances (\(expression))")
                }
            } else if mapping.sourceExpressionText != nil || mapping.mappingType == .copy
                || mapping.mappingType == .transform
            {
                throw NotComposable(reason: "entity mapping '\(mapping.name)' has no source expression")
            }
            for property in mapping.attributeMappings + mapping.relationshipMappings where !property.userInfo.isEmpty {
                throw NotComposable(
                    reason: "property mapping '\(mapping.name).\(property.name)' has user info")
            }
        }
    }

    /// The one entity mapping of `first` whose destination is `middle` (what `late` reads).
    private static func earlyMapping(into middle: String, of first: MappingModel, for late: EntityMapping) throws
        -> EntityMapping
    {
        let candidates = first.entityMappings.filter { $0.destinationEntityName == middle }
        guard candidates.count == 1, let early = candidates.first else {
            throw NotComposable(
                reason:
                    "entity '\(middle)', which entity mapping '\(late.name)' reads, is made by \(candidates.count) entity mappings of the step before"
            )
        }
        return early
    }

    private static func addMapping(_ entity: EntityDescription, path: String) -> EntityMapping {
        EntityMapping(
            name: "IEM_Add_" + entity.name, mappingType: .add, sourceEntityName: nil,
            destinationEntityName: entity.name, sourceExpressionText: nil, sourceExpression: nil,
            attributeMappings: [], relationshipMappings: [], entityMigrationPolicyClassName: nil, userInfo: [:],
            sourceEntityVersionHash: nil,
            destinationEntityVersionHash: MappingInference.recordable(entity.versionHash),
            sourceEntitySnapshot: nil, destinationEntitySnapshot: EntityMapping.snapshot(of: entity), path: path)
    }

    /// A relationship the composed model follows by name: through A's `sourceRelationship`, what
    /// B's `middleRelationship` was.
    private struct Followed {
        var sourceEntity: String
        var sourceRelationship: String
        var middleEntity: String
        var middleRelationship: String
        /// The entity mappings the steps name (`destinationInstancesForEntityMappingNamed:`), if they do.
        var earlyMapping: String?
        var lateMapping: String?
    }

    private static func composeEntity(
        _ early: EntityMapping, _ late: EntityMapping, source: EntityDescription, middle: EntityDescription,
        destination: EntityDescription, path: String, followed: inout [Followed]
    ) throws -> EntityMapping {
        var attributes: [PropertyMapping] = []
        var carried: [String: String] = [:]  // B attribute → C attribute
        for attribute in destination.attributes where !attribute.isTransient {
            let propertyPath = path + ".attributeMappings[\(attributes.count)]"
            let read = try late.attributeMapping(named: attribute.name).flatMap { try attributeRead($0, in: late) }
            var sourceName: String?
            if let read = read {
                guard let between = middle.attribute(named: read) else {
                    throw NotComposable(
                        reason: "'\(late.name).\(attribute.name)' reads no attribute of '\(middle.name)'")
                }
                carried[read] = attribute.name
                sourceName = try composeAttribute(
                    early: early, between: between, into: attribute, source: source, lateMapping: late)
            }
            attributes.append(
                PropertyMapping(
                    name: attribute.name, valueExpressionText: sourceName.map(MappingInference.attributeExpression),
                    valueExpression: try sourceName.map {
                        try ExpressionParser.parseExpression(MappingInference.attributeExpression($0))
                    }, userInfo: [:], path: propertyPath))
        }
        // What B validates and C does not check the same way.
        for between in middle.attributes where !between.isTransient && carried[between.name] == nil {
            if between.derivationExpression != nil || hasRules(between) {
                throw NotComposable(
                    reason:
                        "'\(middle.name).\(between.name)' has validation rules or is derived, and the next step does not carry it"
                )
            }
        }
        for constraint in middle.uniquenessConstraints {
            let mapped = constraint.map { carried[$0] ?? "" }
            if !destination.uniquenessConstraints.contains(mapped) {
                throw NotComposable(
                    reason:
                        "'\(middle.name)' has uniqueness constraint \(constraint) that '\(destination.name)' does not keep"
                )
            }
        }
        var relationships: [PropertyMapping] = []
        var carriedRelationships: Set<String> = []
        for relationship in destination.relationships where !relationship.isTransient {
            let propertyPath = path + ".relationshipMappings[\(relationships.count)]"
            var sourceName: String?
            if let read = try late.relationshipMapping(named: relationship.name).flatMap({
                try relationshipRead($0, in: late)
            }) {
                guard let between = middle.relationship(named: read) else {
                    throw NotComposable(
                        reason: "'\(late.name).\(relationship.name)' reads no relationship of '\(middle.name)'")
                }
                carriedRelationships.insert(read)
                if hasRules(between) && !sameRules(between, relationship) {
                    throw NotComposable(
                        reason:
                            "'\(middle.name).\(between.name)' has counts or optionality that '\(destination.name).\(relationship.name)' does not have"
                    )
                }
                if let before = try early.relationshipMapping(named: read).flatMap({
                    try relationshipRead($0, in: early)
                }) {
                    guard source.relationship(named: before) != nil else {
                        throw NotComposable(
                            reason: "'\(early.name).\(read)' reads no relationship of '\(source.name)'")
                    }
                    sourceName = before
                    followed.append(
                        Followed(
                            sourceEntity: source.name, sourceRelationship: before, middleEntity: middle.name,
                            middleRelationship: read,
                            earlyMapping: namedLookup(early.relationshipMapping(named: read)?.valueExpression)?.mapping,
                            lateMapping: namedLookup(
                                late.relationshipMapping(named: relationship.name)?.valueExpression)?
                                .mapping))
                }
            }
            relationships.append(
                PropertyMapping(
                    name: relationship.name,
                    valueExpressionText: sourceName.map(MappingInference.relationshipExpression),
                    valueExpression: try sourceName.map {
                        try ExpressionParser.parseExpression(MappingInference.relationshipExpression($0))
                    }, userInfo: [:], path: propertyPath))
        }
        for between in middle.relationships where !between.isTransient && !carriedRelationships.contains(between.name) {
            if hasRules(between) {
                throw NotComposable(
                    reason:
                        "'\(middle.name).\(between.name)' has counts or is non-optional, and the next step does not carry it"
                )
            }
        }
        let unchanged = source.name == destination.name && source.versionHash == destination.versionHash
        let text = MappingInference.sourceExpression(for: source)
        return EntityMapping(
            name: (unchanged ? "IEM_Copy_" : "IEM_Transform_") + destination.name,
            mappingType: unchanged ? .copy : .transform, sourceEntityName: source.name,
            destinationEntityName: destination.name, sourceExpressionText: text,
            sourceExpression: try SourceExpression.parse(text), attributeMappings: attributes,
            relationshipMappings: relationships, entityMigrationPolicyClassName: nil, userInfo: [:],
            sourceEntityVersionHash: MappingInference.recordable(source.versionHash),
            destinationEntityVersionHash: MappingInference.recordable(destination.versionHash),
            sourceEntitySnapshot: EntityMapping.snapshot(of: source),
            destinationEntitySnapshot: EntityMapping.snapshot(of: destination), path: path)
    }

    /// The source attribute of A that C's `attribute` takes through B's `between`, or nil when
    /// B's attribute starts at its default (which must then be C's).
    private static func composeAttribute(
        early: EntityMapping, between: AttributeDescription, into attribute: AttributeDescription,
        source: EntityDescription, lateMapping: EntityMapping
    ) throws -> String? {
        let what = "'\(lateMapping.name).\(attribute.name)'"
        if between.derivationExpression != nil {
            throw NotComposable(reason: "\(what) reads derived attribute '\(between.name)'")
        }
        if hasRules(between) && !(sameRules(between, attribute) && between.attributeType == attribute.attributeType) {
            throw NotComposable(
                reason: "\(what) reads '\(between.name)', whose validation rules are not the same in both models")
        }
        guard let read = try early.attributeMapping(named: between.name).flatMap({ try attributeRead($0, in: early) })
        else {
            guard between.defaultValue == attribute.defaultValue, between.attributeType == attribute.attributeType
            else {
                throw NotComposable(
                    reason: "\(what) reads '\(between.name)', which starts at a default value that is not its own")
            }
            return nil
        }
        guard let origin = source.attribute(named: read) else {
            throw NotComposable(reason: "'\(early.name).\(between.name)' reads no attribute of '\(source.name)'")
        }
        if origin.attributeType != between.attributeType && between.attributeType != attribute.attributeType {
            throw NotComposable(
                reason:
                    "\(what) changes type twice (\(origin.attributeType.rawValue) → \(between.attributeType.rawValue) → \(attribute.attributeType.rawValue))"
            )
        }
        return read
    }

    private static func hasRules(_ attribute: AttributeDescription) -> Bool {
        !attribute.isOptional || attribute.minValue != nil || attribute.maxValue != nil
    }

    private static func sameRules(_ a: AttributeDescription, _ b: AttributeDescription) -> Bool {
        a.isOptional == b.isOptional && a.minValue == b.minValue && a.maxValue == b.maxValue
    }

    private static func hasRules(_ relationship: RelationshipDescription) -> Bool {
        !relationship.isOptional || relationship.minCount != 0 || relationship.maxCount != 0
    }

    private static func sameRules(_ a: RelationshipDescription, _ b: RelationshipDescription) -> Bool {
        a.isOptional == b.isOptional && a.minCount == b.minCount && a.maxCount == b.maxCount
            && a.isToMany == b.isToMany
    }

    // MARK: Expressions

    /// The source attribute an attribute mapping reads, nil for none; throws for any other expression.
    private static func attributeRead(_ mapping: PropertyMapping, in entityMapping: EntityMapping) throws -> String? {
        guard let expression = mapping.valueExpression else { return nil }
        if let name = readName(expression) { return name }
        throw NotComposable(
            reason:
                "'\(entityMapping.name).\(mapping.name)' computes its value (\(expression)), which is not composed")
    }

    /// The source relationship a relationship mapping follows (Core Data's inferred form), nil for none.
    private static func relationshipRead(_ mapping: PropertyMapping, in entityMapping: EntityMapping) throws
        -> String?
    {
        guard let expression = mapping.valueExpression else { return nil }
        if case .function(
            .variable("manager"), "destinationInstancesForSourceRelationshipNamed:sourceInstances:", let args) =
            expression, args.count == 2, case .constant(.string(let name)) = args[0], readName(args[1]) == name
        {
            return name
        }
        if let (_, relationship) = namedLookup(expression) { return relationship }
        throw NotComposable(
            reason:
                "'\(entityMapping.name).\(mapping.name)' finds its instances with \(expression), which is not composed"
        )
    }

    /// For `FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "M",
    /// $source.r)`: the entity mapping `M` and the relationship `r`.
    private static func namedLookup(_ expression: ValueExpression?) -> (mapping: String, relationship: String)? {
        guard
            case .function(
                .variable("manager"), "destinationInstancesForEntityMappingNamed:sourceInstances:", let args)? =
                expression, args.count == 2, case .constant(.string(let mapping)) = args[0],
            let relationship = readName(args[1])
        else { return nil }
        return (mapping, relationship)
    }

    /// `x` for `$source.x` or `FUNCTION($source, "valueForKey:", "x")`.
    private static func readName(_ expression: ValueExpression) -> String? {
        switch expression {
        case .keyPath(.variable("source"), let keys) where keys.count == 1: return keys.first
        case .function(.variable("source"), "valueForKey:", let args) where args.count == 1:
            if case .constant(.string(let name)) = args.first { return name }
            return nil
        default: return nil
        }
    }
}
