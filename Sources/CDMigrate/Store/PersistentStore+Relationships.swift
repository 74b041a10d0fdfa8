/// Reading and writing relationships where the store keeps them: foreign-key columns, hidden
/// columns of to-many members, and join tables.
extension PersistentStore {
    // MARK: ObjectContext: reading relationships

    package func relationshipValue(of object: ManagedObject, _ relationship: RelationshipDescription) throws -> Value {
        try checkOpen()
        try checkOwn(object)
        guard let destination = relationship.destinationEntity else {
            return relationship.isToMany ? .collection([]) : .null
        }
        let pk = Value.integer(object.objectID.primaryKey)
        var members: [Value] = []
        let collect: (ManagedObject) throws -> Bool = {
            members.append(.object($0))
            return true
        }
        switch layout.storage(of: relationship) {
        case .foreignKey(let column, _, _):
            // The target's own row tells its concrete entity.
            let condition = "t.Z_PK = (SELECT \(column) FROM \(layout.table(for: object.entity)) WHERE Z_PK = ?)"
            try query(
                destination, includesSubentities: true, condition: condition, arguments: [pk], limit: 1, faults: true,
                collect)
            return members.first ?? .null
        case .inverseForeignKey(_, let column, _, let order), .hiddenColumn(_, let column, let order):
            try query(
                destination, includesSubentities: true, condition: "t.\(column) = ?", arguments: [pk],
                orderBy: order.map { "t.\($0), t.Z_PK" }, faults: true, collect)
        case .joinTable(let table, let own, let other, let order, _):
            try query(
                destination, includesSubentities: true, join: "JOIN \(table) j ON j.\(other) = t.Z_PK",
                condition: "j.\(own) = ?",
                arguments: [pk], orderBy: order.map { "j.\($0), t.Z_PK" }, faults: true, collect)
        case .transient:
            break
        }
        return relationship.isToMany ? .collection(members) : (members.first ?? .null)
    }

    // MARK: ObjectContext: writing relationships

    /// Sets columns of an instance's row: in the buffer when it is not written yet, else an UPDATE.
    func setColumns(of object: ManagedObject, _ values: [(String, Value)]) throws {
        if let i = pendingIndex[key(object)] {
            for (column, value) in values { pending[i].links[column] = value }
            return
        }
        try beginIfNeeded()
        let assignments = values.map { "\($0.0) = ?" }.joined(separator: ", ")
        try database.run(
            "UPDATE \(layout.table(for: object.entity)) SET \(assignments) WHERE Z_PK = ?",
            values.map { $0.1 } + [.integer(object.objectID.primaryKey)])
    }

    func entityValue(_ object: ManagedObject?) -> Value {
        object.map { .integer(Int64(layout.entityNumber(of: $0.entity))) } ?? .null
    }

    func primaryKeyValue(_ object: ManagedObject?) -> Value {
        object.map { .integer($0.objectID.primaryKey) } ?? .null
    }

    /// Checks that the store may be written and `object` and `targets` are its own.
    private func checkOwnWrite(
        _ object: ManagedObject, _ relationship: RelationshipDescription, _ targets: [ManagedObject]
    ) throws {
        try checkWritable("change '\(object.entity.name).\(relationship.name)'")
        try checkOwn(object)
        for target in targets { try checkOwn(target) }
    }

    /// Checks that `object`'s `relationship` may be changed to or by `targets`; returns how the
    /// relationship is stored.
    func checkRelationshipWrite(
        _ object: ManagedObject, _ relationship: RelationshipDescription, _ targets: [ManagedObject]
    ) throws -> RelationshipStorage {
        try checkOwnWrite(object, relationship, targets)
        let storage = layout.storage(of: relationship)
        if case .transient = storage {
            throw MigrationError(
                .invalidArgument,
                "relationship '\(object.entity.name).\(relationship.name)' is transient: the store does not keep it")
        }
        return storage
    }

    package func setRelationship(
        of object: ManagedObject, _ relationship: RelationshipDescription, to targets: [ManagedObject]
    ) throws {
        let storage = try checkRelationshipWrite(object, relationship, targets)
        let pk = primaryKeyValue(object)
        switch storage {
        case .foreignKey(let column, let entityColumn, let orderColumn):
            let target = targets.first
            if let inverse = relationship.inverseRelationship, !inverse.isToMany,
                case .foreignKey(let inverseColumn, let inverseEntityColumn, _) = layout.storage(of: inverse)
            {
                // One-to-one: both tables hold a column; the old partners of both sides let go.
                try writeBuffer()
                try beginIfNeeded()
                let targetTable = layout.table(for: inverse.entity ?? object.entity)
                try database.run(
                    "UPDATE \(targetTable) SET \(assignNull(inverseColumn, inverseEntityColumn)) WHERE \(inverseColumn) = ?",
                    [pk])
                if let target = target {
                    let ownTable = layout.table(for: object.entity)
                    try database.run(
                        "UPDATE \(ownTable) SET \(assignNull(column, entityColumn)) WHERE \(column) = ?",
                        [primaryKeyValue(target)])
                    try setColumns(of: target, columnsFor(inverseColumn, inverseEntityColumn, pointingAt: object))
                }
                try setColumns(of: object, columnsFor(column, entityColumn, pointingAt: target))
                return
            }
            var values = columnsFor(column, entityColumn, pointingAt: target)
            if let orderColumn = orderColumn {
                // A member of an ordered to-many: it goes last in its new owner's list.
                try writeBuffer()
                let table = layout.table(for: object.entity)
                if let target = target {
                    let current = try database.scalar("SELECT \(column) FROM \(table) WHERE Z_PK = ?", [pk])?.integer
                    if current == target.objectID.primaryKey { return }
                    values.append(
                        (
                            orderColumn,
                            .integer(
                                try nextOrder(
                                    table: table, orderColumn: orderColumn, where: column,
                                    equals: primaryKeyValue(target)))
                        ))
                } else {
                    values.append((orderColumn, .null))
                }
            }
            try setColumns(of: object, values)
        case .inverseForeignKey(let table, let column, let entityColumn, let orderColumn):
            try writeBuffer()
            try beginIfNeeded()
            try database.run(
                "UPDATE \(table) SET \(assignNull(column, entityColumn, orderColumn)) WHERE \(column) = ?", [pk])
            try attach(
                targets, to: object, column: column, entityColumn: entityColumn, orderColumn: orderColumn, table: table)
        case .hiddenColumn(let table, let column, let orderColumn):
            try writeBuffer()
            try beginIfNeeded()
            try database.run("UPDATE \(table) SET \(assignNull(column, nil, orderColumn)) WHERE \(column) = ?", [pk])
            try attach(targets, to: object, column: column, entityColumn: nil, orderColumn: orderColumn, table: table)
        case .joinTable(let table, let own, let other, _, _):
            try beginIfNeeded()
            try pendingJoinRows.write(to: database)
            try database.run("DELETE FROM \(table) WHERE \(own) = ?", [pk])
            if relationship.inverseRelationship === relationship {
                try database.run("DELETE FROM \(table) WHERE \(other) = ?", [pk])
            }
            try addToRelationship(of: object, relationship, targets)
        case .transient:
            break
        }
    }

    package func addToRelationship(
        of object: ManagedObject, _ relationship: RelationshipDescription, _ targets: [ManagedObject]
    ) throws {
        if let known = pendingJoinRows.index(of: relationship) {
            // A plain many-to-many whose pairs were buffered before: buffered again, no other look-up.
            try checkOwnWrite(object, relationship, targets)
            for target in targets
            where pendingJoinRows.add(at: known, object.objectID.primaryKey, target.objectID.primaryKey) {
                try beginIfNeeded()
                try pendingJoinRows.write(to: database)
            }
            return
        }
        switch try checkRelationshipWrite(object, relationship, targets) {
        case .inverseForeignKey(let table, let column, let entityColumn, let orderColumn):
            try attach(
                targets, to: object, column: column, entityColumn: entityColumn, orderColumn: orderColumn, table: table)
        case .hiddenColumn(let table, let column, let orderColumn):
            try attach(targets, to: object, column: column, entityColumn: nil, orderColumn: orderColumn, table: table)
        case .joinTable(let table, let own, let other, nil, nil) where relationship.inverseRelationship !== relationship:
            // A plain join row: buffered, written a chunk at a time (`PendingJoinRows`).
            for target in targets
            where pendingJoinRows.add(
                relationship, table: table, own: own, other: other, object.objectID.primaryKey,
                target.objectID.primaryKey)
            {
                try beginIfNeeded()
                try pendingJoinRows.write(to: database)
            }
        case .joinTable(let table, let own, let other, let order, let inverseOrder):
            try beginIfNeeded()
            try pendingJoinRows.write(to: database)
            let statement = try joinInsert(
                for: relationship, table: table, own: own, other: other, order: order, inverseOrder: inverseOrder)
            for target in targets {
                try insertJoinRow(statement, object, target)
                if relationship.inverseRelationship === relationship && target !== object {
                    try insertJoinRow(statement, target, object)
                }
            }
        case .foreignKey, .transient:
            throw MigrationError(
                .invalidArgument, "'\(object.entity.name).\(relationship.name)' is not a to-many relationship")
        }
    }

    package func removeFromRelationship(
        of object: ManagedObject, _ relationship: RelationshipDescription, _ targets: [ManagedObject]
    ) throws {
        let storage = try checkRelationshipWrite(object, relationship, targets)
        let pk = primaryKeyValue(object)
        switch storage {
        case .inverseForeignKey(let table, let column, let entityColumn, let orderColumn):
            try detach(
                targets, from: pk, table: table, column: column, entityColumn: entityColumn, orderColumn: orderColumn)
        case .hiddenColumn(let table, let column, let orderColumn):
            try detach(targets, from: pk, table: table, column: column, entityColumn: nil, orderColumn: orderColumn)
        case .joinTable(let table, let own, let other, _, _):
            try beginIfNeeded()
            try pendingJoinRows.write(to: database)
            for target in targets {
                try database.run(
                    "DELETE FROM \(table) WHERE \(own) = ? AND \(other) = ?", [pk, primaryKeyValue(target)])
                if relationship.inverseRelationship === relationship {
                    try database.run(
                        "DELETE FROM \(table) WHERE \(own) = ? AND \(other) = ?", [primaryKeyValue(target), pk])
                }
            }
        case .foreignKey, .transient:
            throw MigrationError(
                .invalidArgument, "'\(object.entity.name).\(relationship.name)' is not a to-many relationship")
        }
    }

    func columnsFor(_ column: String, _ entityColumn: String?, pointingAt target: ManagedObject?) -> [(String, Value)] {
        var values: [(String, Value)] = [(column, primaryKeyValue(target))]
        if let e = entityColumn { values.append((e, entityValue(target))) }
        return values
    }

    func assignNull(_ columns: String?...) -> String {
        columns.compactMap { $0.map { "\($0) = NULL" } }.joined(separator: ", ")
    }

    func nextOrder(table: String, orderColumn: String, where column: String, equals value: Value) throws -> Int64 {
        // MAX + 1 in Swift, not SQL: SQLite would turn INT64_MAX + 1 into a float.
        let last =
            (try database.scalar("SELECT MAX(\(orderColumn)) FROM \(table) WHERE \(column) = ?", [value])?.integer) ?? 0
        return try Self.orderAfter(last, table: table, orderColumn: orderColumn)
    }

    /// The order key after `last`; an error when a stored order key is INT64_MAX.
    static func orderAfter(_ last: Int64, table: String, orderColumn: String) throws -> Int64 {
        let (next, overflow) = last.addingReportingOverflow(1)
        guard !overflow else {
            throw MigrationError(
                .sqlite,
                "the order key \(last) in column '\(orderColumn)' of table '\(table)' leaves no room for another member (a key cannot pass \(Int64.max))"
            )
        }
        return next
    }

    /// Makes `targets` members of `owner`'s to-many kept in `column` of their table (appended when ordered).
    func attach(
        _ targets: [ManagedObject], to owner: ManagedObject, column: String, entityColumn: String?,
        orderColumn: String?, table: String
    ) throws {
        let ownerKey = primaryKeyValue(owner)
        guard let orderColumn = orderColumn else {
            for target in targets {
                var values: [(String, Value)] = [(column, ownerKey)]
                if let e = entityColumn { values.append((e, entityValue(owner))) }
                try setColumns(of: target, values)
            }
            return
        }
        try writeBuffer()
        try beginIfNeeded()
        var previous: Int64?  // the order key given last (the first is read from the table)
        for target in targets {
            // Already a member: an ordered set keeps its place.
            let current = try database.scalar(
                "SELECT \(column) FROM \(table) WHERE Z_PK = ?", [primaryKeyValue(target)])?.integer
            if current == owner.objectID.primaryKey { continue }
            let order =
                try previous.map { try Self.orderAfter($0, table: table, orderColumn: orderColumn) }
                ?? (try nextOrder(table: table, orderColumn: orderColumn, where: column, equals: ownerKey))
            var values: [(String, Value)] = [(column, ownerKey), (orderColumn, .integer(order))]
            if let e = entityColumn { values.append((e, entityValue(owner))) }
            try setColumns(of: target, values)
            previous = order
        }
    }

    func detach(
        _ targets: [ManagedObject], from ownerKey: Value, table: String, column: String, entityColumn: String?,
        orderColumn: String?
    ) throws {
        for target in targets {
            if let i = pendingIndex[key(target)] {
                if pending[i].links[column] == ownerKey {
                    for c in [column, entityColumn, orderColumn].compactMap({ $0 }) { pending[i].links[c] = .null }
                }
                continue
            }
            try beginIfNeeded()
            try database.run(
                "UPDATE \(table) SET \(assignNull(column, entityColumn, orderColumn)) WHERE Z_PK = ? AND \(column) = ?",
                [primaryKeyValue(target), ownerKey])
        }
    }

    /// The INSERT of a join row of `relationship` (`?1` its instance's `Z_PK`, `?2` the target's),
    /// prepared once per relationship for the life of the store.
    func joinInsert(
        for relationship: RelationshipDescription, table: String, own: String, other: String, order: String?,
        inverseOrder: String?
    ) throws -> SQLiteStatement {
        if let statement = joinInserts[ObjectIdentifier(relationship)] { return statement }
        var columns = [own, other]
        var values = ["?1", "?2"]
        if let order = order {
            columns.append(order)
            values.append("(SELECT COALESCE(MAX(\(order)), 0) + 1 FROM \(table) WHERE \(own) = ?1)")
        }
        if let inverseOrder = inverseOrder {
            columns.append(inverseOrder)
            values.append("(SELECT COALESCE(MAX(\(inverseOrder)), 0) + 1 FROM \(table) WHERE \(other) = ?2)")
        }
        // The primary key over both columns makes a second add of the same pair a no-op.
        let statement = try database.prepareUncached(
            "INSERT OR IGNORE INTO \(table) (\(columns.joined(separator: ", "))) VALUES (\(values.joined(separator: ", ")))"
        )
        joinInserts[ObjectIdentifier(relationship)] = statement
        return statement
    }

    func insertJoinRow(_ statement: SQLiteStatement, _ object: ManagedObject, _ target: ManagedObject) throws {
        defer { statement.reset() }
        try statement.bind(.integer(object.objectID.primaryKey), at: 1)
        try statement.bind(.integer(target.objectID.primaryKey), at: 2)
        while try statement.step() {}
    }
}
