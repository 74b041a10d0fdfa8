/// A model rebuilt from a Core Data SQLite store's schema, for stores whose model cache is empty
/// and whose model is lost: enough to read every row back, marked as recovered
/// (`ManagedObjectModel.recoveryNotes`) because the schema does not tell everything.
///
/// What the schema gives:
/// - entities, their numbers and hierarchy from `Z_PRIMARYKEY` (`Z_ENT`, `Z_NAME`, `Z_SUPER`);
///   each hierarchy's table is `Z` + the root's upper-cased name;
/// - a to-one relationship for each `Z<NAME>` column with an entity column `Z<n>_<NAME>` (its
///   destination is entity n), and for each indexed `Z<NAME>` column (`<TABLE>_Z<NAME>_INDEX`)
///   whose name is an entity's name or the end of exactly one entity's name;
/// - a to-many without inverse for each `Z<n><NAME>` column (entity n's relationship, pointing
///   at the table's entities), ordered when `Z_FOK_<n><NAME>` exists;
/// - a many-to-many pair for each join table `Z_<n><NAME>` with columns `Z_<x><NX>`, `Z_<y><NY>`
///   (`y.NX` points at x, `x.NY` at y);
/// - an attribute for every other column, its type from the declared column type (INTEGER →
///   integer64, VARCHAR → string, FLOAT → double, TIMESTAMP → date, DECIMAL → decimal, BLOB → binary).
///
/// What it cannot give, and is noted: the names' case (every name is the column's, lower-cased),
/// which entity of a hierarchy declares a column (all go to the root, so every subentity has them),
/// abstract flags, optionality, defaults, delete rules, the inverses of to-ones and the to-many
/// sides of one-to-many relationships (no column stores them), and integer sizes or booleans.
package enum StoreModelRecovery {

    private struct StoreEntity {
        let name: String
        let number: Int
        let superNumber: Int
        var attributes: [AttributeDescription] = []
        var relationships: [RelationshipDescription] = []
    }

    package static func model(from database: SQLiteDatabase) throws -> ManagedObjectModel {
        let store = "store '\(database.path)'"
        guard try database.tableExists("Z_PRIMARYKEY") else {
            throw MigrationError(
                .invalidModel,
                "the \(store) has no Z_PRIMARYKEY table: it is not a Core Data SQLite store, and no model can be recovered from it"
            )
        }
        var notes: [String] = [
            "rebuilt from the schema of the \(store): names are the columns' in lower case; every column belongs to its hierarchy's root entity; optionality, defaults, delete rules, abstract flags and the inverses of to-one relationships are unknown"
        ]
        var entities: [Int: StoreEntity] = [:]
        for row in try database.rows("SELECT Z_ENT, Z_NAME, Z_SUPER FROM Z_PRIMARYKEY") {
            guard row.count == 3, let number = row[0].integer, let name = row[1].text,
                ManagedObjectModel.isValidName(name)
            else {
                notes.append("a Z_PRIMARYKEY row without a usable number and entity name was left out")
                continue
            }
            entities[Int(number)] = StoreEntity(name: name, number: Int(number), superNumber: Int(row[2].integer ?? 0))
        }
        // Roots, following Z_SUPER at most entities.count steps (a cycle has no root).
        func root(of number: Int) -> Int? {
            var current = number
            for _ in 0...entities.count {
                guard let entity = entities[current] else { return nil }
                if entity.superNumber == 0 { return current }
                current = entity.superNumber
            }
            return nil
        }
        var schema: [String: (name: String, columns: [(name: String, type: String)])] = [:]
        for row in try database.rows("SELECT name FROM sqlite_master WHERE type = 'table'") {
            guard let name = row.first?.text else { continue }
            let columns = try database.rows("SELECT name, type FROM pragma_table_info(?)", [.string(name)]).compactMap {
                r -> (String, String)? in
                guard r.count == 2, let n = r[0].text else { return nil }
                return (n, r[1].text ?? "")
            }
            schema[name.uppercased()] = (name, columns.map { (name: $0.0, type: $0.1) })
        }
        var indexes = Set<String>()
        for row in try database.rows("SELECT name FROM sqlite_master WHERE type = 'index'") {
            if let name = row.first?.text { indexes.insert(name.uppercased()) }
        }
        let numberByUpperName = Dictionary(
            entities.values.map { ($0.name.uppercased(), $0.number) }, uniquingKeysWith: { a, _ in a })

        // Entities without a table (or in a Z_SUPER cycle) are left out, with their descendants.
        var tableByRoot: [Int: String] = [:]
        for (number, entity) in entities.sorted(by: { $0.key < $1.key }) {
            guard let r = root(of: number), let rootEntity = entities[r] else {
                notes.append("entity '\(entity.name)' was left out: its Z_SUPER chain does not reach a root")
                entities[number] = nil
                continue
            }
            guard let table = schema[("Z" + rootEntity.name).uppercased()] else {
                notes.append(
                    "entity '\(entity.name)' was left out: the store has no table Z\(rootEntity.name.uppercased())")
                entities[number] = nil
                continue
            }
            tableByRoot[r] = table.name
        }
        for (number, entity) in entities where entity.superNumber != 0 && entities[entity.superNumber] == nil {
            notes.append("entity '\(entity.name)' was left out: its parent was")
            entities[number] = nil
        }

        // Entity tables: attributes, to-ones and hidden to-many columns.
        for (rootNumber, tableName) in tableByRoot.sorted(by: { $0.key < $1.key }) {
            guard entities[rootNumber] != nil, let table = schema[tableName.uppercased()] else { continue }
            let upperColumns = Set(table.columns.map { $0.name.uppercased() })
            var consumed = Set<String>()
            // Entity columns Z<n>_<NAME> and ordering columns Z_FOK_… are read with their relationship.
            for column in table.columns {
                let upper = column.name.uppercased()
                guard upper.hasPrefix("Z"), let split = splitNumber(upper.dropFirst()) else { continue }
                if split.rest.hasPrefix("_"), upperColumns.contains("Z" + split.rest.dropFirst()) {
                    consumed.insert(upper)
                }
            }
            for column in table.columns {
                let upper = column.name.uppercased()
                if ["Z_PK", "Z_ENT", "Z_OPT"].contains(upper) || consumed.contains(upper) || upper.hasPrefix("Z_FOK_") {
                    continue
                }
                guard upper.hasPrefix("Z"), upper.count > 1 else {
                    notes.append(
                        "column '\(table.name).\(column.name)' was left out: it is not named as Core Data names columns"
                    )
                    continue
                }
                let body = String(upper.dropFirst())
                // Z<n><NAME>: entity n's to-many without inverse, pointing at this table's entities.
                if let split = splitNumber(Substring(body)), !split.rest.isEmpty, !split.rest.hasPrefix("_"),
                    let owner = entities[split.number], let destination = entities[rootNumber]
                {
                    let name = split.rest.lowercased()
                    guard ManagedObjectModel.isValidName(name) else { continue }
                    let ordered = upperColumns.contains("Z_FOK_" + body)
                    entities[owner.number]?.relationships.append(
                        RelationshipDescription(
                            name: name, destination: destination.name, inverse: nil, isToMany: true, isOrdered: ordered)
                    )
                    continue
                }
                let name = body.lowercased()
                guard ManagedObjectModel.isValidName(name) else {
                    notes.append(
                        "column '\(table.name).\(column.name)' was left out: '\(name)' is not a valid property name")
                    continue
                }
                let type = column.type.uppercased()
                if type.hasPrefix("INTEGER") {
                    var destination: Int? = nil
                    if let entityColumn = table.columns.first(where: { c in
                        let u = c.name.uppercased()
                        guard u.hasPrefix("Z"), let s = splitNumber(u.dropFirst()) else { return false }
                        return s.rest == "_" + body
                    }), let s = splitNumber(entityColumn.name.uppercased().dropFirst()) {
                        destination = s.number
                    } else if indexes.contains("\(table.name.uppercased())_\(upper)_INDEX") {
                        if let exact = numberByUpperName[body] {
                            destination = exact
                        } else {
                            let endings = entities.values.filter { $0.name.uppercased().hasSuffix(body) }
                            if endings.count == 1 { destination = endings[0].number }
                        }
                    }
                    if let d = destination, let target = entities[d] {
                        entities[rootNumber]?.relationships.append(
                            RelationshipDescription(
                                name: name, destination: target.name, inverse: nil, isToMany: false))
                        continue
                    }
                }
                entities[rootNumber]?.attributes.append(
                    AttributeDescription(name: name, type: attributeType(declared: type)))
            }
        }

        // Join tables: Z_<n><NAME> with two columns Z_<x><NX>, Z_<y><NY>.
        for (upper, table) in schema.sorted(by: { $0.key < $1.key }) where upper.hasPrefix("Z_") {
            guard let tableSplit = splitNumber(upper.dropFirst(2)), !tableSplit.rest.isEmpty, table.columns.count >= 2
            else { continue }
            let sides = table.columns.prefix(2).compactMap { c -> (number: Int, name: String)? in
                let u = c.name.uppercased()
                guard u.hasPrefix("Z_"), let s = splitNumber(u.dropFirst(2)), !s.rest.isEmpty else { return nil }
                return (s.number, s.rest.lowercased())
            }
            guard sides.count == 2, let x = entities[sides[0].number], let y = entities[sides[1].number],
                ManagedObjectModel.isValidName(sides[0].name), ManagedObjectModel.isValidName(sides[1].name)
            else {
                notes.append("table '\(table.name)' was left out: it is not a join table between known entities")
                continue
            }
            // Column Z_<x><NX> holds x's keys: NX is y's relationship pointing at x.
            entities[y.number]?.relationships.append(
                RelationshipDescription(
                    name: sides[0].name, destination: x.name, inverse: sides[1].name, isToMany: true))
            entities[x.number]?.relationships.append(
                RelationshipDescription(
                    name: sides[1].name, destination: y.name, inverse: sides[0].name, isToMany: true))
        }

        // Names stay unique per entity (a collision can only come from lower-casing).
        var descriptions: [EntityDescription] = []
        for entity in entities.values.sorted(by: { $0.number < $1.number }) {
            var seen = Set<String>()
            let attributes = entity.attributes.filter { seen.insert($0.name).inserted }
            let relationships = entity.relationships.filter { seen.insert($0.name).inserted }
            if attributes.count + relationships.count < entity.attributes.count + entity.relationships.count {
                notes.append("entity '\(entity.name)': properties whose lower-cased names collide were left out")
            }
            descriptions.append(
                EntityDescription(
                    name: entity.name, parent: entities[entity.superNumber]?.name,
                    attributes: attributes, relationships: relationships))
        }
        let model: ManagedObjectModel
        do {
            model = try ManagedObjectModel(name: nil, versionIdentifier: nil, entities: descriptions)
        } catch var error as MigrationError {
            error.message = "no model can be recovered from the schema of the \(store): " + error.message
            throw error
        }
        model.recoveryNotes = notes
        return model
    }

    /// Leading decimal digits as a number, and what follows.
    private static func splitNumber(_ text: Substring) -> (number: Int, rest: Substring)? {
        let digits = text.prefix(while: { $0.isASCII && $0.isNumber })
        guard !digits.isEmpty, digits.count < 10, let n = Int(digits) else { return nil }
        return (n, text.dropFirst(digits.count))
    }

    /// The attribute type a declared column type stands for.
    private static func attributeType(declared: String) -> AttributeType {
        if declared.hasPrefix("INTEGER") { return .integer64 }
        if declared.hasPrefix("VARCHAR") || declared.hasPrefix("TEXT") { return .string }
        if declared.hasPrefix("FLOAT") || declared.hasPrefix("REAL") || declared.hasPrefix("DOUBLE") { return .double }
        if declared.hasPrefix("TIMESTAMP") { return .date }
        if declared.hasPrefix("DECIMAL") { return .decimal }
        return .binary
    }
}

extension ManagedObjectModel {
    /// A model rebuilt from a store's schema (`StoreModelRecovery`), whether or not the store has
    /// a model cache; `recoveryNotes` says what the schema could not tell.
    ///
    /// - Parameter path: the SQLite store (opened read-only).
    /// - Throws: `MigrationError` `.sqlite` when the store cannot be read, `.invalidModel` when it
    ///   has no `Z_PRIMARYKEY` or its entities do not form a model.
    ///
    /// Core Data counterpart: none; Core Data needs the model.
    public convenience init(schemaOfStoreAt path: String) throws {
        let database = try SQLiteDatabase(path: path, mode: .readOnly)
        defer { database.close() }
        self.init(adopting: try StoreModelRecovery.model(from: database))
    }
}
