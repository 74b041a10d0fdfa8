/// Fetching instances, counting, and faults.
extension PersistentStore {
    // MARK: Fetching

    /// The instance with that ID, or nil when the store has no such row.
    public func object(with id: ObjectID) throws -> ManagedObject? {
        try checkOpen()
        if !id.storeIdentifier.isEmpty && id.storeIdentifier != storeIdentifier {
            throw MigrationError(
                .invalidArgument,
                "object ID \(id.uriRepresentation) belongs to another store than '\(path)' (\(storeIdentifier))")
        }
        return try object(entity: try self.entity(named: id.entityName), primaryKey: id.primaryKey)
    }

    /// `object(with:)` for an entity already looked up (one of another model: the store's entity
    /// of that name) and a primary key: the instance of `entity` (or of a sub-entity) with that
    /// key, or nil.
    package func object(entity given: EntityDescription, primaryKey: Int64) throws -> ManagedObject? {
        try checkOpen()
        // The store's entity and its table, looked up once per entity (`EntityInsertSlot`).
        let slot = try insertSlot(for: given)
        let entity = slot.entity
        // An instance inserted and still buffered is that row's whole state: it is the answer, and
        // the buffer stays unwritten. Any other row is already in the table: no need to flush.
        let rowKey = RowKey(table: slot.table, primaryKey: primaryKey)
        if let i = pendingIndex[rowKey] {
            let object = pending[i].object
            return object.entity.isKind(of: entity) ? object : nil
        }
        // An instance read or written recently is kept (attribute changes write through to it).
        if let object = recentInstances.instance(for: rowKey) {
            return object.entity.isKind(of: entity) ? object : nil
        }
        var found: ManagedObject? = nil
        try query(
            entity, includesSubentities: true, condition: "t.Z_PK = ?", arguments: [.integer(primaryKey)], limit: 1,
            flushing: false
        ) {
            found = $0
            return false
        }
        if let object = found { recentInstances.remember(object, for: rowKey) }
        return found
    }

    /// A fault for a row known to exist (its concrete entity and `Z_PK`): no query now; the
    /// attribute values are read on first use. The engine hands these around where most instances
    /// are only linked, not read (relationship creation, association look-ups).
    func fault(entity: EntityDescription, primaryKey: Int64) -> ManagedObject {
        let object = ManagedObject(
            entity: entity,
            objectID: ObjectID(storeIdentifier: storeIdentifier, entityName: entity.name, primaryKey: primaryKey),
            store: objectReference, values: [])
        object.isFault = true
        return object
    }

    package func fulfillFault(_ object: ManagedObject) throws {
        try checkOpen()
        try checkOwn(object)
        var found: ManagedObject?
        try query(
            object.entity, includesSubentities: false, condition: "t.Z_PK = ?",
            arguments: [.integer(object.objectID.primaryKey)], limit: 1
        ) {
            found = $0
            return false
        }
        guard let row = found else {
            throw MigrationError(
                .invalidArgument, "instance \(object.objectID.uriRepresentation) is no longer in the store '\(path)'")
        }
        object.attributeValues = row.attributeValues
    }

    /// The instances `request` selects, in its order.
    ///
    /// - parameter request: What to fetch.
    /// - returns: The instances, faults filled.
    /// - throws: `MigrationError` `.sqlite` when the store cannot be read, or an error of the request's filter.
    ///
    /// Core Data: `NSManagedObjectContext.fetch(_:)`.
    public func fetch(_ request: FetchRequest) throws -> [ManagedObject] {
        var result: [ManagedObject] = []
        try enumerate(request) {
            result.append($0)
            return true
        }
        return result
    }

    /// Streams the request's instances to `body` one row at a time; `body` returns false to stop.
    public func enumerate(_ request: FetchRequest, _ body: (ManagedObject) throws -> Bool) throws {
        try enumerate(request, readingOnDemand: false, body)
    }

    /// `enumerate`, optionally with each instance a fault that reads its values from the
    /// enumeration's current row when first asked for (`LiveSourceRow`): for a caller that reads
    /// a few attributes of most instances and keeps few of them.
    ///
    /// With `counts` (and no filter in Swift, limit or offset) it also counts the values of the
    /// rows enumerated (`NonNilValueCounts`).
    func enumerate(
        _ request: FetchRequest, readingOnDemand: Bool, counting counts: NonNilValueCounts? = nil,
        _ body: (ManagedObject) throws -> Bool
    ) throws {
        try checkOpen()
        let entity = try self.entity(named: request.entityName)
        let offset = max(request.fetchOffset, 0)
        if let limit = request.fetchLimit, limit <= 0 { return }
        guard let filter = request.filter else {
            try query(
                entity, includesSubentities: request.includesSubentities, condition: request.sqlWhere,
                arguments: request.arguments,
                orderBy: request.sqlOrderBy, limit: request.fetchLimit, offset: offset,
                readingOnDemand: readingOnDemand, counting: request.fetchLimit == nil && offset == 0 ? counts : nil,
                body)
            return
        }
        var skipped = 0
        var delivered = 0
        try query(
            entity, includesSubentities: request.includesSubentities, condition: request.sqlWhere,
            arguments: request.arguments,
            orderBy: request.sqlOrderBy, readingOnDemand: readingOnDemand
        ) { object in
            guard try filter(object) else { return true }
            if skipped < offset {
                skipped += 1
                return true
            }
            delivered += 1
            guard try body(object) else { return false }
            if let limit = request.fetchLimit, delivered >= limit { return false }
            return true
        }
    }

    /// How many instances `fetch` would return.
    public func count(_ request: FetchRequest) throws -> Int {
        try checkOpen()
        if request.filter != nil {
            var n = 0
            try enumerate(request) { _ in
                n += 1
                return true
            }
            return n
        }
        let entity = try self.entity(named: request.entityName)
        if let limit = request.fetchLimit, limit <= 0 { return 0 }
        try writeBuffer()
        var sql = "SELECT 1 FROM \(layout.table(for: entity)) t" + request.sqlWhereClause(for: entity, in: layout)
        if request.fetchLimit != nil || request.fetchOffset > 0 {
            sql += " LIMIT \(request.fetchLimit ?? -1) OFFSET \(max(request.fetchOffset, 0))"
        }
        return Int(try database.scalar("SELECT COUNT(*) FROM (\(sql))", request.arguments)?.integer ?? 0)
    }

    func reader(for entity: EntityDescription) -> RowReader {
        if let reader = readers[entity.name] { return reader }
        var columns: [String] = []
        var positions: [Int: [Int?]] = [:]
        for concrete in entity.selfAndDescendants {
            positions[layout.entityNumber(of: concrete)] = concrete.attributes.map { attribute -> Int? in
                guard let column = layout.column(for: attribute) else { return nil }
                if let i = columns.firstIndex(of: column) { return i }
                columns.append(column)
                return columns.count - 1
            }
        }
        let selectList = (["Z_PK", "Z_ENT"] + columns).map { "t." + $0 }.joined(separator: ", ")
        let reader = RowReader(table: layout.table(for: entity), selectList: selectList, positions: positions)
        readers[entity.name] = reader
        return reader
    }

    /// Runs a SELECT over the entity's rows (`t` is its table; `join` may add others) and hands
    /// each row to `body` as an instance of its concrete entity, until `body` returns false.
    func query(
        _ entity: EntityDescription, includesSubentities: Bool, join: String? = nil, condition: String?,
        arguments: [Value],
        orderBy: String? = nil, limit: Int? = nil, offset: Int = 0, faults: Bool = false, flushing: Bool = true,
        readingOnDemand: Bool = false, counting counts: NonNilValueCounts? = nil,
        _ body: (ManagedObject) throws -> Bool
    ) throws {
        if flushing { try writeBuffer() }
        let reader = reader(for: entity)
        var sql = "SELECT \(faults ? "t.Z_PK, t.Z_ENT" : reader.selectList) FROM \(reader.table) t"
        if let join = join { sql += " " + join }
        var conditions: [String] = []
        if let restriction = layout.entityRestriction(
            for: entity, includingSubentities: includesSubentities, qualifier: "t.")
        {
            conditions.append(restriction)
        }
        if let condition = condition { conditions.append("(\(condition))") }
        if !conditions.isEmpty { sql += " WHERE " + conditions.joined(separator: " AND ") }
        sql += " ORDER BY " + (orderBy ?? "t.Z_PK")
        if limit != nil || offset > 0 { sql += " LIMIT \(limit ?? -1) OFFSET \(offset)" }
        let statement = try database.prepare(sql)
        defer { statement.reset() }
        try statement.bind(arguments)
        let liveRow =
            readingOnDemand && !faults
            ? LiveSourceRow(store: self, statement: statement, table: reader.table, counting: counts) : nil
        defer { liveRow?.finish() }
        // The last row's entity and column positions: most rows are of the entity before them.
        var lastNumber: Int?
        var lastEntity: EntityDescription?
        var positions: [Int?] = []
        while try statement.step() {
            let number = Int(statement.int64(at: 1))
            if number != lastNumber {
                guard let concrete = layout.entity(forNumber: number), let found = reader.positions[number] else {
                    throw MigrationError(
                        .sqlite,
                        StoredValueRule.badEntityMessage(
                            primaryKey: statement.int64(at: 0), entityNumber: Int64(number),
                            table: reader.table, storePath: path, entityName: entity.name))
                }
                lastNumber = number
                lastEntity = concrete
                positions = found
            }
            guard let concrete = lastEntity else { break }
            if faults {
                guard try body(fault(entity: concrete, primaryKey: statement.int64(at: 0))) else { break }
                continue
            }
            if let row = liveRow {
                guard try row.deliver(concrete, primaryKey: statement.int64(at: 0), positions, body) else { break }
                continue
            }
            var values: [Value] = []
            values.reserveCapacity(concrete.attributes.count)
            for (i, attribute) in concrete.attributes.enumerated() {
                if let p = positions[i] {
                    let raw = statement.value(at: p + 2, as: attribute.attributeType)
                    values.append(
                        attribute.allowsExternalBinaryDataStorage
                            ? try attributeValue(
                                raw, of: attribute, table: reader.table, primaryKey: statement.int64(at: 0)) : raw)
                } else {
                    values.append(attribute.defaultValue)
                }
            }
            let id = ObjectID(
                storeIdentifier: storeIdentifier, entityName: concrete.name, primaryKey: statement.int64(at: 0))
            let object = ManagedObject(entity: concrete, objectID: id, store: objectReference, values: values)
            guard try body(object) else { break }
        }
    }
}
