/// What a step done as schema changes (`SchemaStepPlan`) learns from the source's rows before it
/// copies anything: one pass over each kept table, counting its rows and the rows that matter,
/// and the other counts the report needs.
///
/// The scan checks only what the model change can break, as Core Data's own lightweight migration
/// of an SQLite store changes the schema and leaves alone the rows it does not change. Its one
/// condition per table asks, row by row with SQLite's short-circuit evaluation: a row of
/// another entity number or a `Z_OPT` other than 1 (the first fields of every record, cheap to
/// read); a foreign key to no row; and, only for a carried column whose destination rules ask more
/// than its source attribute's (`SchemaStepPlan.promises`: it becomes required, or its bounds
/// narrow), a value of a storage class the general path converts or a value the destination's
/// rules refuse. An added column's rules are checked on its constant. A column the model change
/// does not touch is carried as it is, unread: the source model already promised its values and
/// Core Data validated them when it saved; on a store holding something else there (a value of
/// another storage class, a nil where the source model already required a value), the step keeps
/// the value where the general path would convert or refuse it (docs/schema-step.md).
///
/// One row found: a second look tells which; all but `Z_OPT` send the step to the general path,
/// which then converts, drops or fails exactly as it always does (so a failure is the general
/// path's own error, not a second implementation of it). The row count comes from the same pass
/// (`COUNT(*), COUNT(*) FILTER (WHERE …)`: the table's pages are read once, not once to count and
/// once to check) and the key's `MIN`/`MAX` from two look-ups. Only dropped attributes cost one
/// aggregate query more, all their columns in that one query, for the loss report's non-nil counts.
struct SchemaStepScan {
    /// What the scan found in one kept table.
    struct Table {
        var count = 0
        var low: Int64?
        var high: Int64?
        /// Some row's `Z_OPT` is not 1, or its entity number moves: the rows get the destination's.
        var rewritesRows = false
        /// Non-nil values of the attributes the mapping leaves behind, in the order given.
        var leftBehind: [Int] = []
    }

    /// Per kept table (destination name).
    var tables: [String: Table] = [:]
    /// Whether a relationship rule of `DestinationValidation` needs counting to-manys: then the
    /// destination is validated as the general path validates it, after the changes.
    var needsFullValidation = false

    /// Scans the source's kept tables; throws `SchemaStepPlan.NotEligible` naming the first row
    /// the general path would treat otherwise, or that would not validate.
    ///
    /// - parameter leftBehind: per kept table (destination name), the source columns whose non-nil
    ///   values the loss report counts.
    static func scan(
        _ plan: SchemaStepPlan, source: SQLiteDatabase, destinationModel: ManagedObjectModel,
        leftBehind: [String: [String]], isCancelled: () throws -> Void
    ) throws -> SchemaStepScan {
        let layout = StoreLayout(model: destinationModel)
        var result = SchemaStepScan()
        for kept in plan.keptTables {
            try isCancelled()
            let table = "main." + SQLiteDatabase.quote(kept.sourceName)
            // The key's range: two look-ups, no row read.
            let range =
                try source.rows("SELECT (SELECT MIN(Z_PK) FROM \(table)), (SELECT MAX(Z_PK) FROM \(table))").first
                ?? []
            var found = Table(count: 0, low: range.element(at: 0)?.integer, high: range.element(at: 1)?.integer)
            if let low = found.low, let high = found.high, low < 1 || high > Int64.max / 2 {
                // As `DeclarativeMappingSQL.sourceKeysLeaveRoom`: such keys are renumbered by the general path.
                throw SchemaStepPlan.NotEligible(
                    text: "table \(kept.sourceName) has primary keys outside 1…\(Int64.max / 2)")
            }
            guard
                let entity = destinationModel.entitiesInStoreOrder.first(where: { layout.table(for: $0) == kept.name })
            else {
                throw SchemaStepPlan.NotEligible(text: "table \(kept.name) has no destination entity")
            }
            let differs = try conditions(kept, source: source)
            let (rules, full) = validationRules(kept, entity: entity, layout: layout)
            if full { result.needsFullValidation = true }
            var any = ["Z_ENT IS NOT \(kept.sourceEntityNumber)"] + differs + rules.map { $0.condition }
            any.append("Z_OPT IS NOT 1")
            // One pass over the rows: how many there are, and how many of them match a condition
            // (in the usual case none, read to the end; the row, when there is one, is found below).
            let counted =
                found.low == nil
                ? []
                : try source.rows(
                    "SELECT COUNT(*), COUNT(*) FILTER (WHERE " + any.map { "(\($0))" }.joined(separator: " OR ")
                        + ") FROM \(table) t"
                ).first ?? []
            found.count = Int(counted.element(at: 0)?.integer ?? 0)
            if found.count > 0, (counted.element(at: 1)?.integer ?? 1) != 0 {
                let converted = (["Z_ENT IS NOT \(kept.sourceEntityNumber)"] + differs).map { "(\($0))" }.joined(
                    separator: " OR ")
                if let pk = try source.scalar("SELECT Z_PK FROM \(table) t WHERE \(converted) ORDER BY Z_PK LIMIT 1")?
                    .integer
                {
                    throw SchemaStepPlan.NotEligible(
                        text:
                            "row \(pk) of table \(kept.sourceName) has a value the general path does not copy as it is")
                }
                for rule in rules {
                    if let pk = try source.scalar(
                        "SELECT Z_PK FROM \(table) t WHERE \(rule.condition) ORDER BY Z_PK LIMIT 1")?.integer
                    {
                        throw SchemaStepPlan.NotEligible(
                            text:
                                "row \(pk) of table \(kept.sourceName) does not validate (\(rule.what)): the general path reports it"
                        )
                    }
                }
                found.rewritesRows = true  // only Z_OPT is left
            }
            if kept.sourceEntityNumber != kept.destinationEntityNumber && found.count > 0 { found.rewritesRows = true }
            let columns = leftBehind[kept.name] ?? []
            if !columns.isEmpty && found.count > 0 {
                let row =
                    try source.rows(
                        "SELECT " + columns.map { "COUNT(\(SQLiteDatabase.quote($0)))" }.joined(separator: ", ")
                            + " FROM \(table)"
                    ).first ?? []
                found.leftBehind = columns.indices.map { Int(row.element(at: $0)?.integer ?? 0) }
            } else {
                found.leftBehind = columns.map { _ in 0 }
            }
            result.tables[kept.name] = found
        }
        return result
    }

    /// Per carried column, the condition on a source row (alias `t`) under which the general path
    /// would not copy its value as it is.
    private static func conditions(_ kept: SchemaStepPlan.KeptTable, source: SQLiteDatabase) throws -> [String] {
        var conditions: [String] = []
        for (column, sourceColumn, type) in kept.carriedColumns where !kept.unchangedColumns.contains(column) {
            let c = SQLiteDatabase.quote(sourceColumn)
            if let bad = MigrationManager.storageClassesConverted(for: type) {
                // typeof() reads only the record header; one comparison per class.
                conditions.append(bad.map { "typeof(\(c)) = '\($0)'" }.joined(separator: " OR "))
            } else {
                let read = StoredValueRule.sql(c, as: type)
                if read != c { conditions.append("\(read) IS NOT \(c) OR typeof(\(read)) != typeof(\(c))") }
            }
        }
        for (_, sourceColumn, _, targetSourceTable) in kept.foreignKeys {
            let c = "t." + SQLiteDatabase.quote(sourceColumn)
            let target = "main." + SQLiteDatabase.quote(targetSourceTable)
            // Keys without gaps (the usual case): a range check instead of a look-up per row.
            let range =
                try source.rows(
                    "SELECT (SELECT COUNT(*) FROM \(target)), (SELECT MIN(Z_PK) FROM \(target)), (SELECT MAX(Z_PK) FROM \(target))"
                ).first ?? []
            if let count = range.element(at: 0)?.integer, let low = range.element(at: 1)?.integer,
                let high = range.element(at: 2)?.integer,
                high >= low, high.subtractingReportingOverflow(low).partialValue == count - 1,
                !high.subtractingReportingOverflow(low).overflow
            {
                conditions.append("\(c) IS NOT NULL AND (typeof(\(c)) != 'integer' OR \(c) < \(low) OR \(c) > \(high))")
            } else {
                conditions.append("\(c) IS NOT NULL AND NOT EXISTS (SELECT 1 FROM \(target) k WHERE k.Z_PK = \(c))")
            }
        }
        return conditions
    }

    /// `DestinationValidation`'s rules for the kept table's attributes and to-ones, as conditions
    /// on the source row (a carried column under its source name, an added one as its constant),
    /// and whether a rule counting to-manys applies (checked on the destination instead).
    private static func validationRules(
        _ kept: SchemaStepPlan.KeptTable, entity: EntityDescription,
        layout: StoreLayout
    ) -> (rules: [(condition: String, what: String)], full: Bool) {
        var sourceExpression: [String: String] = [:]
        for carried in kept.carriedColumns where !kept.unchangedColumns.contains(carried.column) {
            sourceExpression[carried.column] = SQLiteDatabase.quote(carried.sourceColumn)
        }
        for key in kept.foreignKeys where !kept.unchangedColumns.contains(key.column) {
            sourceExpression[key.column] = "t." + SQLiteDatabase.quote(key.sourceColumn)
        }
        for added in kept.addedColumns { sourceExpression[added.column] = added.literal }
        var rules: [(String, String)] = []
        for attribute in entity.attributes where !attribute.isTransient {
            guard let column = layout.column(for: attribute), let value = sourceExpression[column] else { continue }
            let name = "\(entity.name).\(attribute.name)"
            if !attribute.isOptional { rules.append(("\(value) IS NULL", "\(name) is required but nil")) }
            var lower = attribute.minValue
            var upper = attribute.maxValue
            if let range = attribute.attributeType.integerRange {
                lower = max(lower ?? Double(range.lowerBound), Double(range.lowerBound))
                upper = min(upper ?? Double(range.upperBound), Double(range.upperBound))
            }
            guard attribute.attributeType.isNumeric else { continue }
            if let upper = upper { rules.append(("\(value) > \(Value.format(upper))", "\(name) is above its maximum")) }
            if let lower = lower { rules.append(("\(value) < \(Value.format(lower))", "\(name) is below its minimum")) }
        }
        var full = false
        for relationship in entity.relationships where !relationship.isTransient {
            switch layout.storage(of: relationship) {
            case .foreignKey(let column, _, _):
                if !relationship.isOptional, let value = sourceExpression[column] {
                    rules.append(("\(value) IS NULL", "\(entity.name).\(relationship.name) is required but nil"))
                }
            case .transient:
                continue
            default:
                let minimum = relationship.isToMany ? relationship.minCount : 1
                if (relationship.allowsEmpty && minimum > 1) || !relationship.allowsEmpty
                    || (relationship.isToMany && relationship.maxCount > 0)
                {
                    full = true
                }
            }
        }
        return (rules, full)
    }
}
