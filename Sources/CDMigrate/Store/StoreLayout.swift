/// The one place that knows Core Data's table and column names.
///
/// **Writing** (a new store for a model, `init(model:)`): names follow Core Data's rules —
/// - one table per inheritance root, `Z` + the upper-cased name, starting with
///   `Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER`; `<TABLE>_Z_ENT_INDEX` when it holds subentities;
/// - attribute columns `Z` + the upper-cased name with `AttributeType.sqlColumnType`; a name already
///   taken in the table (upper-casing, or sub-entities sharing the table) gets 1, 2, … appended. Names are
///   claimed table by table, entity by entity in store order, own attributes then own to-ones;
/// - a to-one: `Z<NAME>` INTEGER with `<TABLE>_<COLUMN>_INDEX`, plus `Z<n>_<NAME>` (the target's `Z_ENT`,
///   n = the destination root's number) when the destination has subentities — the macOS Notes store shows
///   this column only for such destinations (`ZTRASHFOLDER`, whose destination is a leaf, has none), plus
///   `Z_FOK_<NAME>` when the inverse is an ordered to-many;
/// - a one-to-many has no column on the to-many side; a one-to-one has a column on both tables;
/// - a to-many without inverse: hidden column `Z<source entity number><NAME>` (indexed) on the destination's
///   table (`Z_FOK_<n><NAME>` when ordered);
/// - a many-to-many: a join table named after the side whose relationship name sorts last (on a tie, the
///   side with the higher entity number): `Z_<its entity number><ITS RELATIONSHIP NAME>`, with one column
///   per side, `Z_<entity number><name of the relationship pointing at that entity>` (Apple's
///   `Z_12NOTES (Z_12FOLDERS, Z_9NOTES)`), primary key over both and an index on the second; an ordered side
///   adds `Z_FOK_<column of the list's owner without Z_>` (unchecked against Apple's stores);
/// - `Z_PRIMARYKEY`, `Z_METADATA`, `Z_MODELCACHE`.
///
/// **Reading** (`read(from:model:)`): entity numbers come from the store's `Z_PRIMARYKEY`, and every name
/// computed by the rules is checked against the store's own schema; a name the store spells differently
/// (another collision number, another entity number) is found among its columns, and a stored property
/// with no column at all is an error naming the entity, the property and the table.
package final class StoreLayout {
    package struct TableDefinition {
        package var name: String
        /// Name and declared type, in order.
        package var columns: [(name: String, type: String)]
        /// For join tables: the composite primary key.
        package var primaryKey: [String]
        /// Index name and its columns.
        package var indexes: [(name: String, columns: [String])]

        /// The `CREATE TABLE` and `CREATE INDEX` statements, in Core Data's spelling.
        package var createStatements: [String] {
            var body = columns.map { column -> String in
                column.name == "Z_PK" && primaryKey.isEmpty
                    ? "Z_PK INTEGER PRIMARY KEY" : "\(column.name) \(column.type)"
            }
            if !primaryKey.isEmpty { body.append("PRIMARY KEY (\(primaryKey.joined(separator: ", ")))") }
            var statements = ["CREATE TABLE \(name) ( \(body.joined(separator: ", ")) )"]
            for index in indexes {
                statements.append("CREATE INDEX \(index.name) ON \(name) (\(index.columns.joined(separator: ", ")))")
            }
            return statements
        }
    }

    package let model: ManagedObjectModel
    /// Entity tables then join tables, as planned (for a read layout, with the store's spellings).
    package private(set) var tables: [TableDefinition] = []
    /// `CREATE [UNIQUE] INDEX` statements of the model's fetch indexes, indexed properties and
    /// uniqueness constraints (see `FetchIndexPlan`), created after the tables.
    package private(set) var fetchIndexStatements: [String] = []
    /// Things a read layout noticed but could live with (e.g. a missing ordering column).
    package private(set) var warnings: [String] = []

    private var tableByEntity: [String: String] = [:]
    /// The same by the model's own entity objects (hashing an identity, not a name), for the hot paths.
    private var tableByEntityID: [ObjectIdentifier: String] = [:]
    private var numberByEntityID: [ObjectIdentifier: Int] = [:]
    private var numberByEntity: [String: Int] = [:]
    private var entityByNumber: [Int: EntityDescription] = [:]
    private var attributeColumns: [ObjectIdentifier: String] = [:]
    private var storages: [ObjectIdentifier: RelationshipStorage] = [:]
    /// Per table: how many model entities it holds (to leave out `Z_ENT IN (…)` when all of them are wanted).
    private var entityCountByTable: [String: Int] = [:]

    /// The layout of a new store for `model`, entity numbers from `entity.entityNumber`.
    package init(model: ManagedObjectModel) {
        self.model = model
        var numbers: [String: Int] = [:]
        for entity in model.entities { numbers[entity.name] = entity.entityNumber }
        let plan = StoreLayout.plan(model: model, numbers: numbers)
        install(plan, numbers: numbers)
    }

    private init(
        model: ManagedObjectModel, plan: Plan, numbers: [String: Int], warnings: [String],
        storeEntityCounts: [String: Int]
    ) {
        self.model = model
        self.warnings = warnings
        install(plan, numbers: numbers)
        // A store may hold entities the model lacks (in the same tables): count those too, so
        // their rows are never taken for the model's.
        for (table, count) in storeEntityCounts {
            entityCountByTable[table] = max(entityCountByTable[table] ?? 0, count)
        }
    }

    private func install(_ plan: Plan, numbers: [String: Int]) {
        tables = plan.tables
        fetchIndexStatements = plan.fetchIndexStatements
        tableByEntity = plan.tableByEntity
        attributeColumns = plan.attributeColumns
        storages = plan.storages
        numberByEntity = numbers
        for entity in model.entities {
            if let n = numbers[entity.name] { entityByNumber[n] = entity }
            if let table = plan.tableByEntity[entity.name] { entityCountByTable[table, default: 0] += 1 }
            tableByEntityID[ObjectIdentifier(entity)] = table(for: entity)
            numberByEntityID[ObjectIdentifier(entity)] = entityNumber(of: entity)
        }
    }

    // MARK: What the engine asks

    /// Whether `entity` is one of the layout's model's own entities (not one of the same name of another model).
    package func isOwnEntity(_ entity: EntityDescription) -> Bool {
        numberByEntityID[ObjectIdentifier(entity)] != nil
    }

    /// The table holding the entity's rows (its root's table).
    package func table(for entity: EntityDescription) -> String {
        if let table = tableByEntityID[ObjectIdentifier(entity)] { return table }
        return tableByEntity[entity.name] ?? "Z" + entity.rootEntity.name.uppercased()
    }

    /// The entity's `Z_ENT`.
    package func entityNumber(of entity: EntityDescription) -> Int {
        if let number = numberByEntityID[ObjectIdentifier(entity)] { return number }
        return numberByEntity[entity.name] ?? entity.entityNumber
    }

    /// The entity a `Z_ENT` value stands for.
    package func entity(forNumber number: Int) -> EntityDescription? { entityByNumber[number] }

    /// The entity's number, and its descendants' when asked (depth-first order).
    package func entityNumbers(of entity: EntityDescription, includingSubentities: Bool) -> [Int] {
        let entities = includingSubentities ? entity.selfAndDescendants : [entity]
        return entities.map { entityNumber(of: $0) }
    }

    /// `Z_ENT IN (…)` (or `= n`) selecting the entity's rows in its table, nil when every row of the
    /// table qualifies. `qualifier` prefixes the column (e.g. "t." in a join).
    package func entityRestriction(for entity: EntityDescription, includingSubentities: Bool, qualifier: String = "")
        -> String?
    {
        let numbers = entityNumbers(of: entity, includingSubentities: includingSubentities)
        if numbers.count == entityCountByTable[table(for: entity)] { return nil }
        if numbers.count == 1 { return "\(qualifier)Z_ENT = \(numbers[0])" }
        return "\(qualifier)Z_ENT IN (\(numbers.map(String.init).joined(separator: ", ")))"
    }

    /// The attribute's column; nil for a transient attribute (nothing stored).
    package func column(for attribute: AttributeDescription) -> String? {
        attributeColumns[ObjectIdentifier(attribute)]
    }

    /// How the relationship is stored.
    package func storage(of relationship: RelationshipDescription) -> RelationshipStorage {
        return storages[ObjectIdentifier(relationship)] ?? .transient
    }

    /// For the predicate-to-SQL translator: a key path that is one stored attribute of the entity →
    /// its column and type; nil for anything else (relationships, key paths, transient attributes).
    package func sqlColumn(forKeyPath keys: [String], of entity: EntityDescription) -> (
        sql: String, type: AttributeType
    )? {
        guard keys.count == 1, let attribute = entity.attributesByName[keys[0]], let column = column(for: attribute)
        else { return nil }
        return (column, attribute.attributeType)
    }

    /// What `PredicateSQLTranslator` needs to push a predicate on `entity` into a `WHERE` over its table.
    package func columnResolver(for entity: EntityDescription) -> SQLColumnResolver {
        return EntityColumns(layout: self, entity: entity)
    }

    private struct EntityColumns: SQLColumnResolver {
        let layout: StoreLayout
        let entity: EntityDescription
        func sqlColumn(forKeyPath keys: [String]) -> (sql: String, type: AttributeType)? {
            layout.sqlColumn(forKeyPath: keys, of: entity)
        }
    }

    /// Every column of the entity's table that a row of this entity may fill from a relationship:
    /// its to-one columns, and the hidden and ordering columns other entities' to-manys keep on it.
    package func linkColumns(for entity: EntityDescription) -> [String] {
        var columns: [String] = []
        func add(_ name: String?) { if let n = name, !columns.contains(n) { columns.append(n) } }
        for relationship in entity.relationships {
            if case .foreignKey(let c, let e, let o) = storage(of: relationship) {
                add(c)
                add(e)
                add(o)
            }
        }
        for other in model.entities {
            for relationship in other.ownRelationships {
                guard let destination = relationship.destinationEntity, entity.isKind(of: destination) else { continue }
                if case .hiddenColumn(_, let c, let o) = storage(of: relationship) {
                    add(c)
                    add(o)
                }
            }
        }
        return columns
    }

    /// The statements creating every table and index of a new store, bookkeeping tables included.
    package var createStatements: [String] {
        var statements: [String] = []
        for table in tables { statements += table.createStatements }
        statements += fetchIndexStatements
        statements.append(
            "CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER)")
        statements.append("CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB)")
        statements.append("CREATE TABLE Z_MODELCACHE (Z_CONTENT BLOB)")
        return statements
    }

    // MARK: Planning by the rules

    private struct Plan {
        var tables: [TableDefinition] = []
        var tableByEntity: [String: String] = [:]
        var attributeColumns: [ObjectIdentifier: String] = [:]
        var storages: [ObjectIdentifier: RelationshipStorage] = [:]
        var fetchIndexStatements: [String] = []
    }

    /// A table being planned: its columns and the (upper-cased) names already taken.
    private struct TableBuilder {
        var definition: TableDefinition
        var taken: Set<String>
        /// Where each column goes in Core Data's order (see `ColumnOrder`), parallel to the columns.
        var order: [ColumnOrder] = []

        init(name: String, entityTable: Bool) {
            definition = TableDefinition(name: name, columns: [], primaryKey: [], indexes: [])
            taken = []
            if entityTable {
                for column in ["Z_PK", "Z_ENT", "Z_OPT"] { _ = add(column, "INTEGER") }
            }
        }

        /// Adds a column named `base`, or `base` + 1, 2, … when that is taken; returns the name used.
        mutating func add(_ base: String, _ type: String, order: ColumnOrder? = nil) -> String {
            let name = StoreLayout.claim(base, in: &taken)
            definition.columns.append((name, type))
            self.order.append(
                order ?? ColumnOrder(kind: -1, entityRank: 0, group: 0, name: "", part: definition.columns.count))
            return name
        }

        mutating func index(_ column: String) {
            let name = "\(definition.name)_\(column)_INDEX"
            guard !definition.indexes.contains(where: { $0.name == name }) else { return }
            definition.indexes.append((name, [column]))
        }

        /// Puts the columns in Core Data's order, and the single-column indexes in their columns'
        /// order (the `Z_ENT` index last), as the macOS Notes store has them.
        mutating func arrangeInCoreDataOrder() {
            let positions = order.indices.sorted { order[$0] < order[$1] || (order[$0] == order[$1] && $0 < $1) }
            definition.columns = positions.map { definition.columns[$0] }
            order = positions.map { order[$0] }
            let columnNames = definition.columns.map { $0.name }
            func rank(_ index: (name: String, columns: [String])) -> Int {
                guard let first = index.columns.first, first != "Z_ENT" else { return Int.max }
                return columnNames.firstIndex(of: first) ?? Int.max - 1
            }
            let ranked = definition.indexes.enumerated().sorted {
                (rank($0.element), $0.offset) < (rank($1.element), $1.offset)
            }
            definition.indexes = ranked.map { $0.element }
        }
    }

    /// `base`, or `base` + 1, 2, … when that is taken (SQLite's names ignore case, so `taken` holds
    /// upper-case names); the name returned is taken from then on.
    private static func claim(_ base: String, in taken: inout Set<String>) -> String {
        var name = base
        var n = 1
        while taken.contains(name.uppercased()) {
            name = base + String(n)
            n += 1
        }
        taken.insert(name.uppercased())
        return name
    }

    private static func plan(model: ManagedObjectModel, numbers: [String: Int]) -> Plan {
        var plan = Plan()
        func number(_ entity: EntityDescription) -> Int { numbers[entity.name] ?? entity.entityNumber }
        var tableNames: Set<String> = ["Z_PRIMARYKEY", "Z_METADATA", "Z_MODELCACHE"]
        func claimTable(_ base: String) -> String { claim(base, in: &tableNames) }
        let roots = model.entities.filter { $0.parent == nil }.sorted { number($0) < number($1) }
        var builders: [TableBuilder] = []
        var builderIndex: [String: Int] = [:]  // entity name → index in builders

        // Pass 1: entity tables with attributes and to-one columns.
        for root in roots {
            var builder = TableBuilder(name: claimTable("Z" + root.name.uppercased()), entityTable: true)
            let members = root.selfAndDescendants.sorted { number($0) < number($1) }
            for (rank, entity) in members.enumerated() {
                plan.tableByEntity[entity.name] = builder.definition.name
                builderIndex[entity.name] = builders.count
                for attribute in entity.ownAttributes where !attribute.isTransient {
                    let type = attribute.attributeType.sqlColumnType
                    let column = builder.add(
                        "Z" + attribute.name.uppercased(), type,
                        order: ColumnOrder(
                            kind: ColumnOrder.kind(of: type), entityRank: rank, group: 0, name: attribute.name, part: 0)
                    )
                    plan.attributeColumns[ObjectIdentifier(attribute)] = column
                    if attribute.isIndexed { builder.index(column) }
                }
                for relationship in entity.ownRelationships where !relationship.isTransient && !relationship.isToMany {
                    func order(_ part: Int) -> ColumnOrder {
                        ColumnOrder(kind: 0, entityRank: rank, group: 1, name: relationship.name, part: part)
                    }
                    let column = builder.add("Z" + relationship.name.uppercased(), "INTEGER", order: order(0))
                    let suffix = String(column.dropFirst())
                    var entityColumn: String? = nil
                    if let destination = relationship.destinationEntity, !destination.subentities.isEmpty {
                        entityColumn = builder.add(
                            "Z\(number(destination.rootEntity))_" + suffix, "INTEGER", order: order(1))
                    }
                    var orderColumn: String? = nil
                    if let inverse = relationship.inverseRelationship, inverse.isToMany, inverse.isOrdered,
                        !inverse.isTransient
                    {
                        orderColumn = builder.add("Z_FOK_" + suffix, "INTEGER", order: order(2))
                    }
                    builder.index(column)
                    plan.storages[ObjectIdentifier(relationship)] = .foreignKey(
                        column: column, entityColumn: entityColumn, orderColumn: orderColumn)
                }
            }
            if members.count > 1 { builder.index("Z_ENT") }
            builders.append(builder)
        }

        // Pass 2: to-manys — hidden columns on their destinations' tables, and join tables.
        var joinBuilders: [TableBuilder] = []
        let all = model.entities.sorted { number($0) < number($1) }
        for entity in all {
            for relationship in entity.ownRelationships where relationship.isToMany && !relationship.isTransient {
                let id = ObjectIdentifier(relationship)
                guard plan.storages[id] == nil, let destination = relationship.destinationEntity else { continue }
                guard let inverse = relationship.inverseRelationship, !inverse.isTransient else {
                    // No inverse (or a transient one): Core Data's hidden column on the destination.
                    guard let b = builderIndex[destination.name] else { continue }
                    let rank =
                        destination.rootEntity.selfAndDescendants.sorted { number($0) < number($1) }.firstIndex {
                            $0 === destination
                        } ?? 0
                    let name = "\(number(entity))" + relationship.name
                    let column = builders[b].add(
                        "Z\(number(entity))" + relationship.name.uppercased(), "INTEGER",
                        order: ColumnOrder(kind: 0, entityRank: rank, group: 2, name: name, part: 0))
                    let order =
                        relationship.isOrdered
                        ? builders[b].add(
                            "Z_FOK_" + column.dropFirst(), "INTEGER",
                            order: ColumnOrder(kind: 0, entityRank: rank, group: 2, name: name, part: 1)) : nil
                    builders[b].index(column)
                    plan.storages[id] = .hiddenColumn(
                        table: builders[b].definition.name, column: column, orderColumn: order)
                    continue
                }
                if !inverse.isToMany {
                    guard
                        case .foreignKey(let column, let entityColumn, let orderColumn)? = plan.storages[
                            ObjectIdentifier(inverse)],
                        let inverseOwner = inverse.entity, let table = plan.tableByEntity[inverseOwner.name]
                    else { continue }
                    plan.storages[id] = .inverseForeignKey(
                        table: table, column: column, entityColumn: entityColumn, orderColumn: orderColumn)
                    continue
                }
                // Many-to-many: the side whose name sorts last names the table.
                guard let owner = relationship.entity, let inverseOwner = inverse.entity else { continue }
                let namerIsThis =
                    relationship.name != inverse.name
                    ? relationship.name > inverse.name : number(owner) >= number(inverseOwner)
                let namer = namerIsThis ? relationship : inverse
                let other = namerIsThis ? inverse : relationship
                guard let namerEntity = namer.entity, let otherEntity = other.entity else { continue }
                let table = claimTable("Z_\(number(namerEntity))" + namer.name.uppercased())
                var builder = TableBuilder(name: table, entityTable: false)
                let namerColumn = builder.add("Z_\(number(namerEntity))" + other.name.uppercased(), "INTEGER")
                let otherColumn = builder.add("Z_\(number(otherEntity))" + namer.name.uppercased(), "INTEGER")
                let namerOrder = namer.isOrdered ? builder.add("Z_FOK_" + namerColumn.dropFirst(2), "INTEGER") : nil
                let otherOrder =
                    other.isOrdered && other !== namer
                    ? builder.add("Z_FOK_" + otherColumn.dropFirst(2), "INTEGER") : nil
                builder.definition.primaryKey = [namerColumn, otherColumn]
                builder.definition.indexes.append(("\(table)_\(otherColumn)_INDEX", [otherColumn, namerColumn]))
                joinBuilders.append(builder)
                plan.storages[ObjectIdentifier(namer)] = .joinTable(
                    table: table, ownColumn: namerColumn, otherColumn: otherColumn, orderColumn: namerOrder,
                    inverseOrderColumn: otherOrder)
                if other !== namer {
                    plan.storages[ObjectIdentifier(other)] = .joinTable(
                        table: table, ownColumn: otherColumn, otherColumn: namerColumn, orderColumn: otherOrder,
                        inverseOrderColumn: namerOrder)
                }
            }
        }
        for b in builders.indices { builders[b].arrangeInCoreDataOrder() }
        plan.tables = builders.map { $0.definition } + joinBuilders.map { $0.definition }
        plan.fetchIndexStatements = FetchIndexPlan.statements(model: model, plan: plan)
        return plan
    }

    /// Core Data's column order in an entity table, read from the Apple-written stores in the test
    /// fixtures: `Z_PK, Z_ENT, Z_OPT`, then the columns by kind — integers (with to-one foreign keys
    /// and their entity and ordering columns), dates, floats and decimals, strings, blobs — within a
    /// kind by entity (the root, then its subentities in entity-number order), within an entity
    /// attributes before to-one relationships, each by name.
    struct ColumnOrder: Comparable {
        var kind: Int
        var entityRank: Int
        /// 0 attribute, 1 to-one relationship, 2 hidden column of a to-many without inverse.
        var group: Int
        var name: String
        /// Column within a property: the foreign key, its entity column, its ordering column.
        var part: Int

        static func kind(of sqlType: String) -> Int {
            switch sqlType {
            case "INTEGER": return 0
            case "TIMESTAMP": return 1
            case "FLOAT", "DECIMAL": return 2
            case "VARCHAR": return 3
            default: return 4
            }
        }

        static func < (a: ColumnOrder, b: ColumnOrder) -> Bool {
            (a.kind, a.entityRank, a.group, a.name, a.part) < (b.kind, b.entityRank, b.group, b.name, b.part)
        }
    }

    /// The indexes Core Data creates from the model, beyond the foreign-key and `Z_ENT` indexes.
    private enum FetchIndexPlan {
        static func statements(model: ManagedObjectModel, plan: Plan) -> [String] {
            var statements: [String] = []
            var names: Set<String> = []
            for table in plan.tables { for index in table.indexes { names.insert(index.name.uppercased()) } }
            func add(_ unique: Bool, _ name: String, _ table: String, _ columns: [String]) {
                guard !columns.isEmpty, names.insert(name.uppercased()).inserted else { return }
                statements.append(
                    "CREATE \(unique ? "UNIQUE " : "")INDEX \(name) ON \(table) (\(columns.joined(separator: ", ")))")
            }
            for entity in model.entitiesInStoreOrder {
                guard let table = plan.tableByEntity[entity.name] else { continue }
                func column(_ property: String) -> String? {
                    if let attribute = entity.attributesByName[property] {
                        return plan.attributeColumns[ObjectIdentifier(attribute)]
                    }
                    if let relationship = entity.relationshipsByName[property],
                        case .foreignKey(let column, _, _)? = plan.storages[ObjectIdentifier(relationship)]
                    {
                        return column
                    }
                    return nil
                }
                // Fetch indexes: Z_<Entity>_<index name>, each column COLLATE BINARY ASC|DESC.
                for index in entity.fetchIndexes {
                    var columns: [String] = []
                    for element in index.elements {
                        guard element.type == .binary, let property = element.propertyName, let c = column(property)
                        else {
                            columns = []
                            break
                        }
                        columns.append("\(c) COLLATE BINARY \(element.isAscending ? "ASC" : "DESC")")
                    }
                    add(false, "Z_\(entity.name)_\(index.name)", table, columns)
                }
                // An indexed property of an entity without fetch indexes: the fetch index Core
                // Data makes of it, named after the property (the Notes store's Z_OfflineAction_sequenceNumber).
                if entity.fetchIndexes.isEmpty {
                    for attribute in entity.ownAttributes where attribute.isIndexed {
                        if let c = column(attribute.name) {
                            add(false, "Z_\(entity.name)_\(attribute.name)", table, ["\(c) COLLATE BINARY ASC"])
                        }
                    }
                }
                // Uniqueness constraints: Z_<Entity>_UNIQUE_<property>_<property>.
                for constraint in entity.uniquenessConstraints {
                    let columns = constraint.compactMap { column($0) }
                    guard columns.count == constraint.count else { continue }
                    add(true, "Z_\(entity.name)_UNIQUE_" + constraint.joined(separator: "_"), table, columns)
                }
            }
            return statements
        }
    }

    // MARK: Reading an existing store

    /// The layout of an existing store: numbers from its `Z_PRIMARYKEY`, names checked against its schema.
    package static func read(from database: SQLiteDatabase, model: ManagedObjectModel) throws -> StoreLayout {
        let where_ = "store '\(database.path)'"
        guard try database.tableExists("Z_PRIMARYKEY") else {
            throw MigrationError(
                .incompatibleVersionHash, "\(where_) is not a Core Data SQLite store: it has no Z_PRIMARYKEY table")
        }
        var storeNumbers: [String: (number: Int, superNumber: Int)] = [:]
        for row in try database.rows("SELECT Z_ENT, Z_NAME, Z_SUPER FROM Z_PRIMARYKEY") {
            guard row.count == 3, let n = row[0].integer, let name = row[1].text else { continue }
            storeNumbers[name] = (Int(n), Int(row[2].integer ?? 0))
        }
        var numbers: [String: Int] = [:]
        var problems: [MigrationError] = []
        for entity in model.entities {
            guard let entry = storeNumbers[entity.name] else {
                problems.append(
                    MigrationError(
                        .incompatibleVersionHash,
                        "entity '\(entity.name)' of the model is not in the \(where_) (no Z_PRIMARYKEY row named '\(entity.name)')"
                    ))
                continue
            }
            numbers[entity.name] = entry.number
        }
        for entity in model.entities {
            guard let entry = storeNumbers[entity.name] else { continue }
            let expected = entity.parent.flatMap { numbers[$0.name] } ?? 0
            if entry.superNumber != expected {
                let storeParent = storeNumbers.first(where: { $0.value.number == entry.superNumber })?.key
                problems.append(
                    MigrationError(
                        .incompatibleVersionHash,
                        "entity '\(entity.name)' has parent \(entity.parent.map { "'\($0.name)'" } ?? "none") in the model but \(storeParent.map { "'\($0)'" } ?? "none") in the \(where_)"
                    ))
            }
        }
        if let error = MigrationError.collecting(
            problems, code: .incompatibleVersionHash, summary: "the model does not fit the \(where_)")
        {
            throw error
        }

        // The store's tables and columns, by upper-cased name.
        var schema: [String: (name: String, columns: [String])] = [:]
        for row in try database.rows("SELECT name FROM sqlite_master WHERE type = 'table'") {
            guard let name = row.first?.text else { continue }
            schema[name.uppercased()] = (name, try database.columns(ofTable: name))
        }
        let plan = StoreLayout.plan(model: model, numbers: numbers)
        var resolver = SchemaResolver(schema: schema, storePath: database.path)
        let resolved = try resolver.resolve(plan, model: model)
        // How many of the store's entities live in each table (following Z_SUPER up to the root).
        var superByNumber: [Int: Int] = [:]
        var nameByNumber: [Int: String] = [:]
        for (name, entry) in storeNumbers {
            superByNumber[entry.number] = entry.superNumber
            nameByNumber[entry.number] = name
        }
        var storeEntityCounts: [String: Int] = [:]
        for (_, entry) in storeNumbers {
            var root = entry.number
            var steps = 0
            while let up = superByNumber[root], up != 0, steps < storeNumbers.count {
                root = up
                steps += 1
            }
            if let rootName = nameByNumber[root], let table = resolved.tableByEntity[rootName] {
                storeEntityCounts[table, default: 0] += 1
            }
        }
        return StoreLayout(
            model: model, plan: resolved, numbers: numbers, warnings: resolver.warnings,
            storeEntityCounts: storeEntityCounts)
    }

    /// Matches planned names to the store's own, claiming each real column once.
    private struct SchemaResolver {
        let schema: [String: (name: String, columns: [String])]
        let storePath: String
        var warnings: [String] = []
        /// Upper-cased "TABLE.COLUMN" already matched.
        var claimed: Set<String> = []
        var problems: [MigrationError] = []

        init(schema: [String: (name: String, columns: [String])], storePath: String) {
            self.schema = schema
            self.storePath = storePath
        }

        func realTable(_ planned: String) -> (name: String, columns: [String])? { schema[planned.uppercased()] }

        /// The real spelling of a column that exists as planned.
        func exact(_ column: String, in table: String) -> String? {
            realTable(table)?.columns.first { $0.uppercased() == column.uppercased() }
        }

        /// The columns not matched yet whose names are `prefix` + digits + `suffix`.
        func candidates(in table: String, prefix: String, suffix: String) -> [String] {
            guard let real = realTable(table) else { return [] }
            let p = prefix.uppercased()
            let s = suffix.uppercased()
            return real.columns.filter { column in
                let u = column.uppercased()
                guard !claimed.contains(real.name.uppercased() + "." + u), u.hasPrefix(p), u.hasSuffix(s),
                    u.count >= p.count + s.count
                else { return false }
                let middle = u.dropFirst(p.count).dropLast(s.count)
                return !middle.isEmpty && middle.allSatisfy { $0.isASCII && $0.isNumber }
            }
        }

        /// A join table's column as planned or, as Core Data wrote it in the stores of older systems
        /// when another join table of the model already had a column of that name, the planned name
        /// followed by a number (Artsy Folio's `Z_3SHOWS` has `Z_3ARTWORKS1` beside `Z_1ARTWORKS`'s
        /// `Z_3ARTWORKS`). `table` is a planned or real table name.
        func joinColumn(_ column: String, in table: String) -> String? {
            if let found = exact(column, in: table) { return found }
            let numbered = candidates(in: table, prefix: column, suffix: "")
            return numbered.count == 1 ? numbered[0] : nil
        }

        mutating func claim(_ column: String, in table: String) {
            claimed.insert((realTable(table)?.name ?? table).uppercased() + "." + column.uppercased())
        }

        /// Every planned name that exists is claimed first, so fallbacks only pick unmatched columns.
        mutating func claimExisting(_ plan: Plan) {
            for table in plan.tables {
                for column in table.columns where exact(column.name, in: table.name) != nil {
                    claim(column.name, in: table.name)
                }
            }
        }

        /// The real column for a planned one: itself, or the single unmatched column of the same base name
        /// with another collision number.
        mutating func column(_ planned: String, base: String, in table: String, what: () -> String) -> String? {
            if let real = exact(planned, in: table) { return real }
            let found = candidates(in: table, prefix: base, suffix: "")
            if found.count == 1 {
                claim(found[0], in: table)
                return found[0]
            }
            problems.append(
                MigrationError(
                    .incompatibleVersionHash,
                    "\(what()) has no column in table '\(table)' of the store '\(storePath)' (looked for '\(planned)'\(found.count > 1 ? "; several candidates: \(found.joined(separator: ", "))" : ""))"
                ))
            return nil
        }

        mutating func resolve(_ plan: Plan, model: ManagedObjectModel) throws -> Plan {
            claimExisting(plan)
            var result = plan
            var tableRename: [String: String] = [:]
            for table in plan.tables where table.primaryKey.isEmpty {
                if let real = realTable(table.name) {
                    tableRename[table.name] = real.name
                } else {
                    let entities = model.entities.filter { plan.tableByEntity[$0.name] == table.name }.map {
                        "'\($0.name)'"
                    }
                    problems.append(
                        MigrationError(
                            .incompatibleVersionHash,
                            "entit\(entities.count == 1 ? "y" : "ies") \(entities.joined(separator: ", ")) of the model ha\(entities.count == 1 ? "s" : "ve") no table '\(table.name)' in the store '\(storePath)'"
                        ))
                }
            }
            for (entity, table) in plan.tableByEntity { result.tableByEntity[entity] = tableRename[table] ?? table }

            for entity in model.entities {
                guard let table = plan.tableByEntity[entity.name], tableRename[table] != nil else { continue }
                for attribute in entity.ownAttributes {
                    guard let planned = plan.attributeColumns[ObjectIdentifier(attribute)] else { continue }
                    result.attributeColumns[ObjectIdentifier(attribute)] = column(
                        planned, base: "Z" + attribute.name.uppercased(), in: table
                    ) {
                        "attribute '\(entity.name).\(attribute.name)'"
                    }
                }
                for relationship in entity.ownRelationships {
                    let id = ObjectIdentifier(relationship)
                    guard let storage = plan.storages[id] else { continue }
                    let what = { "relationship '\(entity.name).\(relationship.name)'" }
                    switch storage {
                    case .foreignKey(let planned, let entityColumn, let orderColumn):
                        guard
                            let real = column(
                                planned, base: "Z" + relationship.name.uppercased(), in: table, what: what)
                        else { continue }
                        let suffix = String(real.dropFirst())
                        var realEntity: String? = nil
                        if let e = entityColumn {
                            realEntity =
                                exact(e, in: table) ?? exact(e.prefix(while: { $0 != "_" }) + "_" + suffix, in: table)
                            if realEntity == nil {
                                let found = candidates(in: table, prefix: "Z", suffix: "_" + suffix)
                                if found.count == 1 {
                                    realEntity = found[0]
                                    claim(found[0], in: table)
                                }
                            }
                            if realEntity == nil {
                                warnings.append(
                                    "\(what()): no entity column '\(e)' in table '\(table)'; the target's entity is looked up"
                                )
                            }
                        }
                        var realOrder: String? = nil
                        if let o = orderColumn {
                            realOrder = exact(o, in: table) ?? exact("Z_FOK_" + suffix, in: table)
                            if realOrder == nil {
                                warnings.append(
                                    "\(what()): no ordering column '\(o)' in table '\(table)'; the inverse is read unordered"
                                )
                            }
                        }
                        result.storages[id] = .foreignKey(
                            column: real, entityColumn: realEntity, orderColumn: realOrder)
                    case .hiddenColumn(let hiddenTable, let planned, let orderColumn):
                        guard tableRename[hiddenTable] != nil, let real = exact(planned, in: hiddenTable) else {
                            problems.append(
                                MigrationError(
                                    .incompatibleVersionHash,
                                    "\(what()) (a to-many without inverse) has no column '\(planned)' in table '\(hiddenTable)' of the store '\(storePath)'"
                                ))
                            continue
                        }
                        result.storages[id] = .hiddenColumn(
                            table: tableRename[hiddenTable] ?? hiddenTable, column: real,
                            orderColumn: orderColumn.flatMap { exact($0, in: hiddenTable) })
                    case .joinTable, .inverseForeignKey, .transient:
                        break
                    }
                }
            }
            // Second pass: what depends on the to-one columns resolved above, and join tables.
            var joinRename: [String: String] = [:]
            for entity in model.entities {
                for relationship in entity.ownRelationships {
                    let id = ObjectIdentifier(relationship)
                    guard let storage = plan.storages[id] else { continue }
                    switch storage {
                    case .inverseForeignKey(let table, _, _, _):
                        guard let inverse = relationship.inverseRelationship,
                            case .foreignKey(let c, let e, let o)? = result.storages[ObjectIdentifier(inverse)]
                        else { continue }
                        result.storages[id] = .inverseForeignKey(
                            table: tableRename[table] ?? table, column: c, entityColumn: e, orderColumn: o)
                    case .joinTable(let table, let own, let other, let order, let inverseOrder):
                        var realTable = joinRename[table]
                        if realTable == nil {
                            if let real = self.realTable(table), joinColumn(own, in: table) != nil,
                                joinColumn(other, in: table) != nil
                            {
                                realTable = real.name
                            } else {
                                // Another spelling of the table: any Z_ table with both columns.
                                realTable =
                                    schema.values.first { t in
                                        t.name.uppercased().hasPrefix("Z_") && joinColumn(own, in: t.name) != nil
                                            && joinColumn(other, in: t.name) != nil
                                    }?.name
                            }
                            joinRename[table] = realTable
                        }
                        guard let real = realTable else {
                            problems.append(
                                MigrationError(
                                    .incompatibleVersionHash,
                                    "relationship '\(entity.name).\(relationship.name)' (many-to-many) has no join table in the store '\(storePath)' (looked for '\(table)' with columns \(own), \(other))"
                                ))
                            continue
                        }
                        func present(_ c: String?) -> String? { c.flatMap { exact($0, in: real) } }
                        result.storages[id] = .joinTable(
                            table: real, ownColumn: joinColumn(own, in: real) ?? own,
                            otherColumn: joinColumn(other, in: real) ?? other,
                            orderColumn: present(order), inverseOrderColumn: present(inverseOrder))
                    default:
                        break
                    }
                }
            }
            for i in result.tables.indices {
                let name = result.tables[i].name
                result.tables[i].name = tableRename[name] ?? joinRename[name] ?? name
            }
            if let error = MigrationError.collecting(
                problems, code: .incompatibleVersionHash, summary: "the model does not fit the store '\(storePath)'")
            {
                throw error
            }
            return result
        }
    }
}
