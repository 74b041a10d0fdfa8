/// Stage 2 of a declarative entity mapping as SQL, for the common shape of a relationship
/// mapping: a to-one destination relationship kept in a column of its own table, set from the
/// destination instances another mapping made of the source's to-one target —
/// `FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "M", $source.rel)` or
/// `FUNCTION($manager, "destinationInstancesForSourceRelationshipNamed:sourceInstances:", "rel", FUNCTION($source, "valueForKey:", "rel"))`.
/// One `UPDATE` looks the targets up in the association table for every destination row at once
/// (or, where both mappings kept their source keys, takes the source's foreign key as it is).
/// A to-many whose inverse to-one the target mapping sets from this mapping's instances needs
/// nothing (`isSetByInverse`); other to-manys of the standard forms are `DeclarativeToManySQL`.
/// Anything else — targets with sub-entities, sources made into several destinations, destinations
/// made of several sources — runs per instance, with the same result.
enum DeclarativeRelationshipSQL {
    /// The statements for every relationship mapping of `mapping`, or nil when one of them needs
    /// the per-instance path. The source is attached. Temporary tables the plan made are dropped
    /// by its last statements, or here when it gives up.
    static func plan(
        mapping: EntityMapping, manager: MigrationManager, source: PersistentStore, destination: PersistentStore
    ) throws -> [String]? {
        var temporaries: [String] = []
        do {
            if let statements = try plan(
                mapping: mapping, manager: manager, source: source, destination: destination, temporaries: &temporaries)
            {
                return statements
            }
        } catch {
            try? drop(temporaries, in: destination)
            throw error
        }
        try drop(temporaries, in: destination)
        return nil
    }

    private static func drop(_ temporaries: [String], in destination: PersistentStore) throws {
        for name in temporaries { try destination.database.exec("DROP TABLE IF EXISTS temp.\(name)") }
    }

    private static func plan(
        mapping: EntityMapping, manager: MigrationManager, source: PersistentStore, destination: PersistentStore,
        temporaries: inout [String]
    ) throws -> [String]? {
        guard let sourceEntity = mapping.sourceEntity, let destinationEntity = mapping.destinationEntity else {
            return nil
        }
        var statements: [String] = []
        guard let associations = manager.run.associations else { return nil }
        let ownID = manager.mappingID(mapping)
        // A mapping making one destination per distinct value adds up what its sources give: to-manys only here.
        let addsUp =
            try DistinctValueMapping.attribute(of: mapping) != nil
            && mapping.relationshipMappings.allSatisfy {
                $0.valueExpression == nil || destinationEntity.relationship(named: $0.name)?.isToMany == true
            }
        if associations.identities[ownID] == nil, !addsUp,
            !mapping.relationshipMappings.allSatisfy({ $0.valueExpression == nil })
        {
            // Core Data's default policy refuses a destination made of several sources: the per-instance path says so.
            try associations.materialize([ownID])
            if try destination.database.scalar(
                """
                SELECT 1 FROM cdm_association WHERE mapping = \(ownID) GROUP BY destination_ent, destination_pk HAVING COUNT(*) > 1 LIMIT 1
                """) != nil
            {
                return nil
            }
        }
        for (index, property) in mapping.relationshipMappings.enumerated() {
            guard let expression = property.valueExpression else { continue }
            guard let relationship = destinationEntity.relationship(named: property.name) else { return nil }
            if relationship.isToMany {
                // Set already, from the other side, by the mapping that sets the inverse to-one.
                if isSetByInverse(
                    relationship, expression, property: property, mapping: mapping, sourceEntity: sourceEntity,
                    manager: manager)
                {
                    continue
                }
                guard
                    let planned = try DeclarativeToManySQL.plan(
                        relationship: relationship, expression: expression, property: property,
                        mapping: mapping, manager: manager, source: source, destination: destination,
                        index: index, temporaries: &temporaries)
                else { return nil }
                statements += planned
                continue
            }
            guard relationship.inverseRelationship?.isToMany ?? true,
                case .foreignKey(let column, nil, nil) = destination.layout.storage(of: relationship),
                let (sourceRelationship, mappingIDs) = lookup(
                    expression, property: property, sourceEntity: sourceEntity,
                    destinationRelationship: relationship, manager: manager),
                !sourceRelationship.isToMany,
                case .foreignKey(let sourceColumn, _, _) = source.layout.storage(of: sourceRelationship),
                let sourceTarget = sourceRelationship.destinationEntity, !mappingIDs.isEmpty
            else { return nil }
            let targetNumbers = sourceTarget.rootEntity.selfAndDescendants.map { $0.entityNumber }
            let table = SQLiteDatabase.quote(destination.layout.table(for: destinationEntity))
            let sourceTable =
                "\(DeclarativeMappingSQL.sourceSchema).\(SQLiteDatabase.quote(source.layout.table(for: sourceEntity)))"
            let target: String
            if mappingIDs.count == 1, let range = associations.identities[mappingIDs[0]],
                targetNumbers.contains(range.sourceEntity)
            {
                // The target mapping kept its source keys: the target's key is the source's foreign key, if it made that row.
                target =
                    "SELECT d.Z_PK FROM main.\(range.destinationTable) d WHERE d.Z_PK = s.\(SQLiteDatabase.quote(sourceColumn)) AND d.Z_PK BETWEEN \(range.low) AND \(range.high)"
            } else {
                try associations.materialize(mappingIDs)
                let ids = mappingIDs.map(String.init).joined(separator: ", ")
                // Core Data refuses several instances for a to-one: leave that case to the per-instance path, which says so.
                let ambiguous = try destination.database.scalar(
                    "SELECT 1 FROM cdm_association WHERE mapping IN (\(ids)) GROUP BY source_ent, source_pk HAVING COUNT(*) > 1 LIMIT 1"
                )
                if ambiguous != nil { return nil }
                target = """
                    SELECT t.destination_pk FROM cdm_association t
                    WHERE t.mapping IN (\(ids)) AND t.source_ent IN (\(targetNumbers.map(String.init).joined(separator: ", "))) AND t.source_pk = s.\(SQLiteDatabase.quote(sourceColumn))
                    """
            }
            let rows: String
            if let own = associations.identities[ownID] {
                // This mapping kept its source keys: each of its rows has the key of the source row it was made from.
                rows =
                    "FROM \(sourceTable) s WHERE s.Z_PK = \(table).Z_PK AND \(table).Z_PK BETWEEN \(own.low) AND \(own.high)"
            } else {
                try associations.materialize([ownID])
                rows = """
                    FROM cdm_association a JOIN \(sourceTable) s ON s.Z_PK = a.source_pk
                    WHERE a.mapping = \(ownID) AND a.destination_ent = \(destinationEntity.entityNumber)
                      AND \(table).Z_PK = a.destination_pk
                    """
            }
            statements.append("UPDATE main.\(table) SET \(SQLiteDatabase.quote(column)) = (\(target))\n\(rows)")
        }
        return statements
    }

    /// Whether the to-many `relationship`, mapped by `expression`, gets exactly the members the
    /// mapping of its targets gives by setting the inverse to-one: the expression takes the
    /// destinations of one entity mapping (default policy, not `DistinctValueMapping`: one destination per source) of the
    /// source to-many, and that mapping sets the inverse to-one from the destinations this
    /// mapping made of the source to-many's inverse to-one. A member belongs to an owner on
    /// either side exactly when its source belongs to the owner's source. Unordered only.
    static func isSetByInverse(
        _ relationship: RelationshipDescription, _ expression: ValueExpression, property: PropertyMapping,
        mapping: EntityMapping, sourceEntity: EntityDescription, manager: MigrationManager
    ) -> Bool {
        let form = "destinationInstancesForEntityMappingNamed:sourceInstances:"
        guard !relationship.isOrdered, let inverse = relationship.inverseRelationship, !inverse.isToMany,
            let wanted = relationship.destinationEntity,
            case .function(.variable("manager"), form, let arguments) = expression, arguments.count == 2,
            let name = arguments[0].constantValue?.stringValue, let key = sourceKey(arguments[1]),
            let sourceRelationship = sourceEntity.relationship(named: key), sourceRelationship.isToMany,
            !sourceRelationship.isOrdered,
            let sourceInverse = sourceRelationship.inverseRelationship, !sourceInverse.isToMany,
            let other = try? manager.entityMappingOfCurrentPass(named: name), other !== mapping,
            other.entityMigrationPolicyClassName == nil, other.userInfo[DistinctValueMapping.userInfoKey] == nil,
            other.sourceEntity === sourceRelationship.destinationEntity,
            let made = other.destinationEntity, made.isKind(of: wanted),
            let back = other.relationshipMappings.first(where: { $0.name == inverse.name })?.valueExpression,
            case .function(.variable("manager"), form, let backArguments) = back, backArguments.count == 2,
            backArguments[0].constantValue?.stringValue == mapping.name,
            sourceKey(backArguments[1]) == sourceInverse.name
        else { return false }
        return true
    }

    /// The source relationship and the entity mappings an expression of the two supported forms looks through.
    static func lookup(
        _ expression: ValueExpression, property: PropertyMapping, sourceEntity: EntityDescription,
        destinationRelationship: RelationshipDescription, manager: MigrationManager
    ) -> (RelationshipDescription, [Int])? {
        guard case .function(.variable("manager"), let selector, let arguments) = expression, arguments.count == 2,
            let name = arguments[0].constantValue?.stringValue, let key = sourceKey(arguments[1]),
            let sourceRelationship = sourceEntity.relationship(named: key),
            let sourceTarget = sourceRelationship.destinationEntity
        else { return nil }
        switch selector {
        case "destinationInstancesForEntityMappingNamed:sourceInstances:":
            guard let target = try? manager.entityMappingOfCurrentPass(named: name),
                let made = target.destinationEntity,
                let wanted = destinationRelationship.destinationEntity, made.isKind(of: wanted)
            else { return nil }
            return (sourceRelationship, [manager.mappingID(target)])
        case "destinationInstancesForSourceRelationshipNamed:sourceInstances:":
            guard name == key else { return nil }
            return (
                sourceRelationship,
                manager.mappingIDs(from: sourceTarget, to: destinationRelationship.destinationEntity)
            )
        default:
            return nil
        }
    }

    /// `$source.rel` or `FUNCTION($source, "valueForKey:", "rel")`.
    private static func sourceKey(_ expression: ValueExpression) -> String? {
        switch expression {
        case .keyPath(.variable("source"), let keys) where keys.count == 1: return keys[0]
        case .function(.variable("source"), "valueForKey:", let arguments) where arguments.count == 1:
            return arguments[0].constantValue?.stringValue
        default: return nil
        }
    }
}
