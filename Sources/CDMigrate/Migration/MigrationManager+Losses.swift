/// The loss report (`LossReport`), counted in SQL where the data is once the passes have run:
/// the source's own connection counts what the rows each entity mapping took hold and no property
/// mapping reads; the destination's connection compares to-manys through the associations, and,
/// with the source attached, the values that came out nil.
///
/// Cost: one aggregate query per entity mapping that leaves something behind (one scan of the rows
/// it took), one pair per to-many it maps from the source relationship of the same name, and, for
/// destination entities whose instances were made or changed one at a time (an `INSERT … SELECT`
/// copies a value verbatim, so it cannot come out nil), one count of values on either side,
/// compared instance by instance only where the destination holds fewer.
extension MigrationManager {
    func countLosses() throws {
        guard let source = sourceStore, let destination = destinationStore, let associations = run.associations else {
            return
        }
        // The rows still buffered go to SQLite first: the counts are SQL.
        try destination.save()
        var losses = LossReport()
        let carried = carriedSourceProperties()
        for (pass, model) in mappingModels.enumerated() {
            let plans = SourceFetchPlan.plans(for: model.entityMappings, sourceStore: source)
            for (index, mapping) in model.entityMappings.enumerated() {
                guard let request = plans[index], let sourceEntity = mapping.sourceEntity,
                    let destinationEntity = mapping.destinationEntity, !destinationEntity.isAbstract
                else { continue }
                try checkCancelled()
                let declared = model.isInferred ? [] : IntendedLosses.names(of: mapping)
                func loss(_ kind: LossReport.Kind, _ property: String, _ count: Int) -> LossReport.Loss {
                    var loss = LossReport.Loss(
                        kind: kind, entityName: sourceEntity.name, propertyName: property,
                        entityMappingName: mapping.name,
                        pass: pass, count: count, isIntended: declared.contains(property) || declared.contains("*"))
                    loss.policyName = mapping.entityMigrationPolicyClassName
                    return loss
                }
                // Read by this mapping or another of the run taking instances of the entity
                // (one making a `Categoria` of each distinct `Nota.categoria` carries that attribute).
                func read(_ name: String) -> Bool { carried.contains(sourceEntity.name + "." + name) }
                let attributes = attributesLeftBehind(by: mapping, carried: carried, source: source)
                let relationships = sourceEntity.relationships.filter { relationship in
                    guard !relationship.isTransient, !read(relationship.name) else { return false }
                    if let inverse = relationship.inverseName,
                        carried.contains(relationship.destinationEntityName + "." + inverse)
                    {
                        return false
                    }
                    return true
                }
                // The attributes' values were counted by the mapping's SQL copy, or are counted here.
                let counted = run.leftBehindCounts[mappingID(mapping)].flatMap {
                    $0.count == attributes.count ? $0 : nil
                }
                var left = try countLeftBehind(
                    attributes: counted == nil ? attributes : [], relationships: relationships, request: request,
                    entity: sourceEntity, source: source)
                if let counted = counted { left.attributes = counted }
                for (attribute, count) in zip(attributes, left.attributes) where count > 0 {
                    losses.losses.append(loss(.attribute, attribute.name, count))
                }
                for (relationship, count) in zip(relationships, left.relationships) where count > 0 {
                    losses.losses.append(loss(.relationship, relationship.name, count))
                }

                for (name, count) in try countShorterToManys(
                    mapping, request: request, source: source, destination: destination, associations: associations)
                where count > 0 {
                    losses.losses.append(loss(.toMany, name, count))
                }
                // Values written by SQL statements alone (the declarative path, a batch hook's
                // default) are plain copies that cannot come out nil: only instances made or
                // changed one at a time are compared.
                if destination.entitiesWrittenByInstance.contains(where: { id in
                    destinationEntity.selfAndDescendants.contains { ObjectIdentifier($0) == id }
                }) {
                    for (name, count) in try countNilled(
                        mapping, request: request, source: source, destination: destination, associations: associations)
                    where count > 0 {
                        losses.losses.append(loss(.nilled, name, count))
                    }
                }
            }
        }
        try detachSource()
        for untaken in run.report.untakenSourceInstances {
            losses.losses.append(
                LossReport.Loss(
                    kind: .instances, entityName: untaken.entityName, propertyName: nil, entityMappingName: nil,
                    pass: nil, count: untaken.count, isIntended: declaresUntaken(untaken.entityName)))
        }
        run.report.losses = losses
    }

    /// The source properties some entity mapping of the run reads ("Entity.key", for the entity it
    /// takes and its sub-entities).
    func carriedSourceProperties() -> Set<String> {
        var carried = Set<String>()
        for model in mappingModels {
            for mapping in model.entityMappings {
                guard let entity = mapping.sourceEntity, mapping.destinationEntity != nil else { continue }
                for key in IntendedLosses.sourceKeysRead(by: mapping) {
                    for kind in entity.selfAndDescendants { carried.insert(kind.name + "." + key) }
                }
            }
        }
        return carried
    }

    /// The stored attributes of `mapping`'s source entity that no mapping of the run reads, in the
    /// order the loss report counts them (`carried`: `carriedSourceProperties()`).
    func attributesLeftBehind(by mapping: EntityMapping, carried: Set<String>, source: PersistentStore)
        -> [AttributeDescription]
    {
        guard let sourceEntity = mapping.sourceEntity else { return [] }
        return sourceEntity.attributes.filter {
            !$0.isTransient && !carried.contains(sourceEntity.name + "." + $0.name)
                && source.layout.column(for: $0) != nil
        }
    }

    /// Whether a written mapping model says the instances of `entityName` that no mapping takes
    /// are meant to stay behind: a remove entity mapping for it, `@instances` in the
    /// `cdmigrate.intendedLosses` of a mapping taking it or one of its parents, or a source
    /// predicate (other than TRUEPREDICATE) of such a mapping.
    private func declaresUntaken(_ entityName: String) -> Bool {
        guard let entity = sourceModel.entity(named: entityName) else { return false }
        for model in mappingModels where !model.isInferred {
            for mapping in model.entityMappings {
                if mapping.mappingType == .remove, mapping.sourceEntityName == entityName { return true }
                if let taken = mapping.sourceEntity, entity.isKind(of: taken),
                    IntendedLosses.names(of: mapping).contains(IntendedLosses.instancesName)
                {
                    return true
                }
                if mapping.destinationEntity != nil, let taken = mapping.sourceEntity, entity.isKind(of: taken),
                    let predicate = mapping.sourceExpression?.predicate
                {
                    if case .constant(true) = predicate { continue }
                    return true
                }
            }
        }
        return false
    }

    /// SQL selecting `Z_PK` of the source rows a request takes (alias `t`), with its arguments;
    /// nil when the request filters rows in Swift.
    private func takenRows(
        _ request: FetchRequest, entity: EntityDescription, source: PersistentStore, schema: String = "main"
    ) -> (sql: String, arguments: [Value])? {
        guard request.filter == nil else { return nil }
        return (
            "FROM \(schema).\(SQLiteDatabase.quote(source.layout.table(for: entity))) t"
                + request.sqlWhereClause(for: entity, in: source.layout),
            request.arguments
        )
    }

    /// Per attribute, the taken rows with a value; per relationship, the links of the taken rows.
    private func countLeftBehind(
        attributes: [AttributeDescription], relationships: [RelationshipDescription], request: FetchRequest,
        entity: EntityDescription, source: PersistentStore
    ) throws -> (attributes: [Int], relationships: [Int]) {
        if attributes.isEmpty && relationships.isEmpty { return ([], []) }
        guard let rows = takenRows(request, entity: entity, source: source) else {
            // A predicate evaluated in Swift: the rows it takes are read once more.
            var attributeCounts = [Int](repeating: 0, count: attributes.count)
            var relationshipCounts = [Int](repeating: 0, count: relationships.count)
            try source.enumerate(request) { object in
                for (i, attribute) in attributes.enumerated() where try object.storedValue(for: attribute) != .null {
                    attributeCounts[i] += 1
                }
                for (i, relationship) in relationships.enumerated() {
                    switch try object.value(for: relationship) {
                    case .null: break
                    case .collection(let members): relationshipCounts[i] += members.count
                    default: relationshipCounts[i] += 1
                    }
                }
                return true
            }
            return (attributeCounts, relationshipCounts)
        }
        var attributeCounts: [Int] = []
        if !attributes.isEmpty {
            let columns = attributes.map { "COUNT(t.\(SQLiteDatabase.quote(source.layout.column(for: $0) ?? "Z_PK")))" }
            let row =
                try source.database.rows("SELECT \(columns.joined(separator: ", ")) \(rows.sql)", rows.arguments).first
                ?? []
            attributeCounts = (0..<attributes.count).map { i in Int(row.element(at: i)?.integer ?? 0) }
        }
        var relationshipCounts: [Int] = []
        for relationship in relationships {
            relationshipCounts.append(
                try countLinks(
                    of: relationship, owner: entity, ownersSQL: "SELECT t.Z_PK \(rows.sql)", arguments: rows.arguments,
                    store: source, database: source.database, schema: "main"))
        }
        return (attributeCounts, relationshipCounts)
    }

    /// The links of `relationship` whose owner is one of the rows `ownersSQL` selects, counted in `database`.
    private func countLinks(
        of relationship: RelationshipDescription, owner: EntityDescription, ownersSQL: String, arguments: [Value],
        store: PersistentStore, database: SQLiteDatabase, schema: String
    ) throws -> Int {
        let sql: String
        let storage = store.layout.storage(of: relationship)
        if case .foreignKey(let column, _, _) = storage {
            sql =
                "SELECT COUNT(*) FROM \(schema).\(SQLiteDatabase.quote(store.layout.table(for: owner))) o WHERE o.Z_PK IN (\(ownersSQL)) AND o.\(SQLiteDatabase.quote(column)) IS NOT NULL"
        } else if let links = storage.toManyLinks {
            sql =
                "SELECT COUNT(*) FROM \(schema).\(SQLiteDatabase.quote(links.table)) x WHERE x.\(SQLiteDatabase.quote(links.ownerColumn)) IN (\(ownersSQL))"
        } else {
            return 0
        }
        return Int(try database.scalar(sql, arguments)?.integer ?? 0)
    }

    /// The two entities of a mapping whose instances are compared property by property with the
    /// instances they were made from; nil for a mapping without both, or one making an instance
    /// per distinct value (whose instances stand for many source rows).
    private func comparedEntities(_ mapping: EntityMapping) throws -> (EntityDescription, EntityDescription)? {
        guard let sourceEntity = mapping.sourceEntity, let destinationEntity = mapping.destinationEntity,
            try DistinctValueMapping.attribute(of: mapping) == nil
        else { return nil }
        return (sourceEntity, destinationEntity)
    }

    /// Per to-many mapped from the source relationship of the same name, how many links the
    /// taken source rows have that the destinations made of them lack.
    private func countShorterToManys(
        _ mapping: EntityMapping, request: FetchRequest, source: PersistentStore, destination: PersistentStore,
        associations: AssociationTable
    ) throws -> [(String, Int)] {
        guard let (sourceEntity, destinationEntity) = try comparedEntities(mapping) else { return [] }
        var result: [(String, Int)] = []
        for property in mapping.relationshipMappings {
            guard let expression = property.valueExpression,
                IntendedLosses.sourceKeysRead(byExpression: expression).contains(property.name),
                let target = destinationEntity.relationship(named: property.name), target.isToMany,
                let origin = sourceEntity.relationship(named: property.name), origin.isToMany,
                let rows = takenRows(request, entity: sourceEntity, source: source)
            else { continue }
            let sourceLinks = try countLinks(
                of: origin, owner: sourceEntity, ownersSQL: "SELECT t.Z_PK \(rows.sql)", arguments: rows.arguments,
                store: source, database: source.database, schema: "main")
            if sourceLinks == 0 { continue }
            // Instance by instance where the source can be attached: a destination that gained
            // links must not hide another that lost some.
            if run.sourceAccess?.allowsAttach == true,
                let sourceCounts = linksPerOwner(of: origin, store: source, schema: DeclarativeMappingSQL.sourceSchema),
                let destinationCounts = linksPerOwner(of: target, store: destination, schema: "main")
            {
                try attachSource(source, to: destination)
                let associated = try associations.associationsSQL(mapping: mappingID(mapping))
                let sql =
                    "SELECT IFNULL(SUM(MAX(0, sc.n - IFNULL(dc.n, 0))), 0) FROM (\(associated)) a "
                    + "JOIN (\(sourceCounts)) sc ON sc.owner = a.source_pk LEFT JOIN (\(destinationCounts)) dc ON dc.owner = a.destination_pk"
                result.append((property.name, Int(try destination.database.scalar(sql)?.integer ?? 0)))
                continue
            }
            let made = try associations.destinationKeysSQL(mapping: mappingID(mapping))
            let destinationLinks = try countLinks(
                of: target, owner: destinationEntity, ownersSQL: made, arguments: [], store: destination,
                database: destination.database, schema: "main")
            result.append((property.name, sourceLinks - destinationLinks))
        }
        return result
    }

    /// `SELECT owner, n`: the links of a to-many per owner's `Z_PK`, nil for a storage without links.
    private func linksPerOwner(of relationship: RelationshipDescription, store: PersistentStore, schema: String)
        -> String?
    {
        guard let links = store.layout.storage(of: relationship).toManyLinks else { return nil }
        let c = SQLiteDatabase.quote(links.ownerColumn)
        return
            "SELECT x.\(c) AS owner, COUNT(*) AS n FROM \(schema).\(SQLiteDatabase.quote(links.table)) x WHERE x.\(c) IS NOT NULL GROUP BY x.\(c)"
    }

    /// The attributes `countNilled` compares: those a mapping copies from the source attribute of
    /// the same name, with their source and destination columns (quoted).
    func nilledPairs(_ mapping: EntityMapping, source: PersistentStore, destination: PersistentStore) throws
        -> [(name: String, sourceColumn: String, destinationColumn: String)]
    {
        guard let (sourceEntity, destinationEntity) = try comparedEntities(mapping) else { return [] }
        var pairs: [(name: String, sourceColumn: String, destinationColumn: String)] = []
        for property in mapping.attributeMappings {
            guard let expression = property.valueExpression, IntendedLosses.sameKeyCopy(expression) == property.name,
                let from = sourceEntity.attribute(named: property.name),
                let to = destinationEntity.attribute(named: property.name),
                !to.isTransient, let sourceColumn = source.layout.column(for: from),
                let destinationColumn = destination.layout.column(for: to)
            else { continue }
            pairs.append((property.name, SQLiteDatabase.quote(sourceColumn), SQLiteDatabase.quote(destinationColumn)))
        }
        return pairs
    }

    /// Per attribute mapped from the source attribute of the same name, the instances whose
    /// source has a value and whose destination has none. First the values are counted on either
    /// side (a scan of the rows taken and of the rows made); only an attribute with fewer values
    /// in the destination is compared instance by instance, through the associations with the
    /// source attached. (A run that clears as many values of an attribute as it fills where the
    /// source had none is not seen.)
    private func countNilled(
        _ mapping: EntityMapping, request: FetchRequest, source: PersistentStore, destination: PersistentStore,
        associations: AssociationTable
    ) throws -> [(String, Int)] {
        guard let (sourceEntity, destinationEntity) = try comparedEntities(mapping) else { return [] }
        var pairs = try nilledPairs(mapping, source: source, destination: destination)
        if pairs.isEmpty { return [] }
        if let rows = takenRows(request, entity: sourceEntity, source: source) {
            // Counted as stage 1 went through the rows, or else by a scan of them.
            let sourceRow: [Int64]
            if let counted = run.nilledSourceCounts[mappingID(mapping)], counted.names == pairs.map({ $0.name }) {
                sourceRow = counted.counts.map { Int64($0) }
            } else {
                let row =
                    try source.database.rows(
                        "SELECT \(pairs.map { "COUNT(t.\($0.sourceColumn))" }.joined(separator: ", ")) \(rows.sql)",
                        rows.arguments
                    ).first ?? []
                sourceRow = pairs.indices.map { row.element(at: $0)?.integer ?? 0 }
            }
            // The rows made: the destination entity's own rows when no other mapping of the run makes any.
            let soleMaker = mappingModels.allSatisfy {
                $0.entityMappings.allSatisfy { $0 === mapping || $0.destinationEntity !== destinationEntity }
            }
            let table = "main.\(SQLiteDatabase.quote(destination.layout.table(for: destinationEntity))) d"
            let made: String
            if soleMaker {
                made =
                    table
                    + (destination.layout.entityRestriction(
                        for: destinationEntity, includingSubentities: false, qualifier: "d."
                    ).map { " WHERE \($0)" } ?? "")
            } else {
                made = table + " WHERE d.Z_PK IN (\(try associations.destinationKeysSQL(mapping: mappingID(mapping))))"
            }
            let destinationRow =
                try destination.database.rows(
                    "SELECT \(pairs.map { "COUNT(d.\($0.destinationColumn))" }.joined(separator: ", ")) FROM \(made)"
                ).first ?? []
            pairs = pairs.enumerated().filter { (i, _) in
                (destinationRow.element(at: i)?.integer ?? 0) < (sourceRow.element(at: i) ?? 0)
            }.map { $0.1 }
            if pairs.isEmpty { return [] }
        }
        guard run.sourceAccess?.allowsAttach == true else { return [] }
        try attachSource(source, to: destination)
        let associated = try associations.associationsSQL(mapping: mappingID(mapping))
        let sums = pairs.map { "SUM(s.\($0.sourceColumn) IS NOT NULL AND d.\($0.destinationColumn) IS NULL)" }
        let sql =
            "SELECT \(sums.joined(separator: ", ")) FROM (\(associated)) a "
            + "JOIN \(DeclarativeMappingSQL.sourceSchema).\(SQLiteDatabase.quote(source.layout.table(for: sourceEntity))) s ON s.Z_PK = a.source_pk "
            + "JOIN main.\(SQLiteDatabase.quote(destination.layout.table(for: destinationEntity))) d ON d.Z_PK = a.destination_pk"
        let row = try destination.database.rows(sql).first ?? []
        return pairs.enumerated().map { (i, pair) in (pair.name, Int(row.element(at: i)?.integer ?? 0)) }
    }
}
