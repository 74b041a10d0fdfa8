import CSQLite

/// Whether a step can be done as schema changes on a copy of the source file — tables and
/// columns renamed, columns added (nil or the attribute's default) and dropped, tables created
/// and dropped, entity numbers changed — instead of rewriting every row, and which changes.
///
/// A pure function of the source store's layout, the destination model and the mapping model:
/// `make` gives either the plan or the reason the step is not eligible, in which case the
/// general path runs. Eligible is only what gives, row for row, the store the general path
/// (the declarative `INSERT … SELECT` keeping the source keys) makes:
///
/// - one mapping model, no entity migration policy, no one-destination-per-distinct-value mapping;
/// - no entity inheritance in either model (a hierarchy shares a table, and the general path
///   renumbers the keys of all but the first entity mapped into it);
/// - each entity mapping takes one source entity whole (no predicate) into one destination
///   entity, or only adds or only removes one; no entity taken or made twice;
/// - every destination attribute is either a plain copy of a source attribute of the same type
///   (`$source.name`, under any name: a rename) or has no mapping, and then gets its default
///   value (a constant SQLite can store as the general path stores it);
/// - every to-one relationship is kept in a foreign key column of its own table (no entity or
///   ordering column, not a one-to-one) and is either new (nil) or continues a source to-one of
///   the same kind, looked up through the mapping that takes the source target into its target;
///   a to-many is the inverse of such a to-one; no many-to-many (join tables), no to-many
///   without inverse, nothing ordered;
/// - no attribute with external binary data storage on either side.
///
/// What the rows hold is checked by the executor on the copy (`SchemaStepCheck`): values that do
/// not fit their type, rows of another entity number, foreign keys to missing rows, all of which
/// the general path treats otherwise, send the step to the general path.
struct SchemaStepPlan {
    /// One change to the copy's schema, in the order the executor applies them.
    enum Change: Equatable {
        case dropTable(String)
        case renameTable(from: String, to: String)
        case renameColumn(table: String, from: String, to: String)
        case addColumn(table: String, column: String, type: String, defaultSQL: String?)
        case dropColumn(table: String, column: String)
        /// A new entity's table, with its indexes, as a new store has it.
        case createTable(name: String, statements: [String])
        /// Every row of the table gets the destination entity number.
        case renumberEntity(table: String, from: Int, to: Int)

        /// The SQL statements of the change.
        var statements: [String] {
            let q = SchemaStepPlan.identifier
            switch self {
            case .dropTable(let table): return ["DROP TABLE \(q(table))"]
            case .renameTable(let from, let to): return ["ALTER TABLE \(q(from)) RENAME TO \(q(to))"]
            case .renameColumn(let table, let from, let to):
                return ["ALTER TABLE \(q(table)) RENAME COLUMN \(q(from)) TO \(q(to))"]
            case .addColumn(let table, let column, let type, let defaultSQL):
                return [
                    "ALTER TABLE \(q(table)) ADD COLUMN \(q(column)) \(type)"
                        + (defaultSQL.map { " DEFAULT \($0)" } ?? "")
                ]
            case .dropColumn(let table, let column): return ["ALTER TABLE \(q(table)) DROP COLUMN \(q(column))"]
            case .createTable(_, let statements): return statements
            case .renumberEntity(let table, _, let to): return ["UPDATE \(q(table)) SET Z_ENT = \(to)"]
            }
        }

        /// The change in words, for the run report.
        var summary: String {
            switch self {
            case .dropTable(let table): return "dropped table \(table)"
            case .renameTable(let from, let to): return "renamed table \(from) to \(to)"
            case .renameColumn(let table, let from, let to): return "renamed column \(table).\(from) to \(to)"
            case .addColumn(let table, let column, _, let defaultSQL):
                return "added column \(table).\(column)" + (defaultSQL.map { " (default \($0))" } ?? "")
            case .dropColumn(let table, let column): return "dropped column \(table).\(column)"
            case .createTable(let name, _): return "created table \(name)"
            case .renumberEntity(let table, let from, let to):
                return "renumbered the entity of \(table) from \(from) to \(to)"
            }
        }
    }

    /// A table the step keeps (renamed or not), by its destination name: what the executor checks in its rows.
    struct KeptTable: Equatable {
        var name: String
        /// The table's name in the source store.
        var sourceName: String
        /// The entity mapping taking the table's rows.
        var mappingName: String
        /// The source entity number every row must have.
        var sourceEntityNumber: Int
        var destinationEntityNumber: Int
        /// Columns carried over from the source (destination names, source names) with the type they hold.
        var carriedColumns: [(column: String, sourceColumn: String, type: AttributeType)]
        /// Foreign key columns carried over (destination names, source names) and the table their
        /// targets are in (destination and source names).
        var foreignKeys: [(column: String, sourceColumn: String, targetTable: String, targetSourceTable: String)]
        /// Columns added, with the SQL literal every row reads in them (`NULL` for none).
        var addedColumns: [(column: String, literal: String)] = []
        /// Carried columns (destination names) whose destination rules ask nothing the source
        /// model did not already ask of the same type (`SchemaStepPlan.promises`): the scan reads
        /// them neither for their storage classes nor for their rules.
        var unchangedColumns: Set<String> = []

        static func == (a: KeptTable, b: KeptTable) -> Bool {
            a.name == b.name && a.sourceName == b.sourceName && a.mappingName == b.mappingName
                && a.sourceEntityNumber == b.sourceEntityNumber
                && a.destinationEntityNumber == b.destinationEntityNumber
                && a.carriedColumns.map { "\($0.column) \($0.sourceColumn) \($0.type.rawValue)" }
                    == b.carriedColumns.map { "\($0.column) \($0.sourceColumn) \($0.type.rawValue)" }
                && a.foreignKeys.map { "\($0.column) \($0.sourceColumn) \($0.targetTable) \($0.targetSourceTable)" }
                    == b.foreignKeys.map { "\($0.column) \($0.sourceColumn) \($0.targetTable) \($0.targetSourceTable)" }
                && a.addedColumns.map { "\($0.column) \($0.literal)" }
                    == b.addedColumns.map { "\($0.column) \($0.literal)" }
                && a.unchangedColumns == b.unchangedColumns
        }
    }

    /// An identifier as SQL: bare when it is a plain word that is not a keyword (as a new store
    /// spells its names, and as `ALTER TABLE` then writes it into the schema), quoted otherwise.
    static func identifier(_ name: String) -> String {
        let bytes = Array(name.utf8)
        let plain =
            !bytes.isEmpty && !(bytes[0] >= 48 && bytes[0] <= 57)
            && bytes.allSatisfy { b in
                (b >= 65 && b <= 90) || (b >= 97 && b <= 122) || (b >= 48 && b <= 57) || b == 95
            }
        guard plain else { return SQLiteDatabase.quote(name) }
        let keyword = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) {
                sqlite3_keyword_check($0.baseAddress, Int32(clamping: $0.count))
            }
        }
        return keyword != 0 ? SQLiteDatabase.quote(name) : name
    }

    /// The changes, in order.
    var changes: [Change] = []
    /// The tables kept, for the executor's checks of their rows.
    var keptTables: [KeptTable] = []
    /// Source column → destination column per kept table (source table name → pairs), for the indexes.
    var columnRenames: [String: (table: String, columns: [String: String])] = [:]

    /// Either the plan or why the step is not eligible.
    enum Outcome {
        case eligible(SchemaStepPlan)
        case notEligible(String)
    }

    /// The plan for migrating a store laid out as `sourceLayout` to `destinationModel` with
    /// `mappingModels`, or the reason the general path must run.
    static func make(sourceLayout: StoreLayout, destinationModel: ManagedObjectModel, mappingModels: [MappingModel])
        -> Outcome
    {
        do {
            return .eligible(
                try Builder(
                    sourceLayout: sourceLayout, destinationModel: destinationModel, mappingModels: mappingModels
                ).build())
        } catch let reason as NotEligible {
            return .notEligible(reason.text)
        } catch {
            return .notEligible("\(error)")
        }
    }

    struct NotEligible: Error { let text: String }

    private struct Builder {
        let sourceLayout: StoreLayout
        let destinationLayout: StoreLayout
        let sourceModel: ManagedObjectModel
        let destinationModel: ManagedObjectModel
        let mappingModels: [MappingModel]

        init(sourceLayout: StoreLayout, destinationModel: ManagedObjectModel, mappingModels: [MappingModel]) {
            self.sourceLayout = sourceLayout
            self.sourceModel = sourceLayout.model
            self.destinationModel = destinationModel
            self.destinationLayout = StoreLayout(model: destinationModel)
            self.mappingModels = mappingModels
        }

        func fail(_ text: String) -> NotEligible { NotEligible(text: text) }

        func build() throws -> SchemaStepPlan {
            guard mappingModels.count == 1, let model = mappingModels.first else {
                throw fail("the migration has \(mappingModels.count) passes")
            }
            for (side, entities) in [("source", sourceModel.entities), ("destination", destinationModel.entities)] {
                if let entity = entities.first(where: { $0.parent != nil || !$0.subentities.isEmpty }) {
                    throw fail("\(side) entity '\(entity.name)' is part of an entity hierarchy")
                }
                for entity in entities {
                    if let attribute = entity.attributes.first(where: {
                        ExternalBinaryData.applies(to: $0) && !$0.isTransient
                    }) {
                        throw fail(
                            "\(side) attribute '\(entity.name).\(attribute.name)' allows external binary data storage")
                    }
                }
            }
            // Destination entity → (mapping, source entity); source entities taken.
            var pairs: [(mapping: EntityMapping, source: EntityDescription, destination: EntityDescription)] = []
            var taken = Set<ObjectIdentifier>()
            var made = Set<ObjectIdentifier>()
            for mapping in model.entityMappings {
                if let policy = mapping.entityMigrationPolicyClassName {
                    throw fail("entity mapping '\(mapping.name)' has the policy '\(policy)'")
                }
                if mapping.userInfo[DistinctValueMapping.userInfoKey] != nil {
                    throw fail("entity mapping '\(mapping.name)' makes one destination per distinct value")
                }
                switch (mapping.sourceEntity, mapping.destinationEntity) {
                case (let source?, let destination?):
                    guard let expression = mapping.sourceExpression else {
                        throw fail("entity mapping '\(mapping.name)' has no source expression")
                    }
                    guard case .constant(true) = expression.predicate else {
                        throw fail("entity mapping '\(mapping.name)' takes its source instances with a predicate")
                    }
                    guard !destination.isAbstract else {
                        throw fail(
                            "entity mapping '\(mapping.name)' makes instances of abstract entity '\(destination.name)'")
                    }
                    guard taken.insert(ObjectIdentifier(source)).inserted else {
                        throw fail("source entity '\(source.name)' is taken by several entity mappings")
                    }
                    guard made.insert(ObjectIdentifier(destination)).inserted else {
                        throw fail("destination entity '\(destination.name)' is made by several entity mappings")
                    }
                    pairs.append((mapping, source, destination))
                case (nil, _?):
                    if mapping.sourceExpression != nil {
                        throw fail("entity mapping '\(mapping.name)' has a source expression but no source entity")
                    }
                case (_?, nil):
                    break  // removed: its rows stay behind, its table goes
                case (nil, nil):
                    throw fail("entity mapping '\(mapping.name)' names neither a source nor a destination entity")
                }
            }
            func pair(ofSource entity: EntityDescription) -> (
                mapping: EntityMapping, source: EntityDescription, destination: EntityDescription
            )? {
                pairs.first { $0.source === entity }
            }
            for entity in sourceModel.entities {
                for relationship in entity.relationships where !relationship.isTransient {
                    switch sourceLayout.storage(of: relationship) {
                    case .joinTable:
                        throw fail(
                            "source relationship '\(entity.name).\(relationship.name)' is a many-to-many (join table)")
                    case .hiddenColumn:
                        throw fail(
                            "source relationship '\(entity.name).\(relationship.name)' is a to-many without inverse")
                    case .foreignKey(_, let e, let o) where e != nil || o != nil:
                        throw fail(
                            "source relationship '\(entity.name).\(relationship.name)' has an entity or ordering column"
                        )
                    default: break
                    }
                    if relationship.isOrdered {
                        throw fail("source relationship '\(entity.name).\(relationship.name)' is ordered")
                    }
                }
            }

            var plan = SchemaStepPlan()
            var drops: [Change] = []
            var renames: [(from: String, to: String)] = []
            var columnChanges: [Change] = []
            var creates: [Change] = []
            var renumbers: [Change] = []
            // Tables of removed source entities.
            for entity in sourceModel.entitiesInStoreOrder where !taken.contains(ObjectIdentifier(entity)) {
                drops.append(.dropTable(sourceLayout.table(for: entity)))
            }
            for entity in destinationModel.entitiesInStoreOrder {
                let table = destinationLayout.table(for: entity)
                guard let (mapping, source, _) = pairs.first(where: { $0.destination === entity }) else {
                    guard let definition = destinationLayout.tables.first(where: { $0.name == table }) else {
                        throw fail("destination entity '\(entity.name)' has no table in the destination layout")
                    }
                    creates.append(.createTable(name: table, statements: definition.createStatements))
                    continue
                }
                let sourceTable = sourceLayout.table(for: source)
                guard let sourceDefinition = sourceLayout.tables.first(where: { $0.name == sourceTable }) else {
                    throw fail("source entity '\(source.name)' has no table in the source store")
                }
                if sourceTable != table { renames.append((sourceTable, table)) }
                let from = sourceLayout.entityNumber(of: source)
                let to = destinationLayout.entityNumber(of: entity)
                if from != to { renumbers.append(.renumberEntity(table: table, from: from, to: to)) }
                var kept = KeptTable(
                    name: table, sourceName: sourceTable, mappingName: mapping.name, sourceEntityNumber: from,
                    destinationEntityNumber: to,
                    carriedColumns: [], foreignKeys: [])
                // source → destination
                var columnMap: [String: String] = ["Z_PK": "Z_PK", "Z_ENT": "Z_ENT", "Z_OPT": "Z_OPT"]
                var added: [Change] = []
                func carry(_ sourceColumn: String, to column: String, what: String) throws {
                    if columnMap[sourceColumn] != nil {
                        throw fail("\(what): source column \(sourceTable).\(sourceColumn) would be carried twice")
                    }
                    columnMap[sourceColumn] = column
                }
                for attribute in entity.attributes where !attribute.isTransient {
                    let what = "attribute '\(entity.name).\(attribute.name)'"
                    guard let column = destinationLayout.column(for: attribute) else { continue }
                    if let expression = mapping.attributeMapping(named: attribute.name)?.valueExpression {
                        guard let key = IntendedLosses.sameKeyCopy(expression),
                            let origin = source.attribute(named: key), !origin.isTransient,
                            let sourceColumn = sourceLayout.column(for: origin)
                        else {
                            throw fail("\(what) has a value expression other than a copy of a source attribute")
                        }
                        guard origin.attributeType == attribute.attributeType else {
                            throw fail(
                                "\(what) changes type from \(origin.attributeType.rawValue) to \(attribute.attributeType.rawValue)"
                            )
                        }
                        if attribute.attributeType == .transformable
                            && origin.valueTransformerName != attribute.valueTransformerName
                        {
                            throw fail("\(what) changes its value transformer")
                        }
                        try carry(sourceColumn, to: column, what: what)
                        kept.carriedColumns.append((column, sourceColumn, attribute.attributeType))
                        if SchemaStepPlan.promises(origin, attribute) { kept.unchangedColumns.insert(column) }
                    } else {
                        if !attribute.isOptional && attribute.defaultValue.isNull {
                            throw fail("\(what) is new, non-optional and has no default value")
                        }
                        guard let literal = DeclarativeMappingSQL.literal(attribute.defaultValue) else {
                            throw fail(
                                "\(what) is new and its default value is not a constant SQLite stores as the general path does"
                            )
                        }
                        added.append(
                            .addColumn(
                                table: table, column: column, type: attribute.attributeType.sqlColumnType,
                                defaultSQL: literal == "NULL" ? nil : literal))
                        kept.addedColumns.append((column, literal))
                    }
                }
                for relationship in entity.relationships where !relationship.isTransient {
                    let what = "relationship '\(entity.name).\(relationship.name)'"
                    if relationship.isOrdered { throw fail("\(what) is ordered") }
                    let expression = mapping.relationshipMapping(named: relationship.name)?.valueExpression
                    switch destinationLayout.storage(of: relationship) {
                    case .foreignKey(let column, nil, nil):
                        if let inverse = relationship.inverseRelationship, !inverse.isToMany {
                            throw fail("\(what) is a one-to-one")
                        }
                        guard let expression = expression else {
                            if !relationship.isOptional { throw fail("\(what) is new and non-optional") }
                            added.append(.addColumn(table: table, column: column, type: "INTEGER", defaultSQL: nil))
                            kept.addedColumns.append((column, "NULL"))
                            continue
                        }
                        guard let origin = sourceRelationship(expression, from: source, model: model), !origin.isToMany,
                            case .foreignKey(let sourceColumn, nil, nil) = sourceLayout.storage(of: origin),
                            let originTarget = origin.destinationEntity, let targetPair = pair(ofSource: originTarget),
                            targetPair.destination === relationship.destinationEntity,
                            expressionTakes(expression, mapping: targetPair.mapping)
                        else {
                            throw fail("\(what) is not set from a source to-one through the mapping of its target")
                        }
                        try carry(sourceColumn, to: column, what: what)
                        if relationship.isOptional || !origin.isOptional { kept.unchangedColumns.insert(column) }
                        kept.foreignKeys.append(
                            (
                                column, sourceColumn, destinationLayout.table(for: targetPair.destination),
                                sourceLayout.table(for: targetPair.source)
                            ))
                    case .inverseForeignKey:
                        guard relationship.isToMany, let inverse = relationship.inverseRelationship, !inverse.isToMany
                        else {
                            throw fail("\(what) is a one-to-one")
                        }
                        guard let expression = expression else { continue }
                        // Set by its inverse: that to-one must continue the inverse of the source to-many this one continues.
                        guard let origin = sourceRelationship(expression, from: source, model: model), origin.isToMany,
                            let originTarget = origin.destinationEntity, let targetPair = pair(ofSource: originTarget),
                            targetPair.destination === relationship.destinationEntity,
                            expressionTakes(expression, mapping: targetPair.mapping),
                            let inverseExpression = targetPair.mapping.relationshipMapping(named: inverse.name)?
                                .valueExpression,
                            let inverseOrigin = sourceRelationship(
                                inverseExpression, from: targetPair.source, model: model),
                            inverseOrigin === origin.inverseRelationship
                        else {
                            throw fail("\(what) is not the inverse of a to-one continued from the source")
                        }
                    case .foreignKey:
                        throw fail("\(what) has an entity or ordering column")
                    case .joinTable:
                        throw fail("\(what) is a many-to-many (join table)")
                    case .hiddenColumn:
                        throw fail("\(what) is a to-many without inverse")
                    case .transient:
                        continue
                    }
                }
                // Renames (through temporary names where one column takes another's name), drops, adds.
                let sourceColumns = sourceDefinition.columns.map { $0.name }
                let moves = sourceColumns.compactMap { c -> (String, String)? in
                    guard let to = columnMap[c], to != c else { return nil }
                    return (c, to)
                }
                let dropped = sourceColumns.filter { columnMap[$0] == nil }
                let finalNames = Set(
                    columnMap.values.map { $0.uppercased() }
                        + added.compactMap { change -> String? in
                            if case .addColumn(_, let c, _, _) = change { return c.uppercased() }
                            return nil
                        })
                for column in dropped { columnChanges.append(.dropColumn(table: table, column: column)) }
                let clash = moves.contains { move in
                    sourceColumns.contains { $0.uppercased() == move.1.uppercased() && $0 != move.0 }
                }
                if clash {
                    for (i, move) in moves.enumerated() {
                        columnChanges.append(.renameColumn(table: table, from: move.0, to: "cdm_column_\(i)"))
                    }
                    for (i, move) in moves.enumerated() {
                        columnChanges.append(.renameColumn(table: table, from: "cdm_column_\(i)", to: move.1))
                    }
                } else {
                    for move in moves { columnChanges.append(.renameColumn(table: table, from: move.0, to: move.1)) }
                }
                columnChanges += added
                if finalNames.count != columnMap.count + added.count {
                    throw fail("two columns of table \(table) would have the same name")
                }
                plan.keptTables.append(kept)
                plan.columnRenames[sourceTable] = (table, columnMap)
            }
            // Table renames through temporary names when one table takes another's name.
            let sourceTables = Set(sourceLayout.tables.map { $0.name.uppercased() })
            var tableChanges: [Change] = []
            if renames.contains(where: { sourceTables.contains($0.to.uppercased()) }) {
                for (i, rename) in renames.enumerated() {
                    tableChanges.append(.renameTable(from: rename.from, to: "cdm_table_\(i)"))
                }
                for (i, rename) in renames.enumerated() {
                    tableChanges.append(.renameTable(from: "cdm_table_\(i)", to: rename.to))
                }
            } else {
                for rename in renames { tableChanges.append(.renameTable(from: rename.from, to: rename.to)) }
            }
            plan.changes = drops + tableChanges + columnChanges + creates + renumbers
            return plan
        }

        /// The source relationship an expression of the two look-up forms continues.
        func sourceRelationship(_ expression: ValueExpression, from source: EntityDescription, model: MappingModel)
            -> RelationshipDescription?
        {
            guard case .function(.variable("manager"), let selector, let arguments) = expression, arguments.count == 2,
                let name = arguments[0].constantValue?.stringValue, let key = IntendedLosses.sameKeyCopy(arguments[1]),
                let relationship = source.relationship(named: key)
            else { return nil }
            switch selector {
            case "destinationInstancesForSourceRelationshipNamed:sourceInstances:":
                return name == key ? relationship : nil
            case "destinationInstancesForEntityMappingNamed:sourceInstances:":
                return model.entityMapping(named: name) != nil ? relationship : nil
            default: return nil
            }
        }

        /// Whether the look-up of `expression` goes through `mapping` (the one taking the source target).
        func expressionTakes(_ expression: ValueExpression, mapping: EntityMapping) -> Bool {
            guard case .function(.variable("manager"), let selector, let arguments) = expression, arguments.count == 2,
                let name = arguments[0].constantValue?.stringValue
            else { return false }
            return selector == "destinationInstancesForSourceRelationshipNamed:sourceInstances:" || name == mapping.name
        }
    }

    /// Whether every value the source model allows in `origin` passes the destination's rules for
    /// `attribute` (the same type, checked by the caller): the destination is optional or the
    /// source was required, and its bounds hold the source's. Core Data validated the source's
    /// rules when it saved, so such a column is carried without reading it, as Core Data's own
    /// lightweight migration carries a column it does not change.
    static func promises(_ origin: AttributeDescription, _ attribute: AttributeDescription) -> Bool {
        guard origin.attributeType == attribute.attributeType, attribute.isOptional || !origin.isOptional else {
            return false
        }
        let (fromLower, fromUpper) = DestinationValidation.bounds(of: origin)
        let (lower, upper) = DestinationValidation.bounds(of: attribute)
        if attribute.attributeType.isNumeric {
            if let lower = lower, !(fromLower.map { $0 >= lower } ?? false) { return false }
            if let upper = upper, !(fromUpper.map { $0 <= upper } ?? false) { return false }
        }
        return true
    }

}
