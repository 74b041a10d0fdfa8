import CSQLite

/// Core Data's SQL for a derived attribute (NSDerivedAttributeDescription) in an SQLite store.
///
/// Core Data keeps derived values in the store itself: SQLite triggers named `Z_DA_<TABLE>_<Entity>_<attribute>…`
/// recompute the column whenever a row it depends on is inserted, updated or deleted, and a "data
/// statement" fills the column for the rows already there. This type writes both, in the spelling
/// of Core Data's `NSSQLDerivedAttributeSQLGenerator`, for the expressions Core Data supports in SQLite
/// stores (Apple's documentation of NSDerivedAttributeDescription):
///
/// - `now()` — the time of the last save (triggers on `Z_OPT`);
/// - an attribute of the same entity, plain or through `lowercase:`, `uppercase:`, `canonical:`;
/// - an attribute through a to-one (`author.name`, `lowercase:(author.name)`);
/// - a to-many aggregate: `items.@count` (one-to-many and many-to-many), `items.price.@sum`,
///   `items.price.@min`, `items.price.@max` (one-to-many), or the same as `count:(items)` and so on.
///
/// The triggers call functions Core Data registers on its connections (`NSCoreDataToLower`,
/// `NSCoreDataDATriggerUpdatedAffectedObjectValue`, …); `register(on:)` registers the same names on
/// cdmigrate's connections, so that the data statements run here and the triggers work when
/// cdmigrate writes to such a store. docs/store-layout.md (Derived attributes) has the sources.
package struct DerivedAttributeSQL {
    /// What the attribute is derived from, resolved against the store's layout.
    package enum Derivation: Equatable {
        /// `now()`.
        case now
        /// An attribute of the same entity (`column`), through an SQL function or as it is.
        case ownAttribute(column: String, function: String?)
        /// An attribute (`column` of `table`) of the object a to-one (`foreignKey` on the entity's table) points at.
        case toOne(foreignKey: String, table: String, column: String, function: String?)
        /// `COUNT`, `SUM`, `MIN` or `MAX` over the rows of `table` whose `foreignKey` is the entity's row
        /// (`column`: the summed attribute; nil for a count).
        /// (`targetRange`: Core Data's `Z_ENT` clause of the target when it shares its table, used by `MIN`/`MAX`.)
        case toMany(aggregate: String, table: String, foreignKey: String, column: String?, targetRange: String)
        /// A many-to-many count: the rows of the join table whose `ownColumn` is the entity's row.
        case manyToManyCount(joinTable: String, ownColumn: String)
    }

    /// The derived attribute.
    package let attribute: AttributeDescription
    /// The entity that declares it.
    package let entity: EntityDescription
    /// What it is derived from.
    package let derivation: Derivation
    /// Statements that give every row of the entity its derived value (Core Data's data statements:
    /// `now()` stamps every row with the time they run, the time of the migration).
    package let dataStatements: [String]
    /// Core Data's `CREATE TRIGGER IF NOT EXISTS Z_DA_…` statements for the attribute.
    package let triggerStatements: [String]

    /// The SQL for `attribute` (declared by `entity`) in a store laid out as `layout`, or the reason
    /// Core Data would not maintain it in SQL (an expression it does not support there).
    package static func plan(for attribute: AttributeDescription, of entity: EntityDescription, layout: StoreLayout)
        -> Result<DerivedAttributeSQL, DerivedAttributeProblem>
    {
        guard let text = attribute.derivationExpression else { return .failure(.init("it is not derived")) }
        if let filter = attribute.filteringPredicate, !filter.isEmpty {
            return .failure(.init("it has a filtering predicate, which Core Data does not maintain in SQLite stores"))
        }
        guard let column = layout.column(for: attribute) else {
            return .failure(.init("it has no column in the store"))
        }
        let expression: ValueExpression
        do { expression = try ExpressionParser.parseExpression(text) } catch let error as MigrationError {
            return .failure(.init("its derivation expression '\(text)' does not parse: \(error.message)"))
        } catch { return .failure(.init("its derivation expression '\(text)' does not parse")) }
        switch resolve(expression, entity: entity, layout: layout) {
        case .failure(let problem): return .failure(problem)
        case .success(let derivation):
            var plan = Writer(attribute: attribute, entity: entity, layout: layout, column: column)
            plan.write(derivation)
            return .success(
                DerivedAttributeSQL(
                    attribute: attribute, entity: entity, derivation: derivation,
                    dataStatements: plan.data, triggerStatements: plan.triggers))
        }
    }

    // MARK: Reading the expression

    private static let sqlFunctions = [
        "lowercase:": "NSCoreDataToLower", "uppercase:": "NSCoreDataToUpper", "canonical:": "NSCoreDataCanonical",
    ]
    private static let aggregates = [
        "@count": "COUNT", "@sum": "SUM", "@min": "MIN", "@max": "MAX",
        "count:": "COUNT", "sum:": "SUM", "min:": "MIN", "max:": "MAX",
    ]

    private static func resolve(_ expression: ValueExpression, entity: EntityDescription, layout: StoreLayout)
        -> Result<Derivation, DerivedAttributeProblem>
    {
        switch expression {
        case .builtin("now", let args) where args.isEmpty:
            return .success(.now)
        case .builtin(let name, let args) where sqlFunctions[name] != nil:
            guard args.count == 1, let keys = args[0].simpleKeyPath else {
                return .failure(.init("\(name) takes one key path in a derived attribute"))
            }
            return resolvePath(keys, function: sqlFunctions[name], entity: entity, layout: layout)
        case .builtin(let name, let args) where aggregates[name] != nil:
            guard args.count == 1, let keys = args[0].simpleKeyPath else {
                return .failure(.init("\(name) takes one key path through a to-many in a derived attribute"))
            }
            return resolveToMany(keys, aggregate: aggregates[name] ?? "COUNT", entity: entity, layout: layout)
        default:
            guard let keys = expression.simpleKeyPath else {
                return .failure(
                    .init(
                        "its derivation expression is not one Core Data maintains in SQLite stores (a key path, a to-one key path, a to-many aggregate, lowercase:, uppercase:, canonical: or now())"
                    ))
            }
            if let last = keys.last, let aggregate = aggregates[last], last.hasPrefix("@") {
                return resolveToMany(Array(keys.dropLast()), aggregate: aggregate, entity: entity, layout: layout)
            }
            return resolvePath(keys, function: nil, entity: entity, layout: layout)
        }
    }

    private static func resolvePath(_ keys: [String], function: String?, entity: EntityDescription, layout: StoreLayout)
        -> Result<Derivation, DerivedAttributeProblem>
    {
        switch keys.count {
        case 1:
            guard let source = entity.attributesByName[keys[0]], source.derivationExpression == nil,
                let column = layout.column(for: source)
            else {
                return .failure(.init("'\(keys[0])' is not a stored attribute of \(entity.name)"))
            }
            return .success(.ownAttribute(column: column, function: function))
        case 2:
            guard let relationship = entity.relationshipsByName[keys[0]], !relationship.isToMany,
                case .foreignKey(let foreignKey, _, _) = layout.storage(of: relationship),
                let destination = relationship.destinationEntity
            else {
                return .failure(.init("'\(keys[0])' is not a stored to-one of \(entity.name)"))
            }
            guard let target = destination.attributesByName[keys[1]], let column = layout.column(for: target) else {
                return .failure(.init("'\(keys[1])' is not a stored attribute of \(destination.name)"))
            }
            return .success(
                .toOne(
                    foreignKey: foreignKey, table: layout.table(for: destination), column: column, function: function))
        default:
            return .failure(
                .init(
                    "its key path '\(keys.joined(separator: "."))' has more steps than Core Data maintains (one to-one, then an attribute)"
                ))
        }
    }

    private static func resolveToMany(
        _ keys: [String], aggregate: String, entity: EntityDescription, layout: StoreLayout
    ) -> Result<Derivation, DerivedAttributeProblem> {
        guard let first = keys.first, keys.count <= 2, let relationship = entity.relationshipsByName[first],
            relationship.isToMany,
            let destination = relationship.destinationEntity
        else {
            return .failure(
                .init(
                    "'\(keys.joined(separator: "."))' is not a to-many of \(entity.name) (or an attribute through one)")
            )
        }
        var column: String?
        if keys.count == 2 {
            guard let target = destination.attributesByName[keys[1]], let c = layout.column(for: target) else {
                return .failure(.init("'\(keys[1])' is not a stored attribute of \(destination.name)"))
            }
            column = c
        }
        if aggregate == "COUNT" && column != nil {
            return .failure(
                .init("a count through an attribute ('\(keys.joined(separator: "."))') is not one cdmigrate maintains"))
        }
        if aggregate != "COUNT" && column == nil {
            return .failure(.init("\(aggregate.lowercased()) needs an attribute after the to-many '\(first)'"))
        }
        switch layout.storage(of: relationship) {
        case .inverseForeignKey(let table, let foreignKey, _, _), .hiddenColumn(let table, let foreignKey, _):
            var targetRange = ""
            if destination.parent != nil {
                let low = layout.entityNumber(of: destination)
                let high = destination.selfAndDescendants.map { layout.entityNumber(of: $0) }.max() ?? low
                targetRange = low >= high ? " AND \(low) = Z_ENT" : " AND \(low) <= Z_ENT AND Z_ENT <= \(high)"
            }
            return .success(
                .toMany(
                    aggregate: aggregate, table: table, foreignKey: foreignKey, column: column, targetRange: targetRange
                ))
        case .joinTable(let table, let ownColumn, _, _, _) where aggregate == "COUNT":
            return .success(.manyToManyCount(joinTable: table, ownColumn: ownColumn))
        default:
            return .failure(.init("Core Data maintains only counts of a many-to-many ('\(first)')"))
        }
    }

    // MARK: Writing the SQL

    private struct Writer {
        let attribute: AttributeDescription
        let entity: EntityDescription
        let layout: StoreLayout
        /// The derived column and its table.
        let column: String
        let table: String
        var data: [String] = []
        var triggers: [String] = []

        init(attribute: AttributeDescription, entity: EntityDescription, layout: StoreLayout, column: String) {
            self.attribute = attribute
            self.entity = entity
            self.layout = layout
            self.column = column
            self.table = layout.table(for: entity)
        }

        /// The entity's `Z_ENT` range when it shares its table with a superentity.
        var range: (low: Int, high: Int)? {
            guard entity.parent != nil else { return nil }
            let numbers = entity.selfAndDescendants.map { layout.entityNumber(of: $0) }
            let low = layout.entityNumber(of: entity)
            return (low, numbers.max() ?? low)
        }

        func name(_ table: String, _ suffix: String = "") -> String {
            "Z_DA_\(table)_\(entity.name)_\(attribute.name)\(suffix)"
        }

        func affected(_ function: String, where condition: String) -> String {
            " SELECT \(function)('\(table)', Z_ENT, Z_PK, '\(attribute.name)', \(column)) FROM \(table) WHERE \(condition);"
        }

        mutating func write(_ derivation: Derivation) {
            switch derivation {
            case .now:
                selfTriggers(newToken: "NSCoreDataNow()", columns: "Z_OPT")
                // Every row gets the time of the migration, as Core Data's data statement gives it.
                let range = self.range.map { " WHERE \($0.low) <= Z_ENT AND Z_ENT <= \($0.high)" } ?? ""
                data = ["UPDATE \(table) SET \(column) = NSCoreDataNow()\(range)"]
            case .ownAttribute(let source, let function):
                let newToken = function.map { "\($0)(NEW.\(source))" } ?? "NEW.\(source)"
                selfTriggers(newToken: newToken, columns: source)
                let range = self.range.map { " WHERE \($0.low) <= Z_ENT AND Z_ENT <= \($0.high)" } ?? ""
                data = ["UPDATE \(table) SET \(column) = \(function.map { "\($0)(\(source))" } ?? source)\(range)"]
            case .toOne(let foreignKey, let target, let source, let function):
                toOne(foreignKey: foreignKey, target: target, source: source, function: function)
            case .toMany(let aggregate, let target, let foreignKey, let source, let targetRange):
                if aggregate == "MIN" || aggregate == "MAX" {
                    extreme(
                        aggregate, target: target, foreignKey: foreignKey, source: source ?? foreignKey,
                        targetAnd: targetRange)
                } else {
                    toMany(aggregate, target: target, foreignKey: foreignKey, source: source)
                }
            case .manyToManyCount(let joinTable, let ownColumn):
                manyToMany(joinTable: joinTable, ownColumn: ownColumn)
            }
        }

        /// `now()` and attributes of the same entity: `_INSERT` and `_UPDATE` on the entity's table.
        mutating func selfTriggers(newToken: String, columns: String) {
            let base = name(table)
            triggers.append(
                trigger(
                    "\(base)_INSERT", after: "INSERT", on: table, when: "(NEW.\(columns) NOT NULL)",
                    update(newToken, rows: "Z_PK = NEW.Z_PK", reporting: Self.insertUpdated)))
            triggers.append(
                trigger(
                    "\(base)_UPDATE", after: "UPDATE OF \(columns)", on: table,
                    update(newToken, rows: "Z_PK = NEW.Z_PK", reporting: Self.updated)))
        }

        /// An attribute through a to-one: `_SOURCE_INSERT`/`_UPDATE` on the entity's table,
        /// `_PARAMETER_INSERT`/`_UPDATE` on the target's.
        mutating func toOne(foreignKey: String, target: String, source: String, function: String?) {
            let sourceToken = function.map { "\($0)(\(source))" } ?? source
            let parameterToken = function.map { "\($0)(NEW.\(source))" } ?? "NEW.\(source)"
            let newRange = range.map {
                $0.low >= $0.high ? "\($0.low) = NEW.Z_ENT" : "\($0.low) <= NEW.Z_ENT AND NEW.Z_ENT <= \($0.high)"
            }
            let rowRange = range.map {
                $0.low >= $0.high ? "\($0.low) = Z_ENT" : "\($0.low) <= Z_ENT AND Z_ENT <= \($0.high)"
            }
            let andNew = newRange.map { " AND \($0)" } ?? ""
            let andRow = rowRange.map { " AND \($0)" } ?? ""
            let source0 = name(table, "_SOURCE")
            let parameter = name(target, "_PARAMETER")
            let targetValue = "(SELECT \(sourceToken) FROM \(target) WHERE Z_PK = NEW.\(foreignKey))"
            triggers.append(
                trigger(
                    "\(source0)_INSERT", after: "INSERT", on: table,
                    update(targetValue, rows: "Z_PK = NEW.Z_PK\(andNew)", reporting: Self.insertUpdated)))
            triggers.append(
                trigger(
                    "\(source0)_UPDATE", after: "UPDATE OF \(foreignKey)", on: table, when: newRange,
                    update(targetValue, rows: "Z_PK = NEW.Z_PK", reporting: Self.updated)))
            triggers.append(
                trigger(
                    "\(parameter)_INSERT", after: "INSERT", on: target,
                    update(parameterToken, rows: "\(foreignKey) = NEW.Z_PK\(andRow)", reporting: Self.insertUpdated)))
            triggers.append(
                trigger(
                    "\(parameter)_UPDATE", after: "UPDATE OF \(source)", on: target,
                    update(parameterToken, rows: "\(foreignKey) = NEW.Z_PK\(andRow)", reporting: Self.updated)))
            data = [
                "UPDATE \(table) SET \(column) = (SELECT \(sourceToken) FROM \(target) WHERE Z_PK = \(table).\(foreignKey))\(rowRange.map { " WHERE \($0)" } ?? "")"
            ]
        }

        /// The range clauses of the to-many triggers: the `WHEN` condition, and the `AND` and
        /// `WHERE` forms.
        var toManyRanges: (when: String?, and: String, where: String) {
            guard let r = range else { return (nil, "", "") }
            if r.low >= r.high {
                return ("\(r.low) = NEW.Z_ENT", " AND \(r.low) = Z_ENT", " WHERE \(r.low) = Z_ENT")
            }
            return (
                "\(r.low) <= NEW.Z_ENT AND NEW.Z_ENT <= \(r.high)",
                " AND \(r.low) <= Z_ENT AND Z_ENT <= \(r.high)",
                " WHERE \(r.low) <= Z_ENT AND Z_ENT <= \(r.high)"
            )
        }

        /// `@count` and `@sum` over a one-to-many: four triggers on the target's table, one on the entity's.
        mutating func toMany(_ aggregate: String, target: String, foreignKey: String, source: String?) {
            let and = toManyRanges.and
            let increment = source.map { "+ IFNULL(NEW.\($0), 0)" } ?? "+ 1"
            let decrement = source.map { "- IFNULL(OLD.\($0), 0)" } ?? "- 1"
            let columns = source.map { "\(foreignKey), \($0)" } ?? foreignKey
            let argument = source ?? foreignKey
            let parameter = name(target, "_PARAMETER")
            let newRow = "Z_PK = NEW.\(foreignKey)\(and)"
            let oldRow = "Z_PK = OLD.\(foreignKey)\(and)"
            triggers.append(
                trigger(
                    "\(parameter)_INSERT", after: "INSERT", on: target, when: "(NEW.\(foreignKey) NOT NULL)",
                    update("IFNULL(\(column), 0) \(increment)", rows: newRow, reporting: Self.updated)))
            triggers.append(
                trigger(
                    "\(parameter)_UPDATE_INCREMENT", after: "UPDATE OF \(columns)", on: target,
                    when: "(NEW.\(foreignKey) NOT NULL)",
                    update("\(column) \(increment)", rows: newRow, reporting: Self.updated)))
            triggers.append(
                trigger(
                    "\(parameter)_UPDATE_DECREMENT", after: "UPDATE OF \(columns)", on: target,
                    when: "(OLD.\(foreignKey) NOT NULL)",
                    update("\(column) \(decrement)", rows: oldRow, reporting: Self.updated)))
            triggers.append(
                trigger(
                    "\(parameter)_DELETE", after: "DELETE", on: target, when: "(OLD.\(foreignKey) NOT NULL)",
                    update("\(column) \(decrement)", rows: oldRow, reporting: Self.updated)))
            computedFromRelated(name(table, "_SOURCE"), reporting: Self.insertUpdated) {
                "(SELECT IFNULL(\(aggregate)(\(argument)), 0) FROM \(target) WHERE \(foreignKey) = \($0))"
            }
        }

        /// `@min` and `@max` over a one-to-many: `_INSERT`, `_UPDATE_SET`, `_UPDATE_UNSET`, `_DELETE` on the
        /// target's table, `_INSERT` on the entity's (named without `_PARAMETER`/`_SOURCE`, as Core Data names them).
        mutating func extreme(
            _ aggregate: String, target: String, foreignKey: String, source: String, targetAnd: String
        ) {
            let and = toManyRanges.and
            let op = aggregate == "MIN" ? "<" : ">"
            let parameter = name(target)
            let columns = "\(foreignKey), \(source)"
            /// The target row has a value that counts (`NEW` or `OLD` row).
            func counts(_ row: String) -> String {
                "(\(row).\(foreignKey) NOT NULL AND \(row).\(source) NOT NULL\(targetAnd))"
            }
            // The owner whose extreme the old row was: its value computed again from its rows.
            let recomputed = "(SELECT \(aggregate)(\(source)) FROM \(target) WHERE \(foreignKey) = OLD.\(foreignKey))"
            let oldRows = "Z_PK = OLD.\(foreignKey)\(and) AND OLD.\(source) \(op)= \(column)"
            let recompute = update(
                recomputed, rows: oldRows, reporting: Self.updated,
                affectedRows: "Z_PK = OLD.\(foreignKey)\(and) AND (\(column) IS NULL OR OLD.\(source) \(op)= \(column))"
            )
            // The owner of the new row: its value becomes the new row's where that goes further.
            let takeNew = "NEW.\(source)"
            let newRows = "Z_PK = NEW.\(foreignKey)\(and) AND (\(column) IS NULL OR NEW.\(source) \(op) \(column))"
            triggers.append(
                trigger(
                    "\(parameter)_INSERT", after: "INSERT", on: target, when: counts("NEW"),
                    update(
                        takeNew, rows: newRows, reporting: Self.updated,
                        affectedRows:
                            "Z_PK = NEW.\(foreignKey)\(and) AND (\(column) IS NULL OR NEW.\(source) \(op)= \(column))"))
            )
            triggers.append(
                trigger(
                    "\(parameter)_UPDATE_SET", after: "UPDATE OF \(columns)", on: target, when: counts("NEW"),
                    update(recomputed, rows: oldRows, reporting: Self.updated)
                        + update(
                            takeNew, rows: newRows, reporting: Self.updated,
                            affectedRows: "Z_PK = NEW.\(foreignKey)\(and) AND NEW.\(source) \(op)= \(column)")))
            triggers.append(
                trigger(
                    "\(parameter)_UPDATE_UNSET", after: "UPDATE OF \(columns)", on: target,
                    when:
                        "(OLD.\(foreignKey) NOT NULL AND OLD.\(source) NOT NULL AND (NEW.\(foreignKey) IS NULL OR NEW.\(source) IS NULL)\(targetAnd))",
                    recompute))
            triggers.append(trigger("\(parameter)_DELETE", after: "DELETE", on: target, when: counts("OLD"), recompute))
            computedFromRelated(name(table), reporting: Self.insertUpdated) {
                "(SELECT \(aggregate)(\(source)) FROM \(target) WHERE \(foreignKey) = \($0))"
            }
        }

        /// A many-to-many count: `_INSERT` and `_DELETE` on the join table, `_INSERT` on the entity's.
        mutating func manyToMany(joinTable: String, ownColumn: String) {
            let and = toManyRanges.and
            let parameter = name(joinTable, "_PARAMETER")
            triggers.append(
                trigger(
                    "\(parameter)_INSERT", after: "INSERT", on: joinTable,
                    update("IFNULL(\(column), 0) + 1", rows: "Z_PK = NEW.\(ownColumn)\(and)", reporting: Self.updated)))
            triggers.append(
                trigger(
                    "\(parameter)_DELETE", after: "DELETE", on: joinTable,
                    update("\(column) - 1", rows: "Z_PK = OLD.\(ownColumn)\(and)", reporting: Self.updated)))
            computedFromRelated(name(table, "_SOURCE"), reporting: Self.updated) {
                "(SELECT IFNULL(COUNT(\(ownColumn)), 0) FROM \(joinTable) WHERE \(ownColumn) = \($0))"
            }
        }

        /// The entity's `_INSERT` trigger giving a new row the value `value("NEW.Z_PK")` computes
        /// from its related rows, and the data statement giving every existing row its own.
        mutating func computedFromRelated(_ name: String, reporting function: String, _ value: (String) -> String) {
            let (when, _, rowWhere) = toManyRanges
            triggers.append(
                trigger(
                    "\(name)_INSERT", after: "INSERT", on: table, when: when,
                    update(value("NEW.Z_PK"), rows: "Z_PK = NEW.Z_PK", reporting: function)))
            data = ["UPDATE \(table) SET \(column) = \(value("\(table).Z_PK"))\(rowWhere)"]
        }

        static let insertUpdated = "NSCoreDataDATriggerInsertUpdatedAffectedObjectValue"
        static let updated = "NSCoreDataDATriggerUpdatedAffectedObjectValue"

        /// One of Core Data's triggers: after `event` on `target`, for each row (`when` a condition
        /// holds), the statements of `body`.
        func trigger(
            _ name: String, after event: String, on target: String, when condition: String? = nil, _ body: String
        )
            -> String
        {
            "CREATE TRIGGER IF NOT EXISTS \(name) AFTER \(event) ON \(target) FOR EACH ROW"
                + (condition.map { " WHEN \($0)" } ?? "") + " BEGIN\(body) END"
        }

        /// ` UPDATE … SET <column> = value WHERE rows;` followed by Core Data's report of the rows
        /// affected through `function` (`affectedRows`, when they are not the rows updated).
        func update(_ value: String, rows: String, reporting function: String, affectedRows: String? = nil) -> String {
            " UPDATE \(table) SET \(column) = \(value) WHERE \(rows);" + affected(function, where: affectedRows ?? rows)
        }
    }

    // MARK: Core Data's SQL functions

    /// Registers the SQL functions Core Data's derived-attribute triggers call: `NSCoreDataToLower`,
    /// `NSCoreDataToUpper`, `NSCoreDataCanonical` (case and diacritics folded), `NSCoreDataNow` (seconds
    /// since 2001), and the notifications `NSCoreDataDATriggerUpdatedAffectedObjectValue`,
    /// `NSCoreDataDATriggerInsertUpdatedAffectedObjectValue`, `NSCoreDataTriggerUpdateAffectedObjectValue`
    /// (no-ops here: they tell Core Data's row cache of the change).
    static func register(on db: OpaquePointer) {
        let deterministic = SQLITE_UTF8 | SQLITE_DETERMINISTIC
        for (name, code) in [("NSCoreDataToLower", 0), ("NSCoreDataToUpper", 1), ("NSCoreDataCanonical", 2)] {
            let box = UnsafeMutableRawPointer(bitPattern: code + 1)
            sqlite3_create_function_v2(
                db, name, 1, deterministic, box,
                { context, count, arguments in
                    guard let context, count == 1, let arguments, let value = arguments[0] else { return }
                    guard sqlite3_value_type(value) == SQLITE_TEXT, let text = sqlite3_value_text(value) else {
                        sqlite3_result_value(context, value)
                        return
                    }
                    let count = Int(sqlite3_value_bytes(value))
                    let s = String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
                    let code = Int(bitPattern: sqlite3_user_data(context)) - 1
                    let result =
                        code == 0
                        ? s.lowercased()
                        : code == 1
                            ? s.uppercased() : ValueComparison.fold(s, [.caseInsensitive, .diacriticInsensitive])
                    let bytes = Array(result.utf8) + [0]
                    bytes.withUnsafeBufferPointer { buffer in
                        buffer.withMemoryRebound(to: CChar.self) {
                            sqlite3_result_text(
                                context, $0.baseAddress, Int32(clamping: bytes.count - 1), cdm_sqlite_transient)
                        }
                    }
                }, nil, nil, nil)
        }
        sqlite3_create_function_v2(
            db, "NSCoreDataNow", 0, SQLITE_UTF8, nil,
            { context, _, _ in
                guard let context else { return }
                sqlite3_result_double(context, ExpressionEvaluator.now())
            }, nil, nil, nil)
        for name in [
            "NSCoreDataDATriggerUpdatedAffectedObjectValue", "NSCoreDataDATriggerInsertUpdatedAffectedObjectValue",
            "NSCoreDataTriggerUpdateAffectedObjectValue",
        ] {
            sqlite3_create_function_v2(
                db, name, 5, SQLITE_UTF8, nil,
                { context, _, _ in
                    guard let context else { return }
                    sqlite3_result_null(context)
                }, nil, nil, nil)
        }
    }
}

/// Why a derived attribute is not maintained in SQL.
package struct DerivedAttributeProblem: Error, Equatable {
    package let reason: String
    init(_ reason: String) { self.reason = reason }
}

extension ValueExpression {
    /// The keys of a key path from the evaluated object (`a.b.@count`), nil for anything else.
    fileprivate var simpleKeyPath: [String]? {
        if case .keyPath(.evaluatedObject, let keys) = self, !keys.isEmpty { return keys }
        return nil
    }
}
