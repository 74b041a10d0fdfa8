/// Stage 2 of a declarative entity mapping as SQL for a to-many destination relationship set from
/// the destination instances other mappings made of the source's members —
/// `FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "M", $source.items)`,
/// its `destinationInstancesForSourceRelationshipNamed:` form, or `…, "M", $source)` (the
/// destinations made of the source instance itself).
///
/// The per-instance path evaluates the expression for each destination instance in the order the
/// mapping made them (its "turn"), takes the source's members in the order the store gives them
/// (ordering column, then key), the destinations of each in the order made, drops repeats, and
/// adds them to the relationship. Here the same (owner, member) pairs, each with its turn and
/// position, come from one query joining the mapping's own associations, the source's relationship
/// storage and the target mappings' associations (or the source keys where a mapping kept them,
/// `AssociationTable.IdentityRange`), and are written as Core Data's store would hold them after
/// the per-instance adds:
/// - many-to-many: one `INSERT … SELECT` into the join table (ordering columns numbered after
///   what the owner's or the member's list already holds);
/// - one-to-many (or a to-many without inverse, kept in a hidden column): one `UPDATE` of the
///   members' table; a member claimed by several owners ends with the last one, as the adds
///   would leave it; when ordered, each member must have one owner and no other owner before
///   (else the per-instance path runs), and is numbered after its owner's present members.
/// Anything else (a source to-one, a self-inverse relationship, the inverse mapped by the same
/// mapping, targets of other entities) is left to the per-instance path.
enum DeclarativeToManySQL {
    /// The statements writing `relationship` for every destination instance of `mapping`, or nil
    /// when the per-instance path is needed. May create temporary tables named `temporaries`
    /// (they are in `temporaries` whether or not the plan succeeds; the last statements drop them).
    static func plan(
        relationship: RelationshipDescription, expression: ValueExpression, property: PropertyMapping,
        mapping: EntityMapping, manager: MigrationManager, source: PersistentStore, destination: PersistentStore,
        index: Int, temporaries: inout [String]
    ) throws -> [String]? {
        guard let sourceEntity = mapping.sourceEntity, let destinationEntity = mapping.destinationEntity,
            let associations = manager.run.associations, let wanted = relationship.destinationEntity
        else { return nil }
        // The inverse written per instance by this very mapping interleaves with this relationship's writes.
        if let inverse = relationship.inverseRelationship {
            if inverse === relationship { return nil }
            if mapping.relationshipMappings.contains(where: { $0.name == inverse.name && $0.valueExpression != nil }),
                let owner = inverse.entity, destinationEntity.isKind(of: owner)
            {
                return nil
            }
        }
        // An owner made of several sources (`DistinctValueMapping`) collects its members as they come.
        let addsUp = try DistinctValueMapping.attribute(of: mapping) != nil
        guard
            let (members, targetNumbers, mappingIDs) = resolve(
                expression, property: property, sourceEntity: sourceEntity,
                relationship: relationship, manager: manager, source: source),
            !mappingIDs.isEmpty
        else { return nil }

        // The owners: the rows this mapping made, with the source each was made from, in the order made.
        let ownID = manager.mappingID(mapping)
        let owners: String
        if let own = associations.identities[ownID] {
            owners =
                "SELECT o.Z_PK AS owner, o.Z_PK AS src, o.Z_PK AS turn FROM main.\(own.destinationTable) o WHERE o.Z_PK BETWEEN \(own.low) AND \(own.high)"
        } else {
            owners =
                "SELECT a.destination_pk AS owner, a.source_pk AS src, a.rowid AS turn FROM cdm_association a "
                + "WHERE a.mapping = \(ownID) AND a.destination_ent = \(destinationEntity.entityNumber)"
        }

        // The destinations made of each member: their keys and the order made.
        let targets: String
        let targetKey: String
        let targetRank: String
        let numbers = targetNumbers.map(String.init).joined(separator: ", ")
        let wantedNumbers = wanted.selfAndDescendants.map { String($0.entityNumber) }.joined(separator: ", ")
        if mappingIDs.count == 1, let range = associations.identities[mappingIDs[0]],
            targetNumbers.contains(range.sourceEntity)
        {
            // The target mapping kept its source keys: the member's key is its destination's, if it made that row.
            guard wanted.selfAndDescendants.contains(where: { $0.entityNumber == range.destinationEntity }) else {
                return nil
            }
            targets =
                "JOIN main.\(range.destinationTable) d ON d.Z_PK = m.member AND d.Z_PK BETWEEN \(range.low) AND \(range.high)"
            (targetKey, targetRank) = ("d.Z_PK", "d.Z_PK")
        } else {
            try associations.materialize(mappingIDs)
            let ids = mappingIDs.map(String.init).joined(separator: ", ")
            // A policy may have associated instances of other entities: the per-instance path says what becomes of them.
            if try destination.database.scalar(
                "SELECT 1 FROM cdm_association WHERE mapping IN (\(ids)) AND destination_ent NOT IN (\(wantedNumbers)) LIMIT 1"
            ) != nil {
                return nil
            }
            targets =
                "JOIN cdm_association d ON d.source_ent IN (\(numbers)) AND d.source_pk = m.member AND d.mapping IN (\(ids))"
            (targetKey, targetRank) = ("d.destination_pk", "d.rowid")
        }
        // Every (owner, member) pair once, at its first place in the owner's list.
        let candidates = """
            SELECT o.owner AS owner, \(targetKey) AS member, o.turn AS turn, m.m1 AS m1, m.m2 AS m2, \(targetRank) AS r
            FROM (\(owners)) o JOIN (\(members)) m ON m.src = o.src \(targets)
            """
        // (An owner made of several sources, `DistinctValueMapping`, has several turns: its list
        // grows source by source, and a member claimed again last belongs to it at its last turn.)
        let pairs = """
            SELECT owner, member, turn, last, ROW_NUMBER() OVER (PARTITION BY owner ORDER BY turn, m1, m2, r) AS position FROM (
              SELECT owner, member, turn, m1, m2, r, ROW_NUMBER() OVER (PARTITION BY owner, member ORDER BY turn, m1, m2, r) AS k,
                     MAX(turn) OVER (PARTITION BY owner, member) AS last
              FROM (\(candidates))) WHERE k = 1
            """

        switch destination.layout.storage(of: relationship) {
        case .joinTable(let table, let own, let other, let order, let inverseOrder):
            if order == nil && inverseOrder == nil {
                return [
                    "INSERT OR IGNORE INTO main.\(table) (\(own), \(other)) SELECT DISTINCT owner, member FROM (\(candidates))"
                ]
            }
            let name = try makePairs(pairs, index: index, destination: destination, temporaries: &temporaries)
            let present = "EXISTS (SELECT 1 FROM main.\(table) j WHERE j.\(own) = n.owner AND j.\(other) = n.member)"
            if addsUp, order != nil,
                try destination.database.scalar("SELECT 1 FROM temp.\(name) n WHERE \(present) LIMIT 1") != nil
            {
                return nil  // an owner of several sources with members already there: the per-instance path places them
            }
            let numbered = "\(name)_order"
            temporaries.append(numbered)
            // The owner's members the mapping gives go last, in its order (`PersistentStore.placeLast`):
            // numbered after the members it does not give, those already there included.
            // (The place after the members not given is found once per owner.)
            let place =
                order.map { order in
                    """
                    (SELECT COALESCE(MAX(j.\(order)), 0) FROM main.\(table) j WHERE j.\(own) = p.owner
                     AND NOT EXISTS (SELECT 1 FROM temp.\(name) q WHERE q.owner = j.\(own) AND q.member = j.\(other)))
                    """
                } ?? "NULL"
            var columns = [own, other]
            var values = ["n.owner", "n.member"]
            var statements = [
                """
                CREATE TEMP TABLE \(numbered) AS
                WITH b AS MATERIALIZED (SELECT p.owner AS owner, \(place) AS base FROM (SELECT DISTINCT owner FROM temp.\(name)) p)
                SELECT p.owner AS owner, p.member AS member, p.turn AS turn, p.position AS position,
                       b.base + ROW_NUMBER() OVER (PARTITION BY p.owner ORDER BY p.position) AS place
                FROM temp.\(name) p JOIN b ON b.owner = p.owner
                """
            ]
            if let order = order {
                columns.append(order)
                values.append("n.place")
                if !addsUp {
                    // Pairs already in the table (the inverse's mapping ran first) move to their place.
                    statements.append(
                        """
                        UPDATE main.\(table) SET \(order) = n.place FROM temp.\(numbered) n
                        WHERE main.\(table).\(own) = n.owner AND main.\(table).\(other) = n.member AND main.\(table).\(order) IS NOT n.place
                        """)
                }
            }
            if let inverseOrder = inverseOrder {
                columns.append(inverseOrder)
                values.append(
                    "COALESCE((SELECT MAX(j.\(inverseOrder)) FROM main.\(table) j WHERE j.\(other) = n.member), 0) + ROW_NUMBER() OVER (PARTITION BY n.member ORDER BY n.turn)"
                )
            }
            // Pairs already in the table take no row and no place in the inverse's list (Core Data's add of a member already there).
            statements.append(
                """
                INSERT INTO main.\(table) (\(columns.joined(separator: ", ")))
                SELECT \(values.joined(separator: ", ")) FROM temp.\(numbered) n
                WHERE NOT \(present)
                ORDER BY n.owner, n.position
                """)
            return statements + ["DROP TABLE temp.\(numbered)", "DROP TABLE temp.\(name)"]
        case .inverseForeignKey(let table, let column, let entityColumn, let orderColumn):
            return try memberColumn(
                table: table, column: column, entityColumn: entityColumn,
                ownerEntity: destination.layout.entityNumber(of: destinationEntity),
                orderColumn: orderColumn, pairs: pairs, addsUp: addsUp, index: index, destination: destination,
                temporaries: &temporaries)
        case .hiddenColumn(let table, let column, let orderColumn):
            return try memberColumn(
                table: table, column: column, entityColumn: nil, ownerEntity: 0,
                orderColumn: orderColumn, pairs: pairs, addsUp: addsUp, index: index, destination: destination,
                temporaries: &temporaries)
        case .foreignKey, .transient:
            return nil
        }
    }

    /// The statements for a to-many kept in a column of its members' table.
    private static func memberColumn(
        table: String, column: String, entityColumn: String?, ownerEntity: Int, orderColumn: String?,
        pairs: String, addsUp: Bool, index: Int, destination: PersistentStore, temporaries: inout [String]
    ) throws -> [String]? {
        let name = try makePairs(pairs, index: index, destination: destination, temporaries: &temporaries)
        let database = destination.database
        let entity = entityColumn.map { ", \($0) = \(ownerEntity)" } ?? ""
        guard let orderColumn = orderColumn else {
            // The adds run owner by owner: a member claimed by several owners keeps the last.
            return [
                """
                UPDATE main.\(table) SET \(column) = p.owner\(entity)
                FROM (SELECT member, owner FROM (SELECT member, owner, ROW_NUMBER() OVER (PARTITION BY member ORDER BY last DESC) AS k
                      FROM temp.\(name)) WHERE k = 1) AS p
                WHERE main.\(table).Z_PK = p.member
                """, "DROP TABLE temp.\(name)",
            ]
        }
        // Ordered: exact when each member has one owner here and no other owner before.
        if try database.scalar("SELECT 1 FROM temp.\(name) GROUP BY member HAVING COUNT(*) > 1 LIMIT 1") != nil {
            return nil
        }
        if try database.scalar(
            """
            SELECT 1 FROM temp.\(name) p JOIN main.\(table) x ON x.Z_PK = p.member
            WHERE x.\(column) IS NOT NULL AND x.\(column) != p.owner LIMIT 1
            """) != nil
        {
            return nil
        }
        if addsUp,
            try database.scalar(
                "SELECT 1 FROM temp.\(name) p JOIN main.\(table) x ON x.Z_PK = p.member WHERE x.\(column) = p.owner LIMIT 1"
            ) != nil
        {
            return nil  // an owner of several sources with members already there: the per-instance path places them
        }
        let numbered = "\(name)_order"
        temporaries.append(numbered)
        // The members the mapping gives go last in their owner's list, in its order (`PersistentStore.placeLast`):
        // numbered after the members it does not give; a member already in the list moves to its place.
        // (The place after the members not given is found once per owner.)
        return [
            """
            CREATE TEMP TABLE \(numbered) AS
            WITH b AS MATERIALIZED (
              SELECT o.owner AS owner,
                     COALESCE((SELECT MAX(y.\(orderColumn)) FROM main.\(table) y WHERE y.\(column) = o.owner
                               AND NOT EXISTS (SELECT 1 FROM temp.\(name) q WHERE q.owner = o.owner AND q.member = y.Z_PK)), 0) AS base
              FROM (SELECT DISTINCT owner FROM temp.\(name)) o)
            SELECT p.member AS member, p.owner AS owner, b.base + ROW_NUMBER() OVER (PARTITION BY p.owner ORDER BY p.position) AS position
            FROM temp.\(name) p JOIN b ON b.owner = p.owner
            """,
            """
            UPDATE main.\(table) SET \(column) = p.owner\(entity), \(orderColumn) = p.position
            FROM temp.\(numbered) AS p WHERE main.\(table).Z_PK = p.member
            """, "DROP TABLE temp.\(numbered)", "DROP TABLE temp.\(name)",
        ]
    }

    /// Writes the pairs into a temporary table indexed by owner and by member.
    private static func makePairs(
        _ pairs: String, index: Int, destination: PersistentStore, temporaries: inout [String]
    ) throws -> String {
        let name = "cdm_pairs_\(index)"
        temporaries.append(name)
        try destination.database.exec("DROP TABLE IF EXISTS temp.\(name)")
        try destination.database.run("CREATE TEMP TABLE \(name) AS \(pairs)")
        try destination.database.exec(
            """
            CREATE INDEX temp.\(name)_member ON \(name) (member, turn);
            CREATE INDEX temp.\(name)_owner ON \(name) (owner, position);
            CREATE INDEX temp.\(name)_pair ON \(name) (owner, member);
            """)
        return name
    }

    /// The members of each source instance as SQL giving `src`, `member` (the member's key) and its
    /// place (`m1`, `m2`: ordering column and key, as the store returns them); the source entity
    /// numbers the members may have; and the entity mappings whose destinations are looked up.
    private static func resolve(
        _ expression: ValueExpression, property: PropertyMapping, sourceEntity: EntityDescription,
        relationship: RelationshipDescription, manager: MigrationManager,
        source: PersistentStore
    ) -> (String, [Int], [Int])? {
        let form = "destinationInstancesForEntityMappingNamed:sourceInstances:"
        if case .function(.variable("manager"), form, let arguments) = expression, arguments.count == 2,
            case .variable("source") = arguments[1], let name = arguments[0].constantValue?.stringValue
        {
            // The destinations made of the source instance itself.
            guard let target = try? manager.entityMappingOfCurrentPass(named: name),
                let made = target.destinationEntity,
                let wanted = relationship.destinationEntity, made.isKind(of: wanted)
            else { return nil }
            let table =
                "\(DeclarativeMappingSQL.sourceSchema).\(SQLiteDatabase.quote(source.layout.table(for: sourceEntity)))"
            return (
                "SELECT s.Z_PK AS src, s.Z_PK AS member, 0 AS m1, s.Z_PK AS m2 FROM \(table) s",
                sourceEntity.rootEntity.selfAndDescendants.map { $0.entityNumber }, [manager.mappingID(target)]
            )
        }
        guard
            let (sourceRelationship, ids) = DeclarativeRelationshipSQL.lookup(
                expression, property: property, sourceEntity: sourceEntity,
                destinationRelationship: relationship, manager: manager),
            sourceRelationship.isToMany, let sourceTarget = sourceRelationship.destinationEntity
        else { return nil }
        let schema = DeclarativeMappingSQL.sourceSchema
        /// ` AND …` keeping the rows (aliased `alias`) of the relationship's target entity.
        func targetRestriction(_ alias: String) -> String {
            source.layout.entityRestriction(for: sourceTarget, includingSubentities: true, qualifier: alias + ".").map {
                " AND \($0)"
            } ?? ""
        }
        let members: String
        switch source.layout.storage(of: sourceRelationship) {
        case .joinTable(let table, let own, let other, let order, _):
            if sourceRelationship.inverseRelationship === sourceRelationship { return nil }
            let restriction = targetRestriction("t")
            members =
                "SELECT j.\(own) AS src, j.\(other) AS member, \(order.map { "j.\($0)" } ?? "0") AS m1, j.\(other) AS m2 "
                + "FROM \(schema).\(table) j JOIN \(schema).\(SQLiteDatabase.quote(source.layout.table(for: sourceTarget))) t ON t.Z_PK = j.\(other)\(restriction)"
        case .inverseForeignKey(let table, let column, _, let order), .hiddenColumn(let table, let column, let order):
            let restriction = targetRestriction("x")
            members =
                "SELECT x.\(column) AS src, x.Z_PK AS member, \(order.map { "x.\($0)" } ?? "0") AS m1, x.Z_PK AS m2 "
                + "FROM \(schema).\(table) x WHERE x.\(column) IS NOT NULL\(restriction)"
        case .foreignKey, .transient:
            return nil
        }
        return (members, sourceTarget.rootEntity.selfAndDescendants.map { $0.entityNumber }, ids)
    }
}
