/// Stage 2 of a declarative entity mapping as SQL, for the common shape of a relationship
/// mapping: a to-one destination relationship kept in a column of its own table, set from the
/// destination instances another mapping made of the source's to-one target —
/// `FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "M", $source.rel)` or
/// `FUNCTION($manager, "destinationInstancesForSourceRelationshipNamed:sourceInstances:", "rel", FUNCTION($source, "valueForKey:", "rel"))`.
/// One `UPDATE` looks the targets up in the association table for every destination row at once.
/// Anything else — to-manys, ordered inverses, targets with sub-entities, sources made into
/// several destinations — runs per instance, with the same result.
enum DeclarativeRelationshipSQL {
    /// The UPDATE statements for every relationship mapping of `mapping`, or nil when one of them
    /// needs the per-instance path.
    static func plan(mapping: EntityMapping, manager: MigrationManager, source: PersistentStore, destination: PersistentStore) throws -> [String]? {
        guard let sourceEntity = mapping.sourceEntity, let destinationEntity = mapping.destinationEntity else { return nil }
        var statements: [String] = []
        for property in mapping.relationshipMappings {
            guard let expression = property.valueExpression else { continue }
            guard let relationship = destinationEntity.relationship(named: property.name), !relationship.isToMany,
                  relationship.inverseRelationship?.isToMany ?? true,
                  case .foreignKey(let column, nil, nil) = destination.layout.storage(of: relationship),
                  let (sourceRelationship, mappingIDs) = lookup(expression, property: property, sourceEntity: sourceEntity,
                                                               destinationRelationship: relationship, manager: manager),
                  !sourceRelationship.isToMany,
                  case .foreignKey(let sourceColumn, _, _) = source.layout.storage(of: sourceRelationship),
                  let sourceTarget = sourceRelationship.destinationEntity, !mappingIDs.isEmpty
            else { return nil }
            let ids = mappingIDs.map(String.init).joined(separator: ", ")
            // Core Data refuses several instances for a to-one: leave that case to the per-instance path, which says so.
            let ambiguous = try destination.database.scalar(
                "SELECT 1 FROM cdm_association WHERE mapping IN (\(ids)) GROUP BY source_ent, source_pk HAVING COUNT(*) > 1 LIMIT 1")
            if ambiguous != nil { return nil }
            let targetNumbers = sourceTarget.rootEntity.selfAndDescendants.map { String($0.entityNumber) }.joined(separator: ", ")
            let table = SQLiteDatabase.quote(destination.layout.table(for: destinationEntity))
            let sourceTable = "\(DeclarativeMappingSQL.sourceSchema).\(SQLiteDatabase.quote(source.layout.table(for: sourceEntity)))"
            statements.append("""
                UPDATE main.\(table) SET \(SQLiteDatabase.quote(column)) = (
                    SELECT t.destination_pk FROM cdm_association t
                    WHERE t.mapping IN (\(ids)) AND t.source_ent IN (\(targetNumbers)) AND t.source_pk = s.\(SQLiteDatabase.quote(sourceColumn)))
                FROM cdm_association a JOIN \(sourceTable) s ON s.Z_PK = a.source_pk
                WHERE a.mapping = \(manager.mappingID(mapping)) AND a.destination_ent = \(destinationEntity.entityNumber)
                  AND \(table).Z_PK = a.destination_pk
                """)
        }
        return statements
    }

    /// The source relationship and the entity mappings an expression of the two supported forms looks through.
    private static func lookup(_ expression: ValueExpression, property: PropertyMapping, sourceEntity: EntityDescription,
                               destinationRelationship: RelationshipDescription, manager: MigrationManager) -> (RelationshipDescription, [Int])? {
        guard case .function(.variable("manager"), let selector, let arguments) = expression, arguments.count == 2,
              let name = arguments[0].constantValue?.stringValue, let key = sourceKey(arguments[1]),
              let sourceRelationship = sourceEntity.relationship(named: key), let sourceTarget = sourceRelationship.destinationEntity
        else { return nil }
        switch selector {
        case "destinationInstancesForEntityMappingNamed:sourceInstances:":
            guard let target = try? manager.entityMappingOfCurrentPass(named: name), let made = target.destinationEntity,
                  let wanted = destinationRelationship.destinationEntity, made.isKind(of: wanted) else { return nil }
            return (sourceRelationship, [manager.mappingID(target)])
        case "destinationInstancesForSourceRelationshipNamed:sourceInstances:":
            guard name == key else { return nil }
            return (sourceRelationship, manager.mappingIDs(from: sourceTarget, to: destinationRelationship.destinationEntity))
        default:
            return nil
        }
    }

    /// `$source.rel` or `FUNCTION($source, "valueForKey:", "rel")`.
    private static func sourceKey(_ expression: ValueExpression) -> String? {
        switch expression {
        case .keyPath(.variable("source"), let keys) where keys.count == 1: return keys[0]
        case .function(.variable("source"), "valueForKey:", let arguments) where arguments.count == 1: return arguments[0].constantValue?.stringValue
        default: return nil
        }
    }
}
