/// Stage 1 of a declarative entity mapping as one `INSERT … SELECT` from the attached source:
/// when the mapping has no custom policy, its source predicate translates to SQL and every
/// attribute mapping is a plain copy, a constant or `+ - *` arithmetic on numbers between
/// attributes of matching types, SQLite makes the destination rows and the associations itself,
/// without a Swift object per row. Anything else runs the row-by-row path, with the same result.
struct DeclarativeMappingSQL {
    /// The INSERT making the destination rows, and the INSERT recording the associations; both
    /// number the source rows the same way (`ROW_NUMBER() OVER (ORDER BY Z_PK)`), so row n of the
    /// source becomes primary key `first + n - 1`. The first `?` of each is `first - 1`.
    /// When the plan keeps the source keys (`keepsSourceKeys`), the INSERT copies `Z_PK` as it is,
    /// has no `?` of its own, and `insertAssociations` is nil: the associations are identities
    /// (see `AssociationTable.IdentityRange`).
    ///
    /// `insertRows` reads the source columns bare, with one `cdm_plain` check per row
    /// (`StoredValueRule.plainRowCheck`, as `Z_OPT`); `insertRowsConverting`, when some column is
    /// checked, is the same INSERT reading every column through `StoredValueRule.sql`. Run them
    /// with `runInsertRows`.
    let insertRows: String
    var insertRowsConverting: String? = nil
    /// For a plan keeping the source keys: `insertRows` without `Z_PK`, SQLite numbering the rows
    /// 1, 2, 3, … as it appends them (no seek of the key per row), its check testing that each
    /// source key is the next of that sequence (`StoredValueRule.keyCode`). Run it only into an
    /// empty table; `runInsertRows` does.
    var insertRowsDense: String? = nil
    /// With `insertRowsDense`: `insertRows` for the source rows after a key, its last `?`.
    var insertRowsAfterKey: String? = nil
    let insertAssociations: String?
    /// The predicate's arguments, after the first key's.
    let predicateArguments: [Value]
    let keepsSourceKeys: Bool

    func arguments(firstPrimaryKey: Int64) -> [Value] { [.integer(firstPrimaryKey - 1)] + predicateArguments }

    /// The destination table, `main.` and quoted.
    var destinationTable = ""

    /// The destination attributes whose stage-3 rules `insertRows` enforces for every row it
    /// writes (see `ValidatedByCopy`): those it copies bare from a source column, its check then
    /// recording a row that breaks a rule, and those it sets to a constant that meets them.
    var attributesValidated: Set<String> = []

    /// Whether `insertRows` counts the non-NULL values of the `counting` columns of `plan` (in
    /// the connection's `valueCounts`, in that order).
    var countsValues = false

    /// Runs `insertRows`. When a row holds a value that needs `StoredValueRule`'s conversion,
    /// the rows it wrote (destination keys in `keys`, which no other row of the table has) are
    /// deleted — a private destination has no journal to roll the statement back — and
    /// `insertRowsConverting` runs instead: the rows are those the converting INSERT alone writes.
    /// Returns whether `insertRows` wrote the rows (`bare`: its value counts, if any, are then
    /// complete) and how many rows the copy wrote.
    ///
    /// With `dense`, when the destination table is empty, `insertRowsDense` runs first: SQLite
    /// numbers the rows while the source keys are 1, 2, 3, …; at the first key out of sequence the
    /// rows written stay (they are the source rows of keys 1…n) and `insertRowsAfterKey` copies
    /// the rest with their keys, the value counts going on. No count of the source is needed to
    /// choose: a source whose first key is not 1 stops at its first row.
    @discardableResult
    func runInsertRows(
        on database: SQLiteDatabase, _ arguments: [Value], keys: ClosedRange<Int64>, dense: Bool = false
    ) throws -> (bare: Bool, rows: Int) {
        if dense, let insertRowsDense, let insertRowsAfterKey, keepsSourceKeys,
            try database.scalar("SELECT MAX(Z_PK) FROM \(destinationTable)")?.integer == nil
        {
            database.valueCounts.counts = []
            database.valueCounts.lastKey = 0
            var rest: String? = nil
            do {
                try database.run(insertRowsDense, arguments)
            } catch let error as MigrationError where error.message.contains(StoredValueRule.keysNotDense) {
                rest = insertRowsAfterKey
            } catch let error as MigrationError where error.message.contains(StoredValueRule.needsConversion) {
                return try runConverting(after: error, on: database, arguments, keys: keys)
            }
            // Every row SQLite numbered is the source row of that key (1 … lastKey).
            let last = database.valueCounts.lastKey
            let low = try database.scalar("SELECT MIN(Z_PK) FROM \(destinationTable)")?.integer
            let high = try database.scalar("SELECT MAX(Z_PK) FROM \(destinationTable)")?.integer
            let numbered = (last == 0 && low == nil) || (low == 1 && high == last)
            if numbered, rest == nil { return (true, Int(last)) }
            if numbered, let rest, last > 0 {
                do {
                    try database.run(rest, arguments + [.integer(last)])
                    return (true, Int(last) + database.changes)
                } catch let error as MigrationError where error.message.contains(StoredValueRule.needsConversion) {
                    return try runConverting(after: error, on: database, arguments, keys: keys)
                }
            }
            // Nothing numbered (the first key was not 1), or not as checked: the copy with the keys, whole.
            if !numbered { try database.run("DELETE FROM \(destinationTable)") }
        }
        database.valueCounts.counts = []
        do {
            try database.run(insertRows, arguments)
            return (true, database.changes)
        } catch let error as MigrationError where error.message.contains(StoredValueRule.needsConversion) {
            return try runConverting(after: error, on: database, arguments, keys: keys)
        }
    }

    /// After `error`, a row that needs converting: the rows written in `keys` deleted,
    /// `insertRowsConverting` run (`error` thrown when there is none).
    private func runConverting(
        after error: MigrationError, on database: SQLiteDatabase, _ arguments: [Value], keys: ClosedRange<Int64>
    ) throws -> (bare: Bool, rows: Int) {
        guard let converting = insertRowsConverting else { throw error }
        try database.run(
            "DELETE FROM \(destinationTable) WHERE Z_PK BETWEEN ? AND ?",
            [.integer(keys.lowerBound), .integer(keys.upperBound)])
        database.valueCounts.counts = []
        try database.run(converting, arguments)
        return (false, database.changes)
    }

    /// Whether a mapping may keep its source keys: every source row it takes becomes one
    /// destination row of the same key when the mapping takes its source entity whole (no
    /// predicate, no sub-entities: one source entity number) and the destination table is still
    /// empty (`destinationTableIsEmpty`: no key allocated in it yet).
    static func canKeepSourceKeys(mapping: EntityMapping, request: FetchRequest, destinationTableIsEmpty: Bool) -> Bool
    {
        guard destinationTableIsEmpty, request.sqlWhere == nil, request.filter == nil, request.arguments.isEmpty,
            let sourceEntity = mapping.sourceEntity, sourceEntity.subentities.isEmpty
        else { return false }
        return true
    }

    /// Whether the source keys of `entity` leave room to be kept: all of them in 1…INT64_MAX/2.
    /// Keys outside (INT64_MAX, negative keys) are renumbered, as the per-instance path does, so
    /// a later mapping into the same table still finds keys above them.
    static func sourceKeysLeaveRoom(_ entity: EntityDescription, in source: PersistentStore) throws -> Bool {
        guard let (low, high) = try sourceKeyBounds(entity, in: source) else { return true }
        return keysLeaveRoom(low: low, high: high)
    }

    /// Whether keys from `low` to `high` can be kept (see `sourceKeysLeaveRoom`).
    static func keysLeaveRoom(low: Int64, high: Int64) -> Bool { low >= 1 && high <= Int64.max / 2 }

    /// The lowest and highest key of `entity`'s table; nil when it is empty.
    static func sourceKeyBounds(_ entity: EntityDescription, in source: PersistentStore) throws -> (
        Int64, Int64
    )? {
        let table = SQLiteDatabase.quote(source.layout.table(for: entity))
        // Two queries: SQLite answers a lone MIN or MAX from the end of the table's b-tree.
        guard let low = try source.database.scalar("SELECT MIN(Z_PK) FROM \(table)")?.integer,
            let high = try source.database.scalar("SELECT MAX(Z_PK) FROM \(table)")?.integer
        else { return nil }
        return (low, high)
    }

    static let sourceSchema = "cdm_source"

    /// At most this many entity numbers are checked in the row check (`StoredValueRule.entityCode`);
    /// more keep the `CASE`.
    static let foldedEntityNumbers = 16

    /// For a mapping making one destination per distinct value (`DistinctValueMapping`): the
    /// statements filling `temp.cdm_distinct_value` (value, its first source row, its rank), the
    /// last with `predicateArguments`; `insertRows` then takes only the first `?`. Nil otherwise.
    var distinctValues: [String]? = nil
    static let distinctTable = "cdm_distinct_value"

    /// nil when the mapping needs the row-by-row path.
    ///
    /// `distinct`: the attribute of a mapping making one destination per distinct value; its INSERT
    /// takes the first source row of each value (by key), and every source row with the value is
    /// associated with that row's destination.
    ///
    /// `batchRows`, for a policy's batch (`SourceBatch.applyDefault`), replaces the source rows the
    /// request selects with a FROM clause of its own (the source table aliased `t`, no arguments);
    /// the mapping's policy is then no obstacle.
    ///
    /// `counting`: source columns (`t.`-qualified, quoted) whose non-NULL values `insertRows`
    /// counts as it copies (`countsValues`; not for `distinct`, whose INSERT reads one row per value).
    ///
    /// `destinationKeys`, with `batchRows`, is the SQL of each row's destination key (for rows
    /// whose keys were handed out already: `DeferredAttributeMappings`), in place of the numbering.
    static func plan(
        mapping: EntityMapping, request: FetchRequest, mappingID: Int, keepsSourceKeys: Bool = false,
        distinct: AttributeDescription? = nil, batchRows: String? = nil, counting: [String] = [],
        destinationKeys: String? = nil, source: PersistentStore, destination: PersistentStore
    ) -> DeclarativeMappingSQL? {
        if destinationKeys != nil && (keepsSourceKeys || batchRows == nil || distinct != nil) { return nil }
        if distinct != nil && (keepsSourceKeys || batchRows != nil) { return nil }
        guard mapping.entityMigrationPolicyClassName == nil || batchRows != nil,
            request.filter == nil || batchRows != nil,
            let sourceEntity = mapping.sourceEntity, let destinationEntity = mapping.destinationEntity,
            !destinationEntity.isAbstract
        else { return nil }
        var columns = ["Z_PK", "Z_ENT", "Z_OPT"]
        let sourceTable = source.layout.table(for: sourceEntity)
        let restriction = source.layout.entityRestriction(
            for: sourceEntity, includingSubentities: request.includesSubentities, qualifier: "t.")
        // Every Z_ENT of the table is taken: a row naming no entity of it is refused, as the per-instance read refuses it.
        let entityValue =
            restriction != nil
            ? String(destination.layout.entityNumber(of: destinationEntity))
            : StoredValueRule.checkedEntity(
                destination.layout.entityNumber(of: destinationEntity),
                numbers: source.layout.entityNumbers(of: sourceEntity, includingSubentities: true),
                table: sourceTable, storePath: source.path, entityName: sourceEntity.name)
        var values = [
            destinationKeys ?? (keepsSourceKeys ? "t.Z_PK" : "? + ROW_NUMBER() OVER (ORDER BY t.Z_PK)"), entityValue,
            "1",
        ]
        // The same values with the source columns read bare, the columns checked once per row.
        let reads = ColumnReads()
        var plainValues = values
        var validated: Set<String> = []
        for attribute in destinationEntity.attributes where !attribute.isTransient {
            guard let column = destination.layout.column(for: attribute) else { continue }
            let sql: String
            let plainSQL: String
            if let property = mapping.attributeMapping(named: attribute.name), let expression = property.valueExpression
            {
                guard
                    let translated = translate(expression, into: attribute, from: sourceEntity, layout: source.layout),
                    let bare = translate(
                        expression, into: attribute, from: sourceEntity, layout: source.layout, reads: reads)
                else { return nil }
                sql = translated
                plainSQL = bare
                if let (read, type) = bareColumn(expression, entity: sourceEntity, layout: source.layout) {
                    if let code = ValidatedByCopy.ruleCode(copying: type, into: attribute) {
                        reads.add(read, code)
                        validated.insert(attribute.name)
                    }
                } else if case .constant(let constant) = expression, attribute.derivationExpression == nil,
                    ValidatedByCopy.constantMeetsRules(constant, of: attribute)
                {
                    validated.insert(attribute.name)
                }
            } else {
                guard let literal = literal(attribute.defaultValue) else { return nil }
                sql = literal
                plainSQL = literal
                if attribute.derivationExpression == nil,
                    ValidatedByCopy.constantMeetsRules(attribute.defaultValue, of: attribute)
                {
                    validated.insert(attribute.name)
                }
            }
            columns.append(SQLiteDatabase.quote(column))
            values.append(sql)
            plainValues.append(plainSQL)
        }
        // The row's entity checked in the same call as its columns (`entityCode`) instead of a `CASE`
        // per row, when every Z_ENT of the table is taken; any row it refuses runs the copy with the `CASE`.
        let entityNumbers = source.layout.entityNumbers(of: sourceEntity, includingSubentities: true)
        let foldsEntity = restriction == nil && distinct == nil && entityNumbers.count <= Self.foldedEntityNumbers
        if foldsEntity {
            plainValues[1] = String(destination.layout.entityNumber(of: destinationEntity))
            let entityCodes =
                [("t.Z_ENT", StoredValueRule.entityCode)]
                + entityNumbers.map { (String($0), StoredValueRule.equalsCode) }
            reads.columns.insert(contentsOf: entityCodes, at: 0)
        }
        var check = StoredValueRule.plainRowCheck(codes: reads.columns)
        var count = distinct == nil ? StoredValueRule.valueCount(counting) : nil
        let countsValues = count != nil
        if count != nil, reads.columns.count + counting.count <= StoredValueRule.plainArguments {
            // One call per row checks the columns and counts the values (`c` codes) at once.
            let both = StoredValueRule.plainRowCheck(
                codes: reads.columns + counting.map { ($0, StoredValueRule.countCode) })
            check = check == nil ? nil : both
            count = check == nil ? both : nil
        }
        switch (check, count) {
        case (let check?, let count?): plainValues[2] = "min(\(check), \(count))"
        case (let check?, nil): plainValues[2] = check
        case (nil, let count?): plainValues[2] = count
        case (nil, nil): break
        }
        let destinationTable = "main.\(SQLiteDatabase.quote(destination.layout.table(for: destinationEntity)))"
        if !carriesNoExternalData(destinationEntity, from: sourceEntity, values: values, source: source) { return nil }
        let table = "\(sourceSchema).\(SQLiteDatabase.quote(source.layout.table(for: sourceEntity)))"
        let whereClause = request.sqlWhereClause(for: sourceEntity, in: source.layout)
        let rows = batchRows ?? "\(table) t\(whereClause)"
        // Associations name entities by the models' numbers; a store written by Core Data may number them otherwise.
        let entityCase =
            "CASE t.Z_ENT "
            + sourceEntity.selfAndDescendants.map {
                "WHEN \(source.layout.entityNumber(of: $0)) THEN \($0.entityNumber)"
            }.joined(separator: " ") + " END"
        if let distinct = distinct {
            guard let valueColumn = source.layout.column(for: distinct) else { return nil }
            let v = "t." + SQLiteDatabase.quote(valueColumn)
            // nil and empty text make nothing (`DistinctValueMapping.isNoValue`).
            let some = distinct.attributeType == .string ? "\(v) IS NOT NULL AND \(v) != ''" : "\(v) IS NOT NULL"
            let valued = whereClause.isEmpty ? " WHERE \(some)" : whereClause + " AND \(some)"
            // The values, each with its first source row and its rank: a table of one row per value,
            // which the source rows then look up by value (no sort of the source rows).
            let values_ = distinctTable
            func insert(_ values: [String]) -> String {
                var rowValues = values
                rowValues[0] = "? + d.k"
                return "INSERT INTO \(destinationTable) (\(columns.joined(separator: ", "))) "
                    + "SELECT \(rowValues.joined(separator: ", ")) "
                    + "FROM temp.\(values_) d JOIN \(table) t ON t.Z_PK = d.first ORDER BY d.k"
            }
            var plan = DeclarativeMappingSQL(
                insertRows: insert(check == nil ? values : plainValues),
                insertAssociations:
                    "INSERT INTO cdm_association SELECT \(mappingID), \(entityCase), t.Z_PK, \(destinationEntity.entityNumber), "
                    + "? + d.k FROM \(table) t JOIN temp.\(values_) d ON d.value = \(v)\(valued) ORDER BY t.Z_PK",
                predicateArguments: request.arguments, keepsSourceKeys: false)
            plan.insertRowsConverting = check == nil ? nil : insert(values)
            plan.destinationTable = destinationTable
            plan.attributesValidated = validated
            plan.distinctValues = [
                "DROP TABLE IF EXISTS temp.\(values_)",
                "CREATE TEMP TABLE \(values_) (value PRIMARY KEY, first INTEGER, k INTEGER)",
                "INSERT INTO temp.\(values_) (value, first, k) SELECT \(v), MIN(t.Z_PK), ROW_NUMBER() OVER (ORDER BY MIN(t.Z_PK)) "
                    + "FROM \(table) t\(valued) GROUP BY \(v)",
            ]
            return plan
        }
        func insert(_ values: [String], from rows: String = rows) -> String {
            "INSERT INTO \(destinationTable) (\(columns.joined(separator: ", "))) "
                + "SELECT \(values.joined(separator: ", ")) FROM \(rows) ORDER BY t.Z_PK"
        }
        // Keeping the source keys: SQLite numbers the rows itself when the keys are 1…n, the check
        // testing each key (the first argument of the first call, so that the call count stays at most `plainArguments`).
        var denseSQL: String? = nil
        if keepsSourceKeys, batchRows == nil, distinct == nil, count == nil,
            1 + reads.columns.count + (countsValues ? counting.count : 0) <= StoredValueRule.plainArguments,
            let dense = StoredValueRule.plainRowCheck(
                codes: [("t.Z_PK", StoredValueRule.keyCode)] + reads.columns
                    + (countsValues ? counting.map { ($0, StoredValueRule.countCode) } : []))
        {
            var denseValues = plainValues
            denseValues[2] = dense
            denseSQL =
                "INSERT INTO \(destinationTable) (\(columns.dropFirst().joined(separator: ", "))) "
                + "SELECT \(denseValues.dropFirst().joined(separator: ", ")) FROM \(rows) ORDER BY t.Z_PK"
        }
        var plan = DeclarativeMappingSQL(
            insertRows: insert(check == nil && count == nil ? values : plainValues),
            insertAssociations: keepsSourceKeys
                ? nil
                : "INSERT INTO cdm_association SELECT \(mappingID), \(entityCase), t.Z_PK, \(destinationEntity.entityNumber), "
                    + "? + ROW_NUMBER() OVER (ORDER BY t.Z_PK) FROM \(rows) ORDER BY t.Z_PK",
            predicateArguments: batchRows == nil ? request.arguments : [], keepsSourceKeys: keepsSourceKeys)
        plan.insertRowsConverting = check == nil ? nil : insert(values)
        plan.insertRowsDense = denseSQL
        if denseSQL != nil {
            plan.insertRowsAfterKey = insert(
                check == nil && count == nil ? values : plainValues,
                from: rows + (whereClause.isEmpty ? " WHERE " : " AND ") + "t.Z_PK > ?")
        }
        plan.destinationTable = destinationTable
        plan.countsValues = countsValues
        plan.attributesValidated = validated
        return plan
    }

    /// Collects the source columns an INSERT reads bare (each with the type it is read as), for
    /// `StoredValueRule.plainRowCheck`.
    /// A column read as several types is checked once per type; a column read for several
    /// destination attributes carries all their rules in one code (`ValidatedByCopy.ruleCode`).
    final class ColumnReads {
        var columns: [(column: String, code: UInt8)] = []
        func add(_ column: String, _ type: AttributeType) {
            if let code = StoredValueRule.plainCode(type) { add(column, code) }
        }
        func add(_ column: String, _ code: UInt8) {
            guard let i = columns.firstIndex(where: { $0.column == column && Self.base($0.code) == Self.base(code) })
            else {
                columns.append((column, code))
                return
            }
            let old = columns[i].code
            // The narrower range (h within w within i) and required when either is.
            let ranges: [UInt8] = [UInt8(ascii: "h"), UInt8(ascii: "w")]
            var merged = ranges.first { $0 == old | 0x20 || $0 == code | 0x20 } ?? (old | 0x20)
            if old < UInt8(ascii: "a") || code < UInt8(ascii: "a") { merged = StoredValueRule.requiredCode(merged) }
            columns[i].code = merged
        }
        /// The storage classes a code checks (`h` and `w` check those of `i`).
        static func base(_ code: UInt8) -> UInt8 {
            let lower = code | 0x20
            return lower == UInt8(ascii: "h") || lower == UInt8(ascii: "w") ? UInt8(ascii: "i") : lower
        }
    }

    /// The source column (`t.`-qualified, quoted) and its attribute's type when `expression`
    /// reads one source attribute as it is.
    private static func bareColumn(_ expression: ValueExpression, entity: EntityDescription, layout: StoreLayout) -> (
        String, AttributeType
    )? {
        let key: String
        switch expression {
        case .keyPath(.variable("source"), let keys) where keys.count == 1: key = keys[0]
        case .function(.variable("source"), "valueForKey:", let arguments) where arguments.count == 1:
            guard let name = arguments[0].constantValue?.stringValue else { return nil }
            key = name
        default: return nil
        }
        guard let attribute = entity.attribute(named: key), let column = layout.column(for: attribute) else {
            return nil
        }
        return ("t." + SQLiteDatabase.quote(column), attribute.attributeType)
    }

    /// Whether the INSERT's values stay clear of external binary data: a destination attribute with
    /// external storage needs its values encoded (and its files written) by the engine, and a
    /// source column with external storage holds markers, not values (a copy would point at files
    /// the destination lacks). Such mappings run the row-by-row path. A source column is taken as
    /// used when its name appears in the values' SQL (at worst a mapping runs row by row needlessly).
    static func carriesNoExternalData(
        _ destinationEntity: EntityDescription, from sourceEntity: EntityDescription, values: [String],
        source: PersistentStore
    ) -> Bool {
        if destinationEntity.attributes.contains(where: { ExternalBinaryData.applies(to: $0) && !$0.isTransient }) {
            return false
        }
        let sql = values.joined(separator: " ")
        for entity in sourceEntity.selfAndDescendants {
            for attribute in entity.attributes where ExternalBinaryData.applies(to: attribute) {
                if let column = source.layout.column(for: attribute), sql.contains(column) { return false }
            }
        }
        return true
    }

    /// SQL computing `expression` for `attribute` from the source row `t`, or nil.
    /// With `reads`, the source columns are read bare and collected in it (the caller checks them);
    /// without, each is read through `StoredValueRule.sql`.
    static func translate(
        _ expression: ValueExpression, into attribute: AttributeDescription, from entity: EntityDescription,
        layout: StoreLayout,
        reads: ColumnReads? = nil
    ) -> String? {
        guard let (sql, type) = value(expression, entity: entity, layout: layout, reads: reads) else { return nil }
        return fits(type, into: attribute.attributeType) ? sql : nil
    }

    /// The kinds of value SQL can carry over unchanged (nil type: a NULL literal, fitting anything).
    private static func value(
        _ expression: ValueExpression, entity: EntityDescription, layout: StoreLayout, reads: ColumnReads?
    ) -> (String, AttributeType?)? {
        switch expression {
        case .keyPath(.variable("source"), let keys) where keys.count == 1:
            return column(keys[0], entity: entity, layout: layout, reads: reads)
        case .function(.variable("source"), "valueForKey:", let arguments) where arguments.count == 1:
            guard let key = arguments[0].constantValue?.stringValue else { return nil }
            return column(key, entity: entity, layout: layout, reads: reads)
        case .constant(let v):
            guard let text = literal(v) else { return nil }
            switch v {
            case .null: return (text, nil)
            case .integer: return (text, .integer64)
            case .double: return (text, .double)
            case .string: return (text, .string)
            case .bool: return (text, .boolean)
            default: return nil
            }
        case .binary(let op, let lhs, let rhs) where op == .add || op == .subtract || op == .multiply:
            guard let (l, lt) = value(lhs, entity: entity, layout: layout, reads: reads),
                let (r, rt) = value(rhs, entity: entity, layout: layout, reads: reads),
                let lType = lt, let rType = rt, isArithmetic(lType), isArithmetic(rType)
            else { return nil }
            let resultType: AttributeType = lType.isInteger && rType.isInteger ? .integer64 : .double
            return ("(\(l) \(op.rawValue) \(r))", resultType)
        default:
            return nil
        }
    }

    private static func column(_ key: String, entity: EntityDescription, layout: StoreLayout, reads: ColumnReads?) -> (
        String, AttributeType?
    )? {
        guard let attribute = entity.attribute(named: key), let column = layout.column(for: attribute) else {
            return nil
        }
        let sql = "t." + SQLiteDatabase.quote(column)
        if let reads = reads {
            reads.add(sql, attribute.attributeType)
            return (sql, attribute.attributeType)
        }
        // A value that does not fit the type reads as the per-instance path reads it.
        return (StoredValueRule.sql(sql, as: attribute.attributeType), attribute.attributeType)
    }

    private static func isArithmetic(_ type: AttributeType) -> Bool {
        type.isInteger || type == .double || type == .float
    }

    /// Whether values of `source` type are stored exactly as `destination` stores them.
    private static func fits(_ source: AttributeType?, into destination: AttributeType) -> Bool {
        guard let source = source else { return true }
        if source == destination { return true }
        if source.isInteger && destination.isInteger { return true }  // ranges are checked in stage 3
        if (source == .double || source == .float) && (destination == .double || destination == .float) { return true }
        if source.isInteger && (destination == .double || destination == .float) { return true }
        if source == .string && destination == .uri { return true }
        return false
    }

    /// A constant as an SQL literal, stored as the row-by-row path stores it.
    static func literal(_ value: Value) -> String? {
        switch value {
        case .null: return "NULL"
        case .bool(let b): return b ? "1" : "0"
        case .integer(let i): return String(i)
        case .double(let d), .date(let d): return d.isFinite ? String(d) : nil
        case .string(let s), .uri(let s):
            // SQL text goes through a C string: a NUL would cut it short.
            guard !s.utf8.contains(0) else { return nil }
            return "'" + s.replacingAll("'", with: "''") + "'"
        case .decimal, .binary, .uuid, .object, .collection, .dictionary, .migrationManager: return nil
        }
    }
}
