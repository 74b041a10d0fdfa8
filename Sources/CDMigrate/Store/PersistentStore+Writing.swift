/// Inserting instances (buffered, written by prepared INSERTs), attribute changes, saving and bookkeeping.
extension PersistentStore {
    // MARK: Inserting and saving

    /// A new instance of a concrete entity, with its attributes' default values and a new `Z_PK`.
    public func insertObject(entityName: String) throws -> ManagedObject {
        try checkWritable("insert a '\(entityName)'")
        return try insertObject(entity: try self.entity(named: entityName))
    }

    /// `insertObject(entityName:)` for an entity already looked up (one of another model: the
    /// store's entity of that name).
    package func insertObject(entity given: EntityDescription) throws -> ManagedObject {
        try checkWritable("insert a '\(given.name)'")
        // The entity's table, key counter and defaults, looked up once per entity (`EntityInsertSlot`).
        let slot = try insertSlot(for: given)
        let entity = slot.entity
        if entity.isAbstract {
            throw MigrationError(
                .invalidArgument,
                "entity '\(entity.name)' is abstract: insert one of its subentities (\(entity.subentities.map { $0.name }.joined(separator: ", ")))"
            )
        }
        if pending.count >= insertBatchSize { try writeBuffer() }
        if !slot.recordedAsWritten {
            entitiesWrittenByInstance.insert(ObjectIdentifier(entity))
            slot.recordedAsWritten = true
        }
        let primaryKey = try allocatePrimaryKeys(in: slot.keys, for: entity, count: 1)
        let object = ManagedObject(
            entity: entity,
            objectID: ObjectID(storeIdentifier: storeIdentifier, entityName: entity.name, primaryKey: primaryKey),
            store: objectReference, values: slot.defaults)
        pendingIndex[RowKey(table: slot.table, primaryKey: primaryKey)] = pending.count
        pending.append(PendingRow(object: object, links: [:]))
        object.isBufferedInsert = true
        return object
    }

    /// Reserves `count` consecutive primary keys in the entity's table; returns the first.
    /// - Throws: `MigrationError` `.migration` when the keys would pass INT64_MAX (a table whose
    ///   `Z_MAX`, or whose largest kept key, is at or near the end of the 64-bit range).
    func allocatePrimaryKeys(for entity: EntityDescription, count: Int) throws -> Int64 {
        try allocatePrimaryKeys(in: keyCounter(for: layout.table(for: entity)), for: entity, count: count)
    }

    /// `allocatePrimaryKeys(for:count:)` with the table's key counter at hand.
    func allocatePrimaryKeys(in counter: PrimaryKeyCounter, for entity: EntityDescription, count: Int) throws -> Int64 {
        let last = counter.last
        let (first, o1) = last.addingReportingOverflow(1)
        let (end, o2) = first.addingReportingOverflow(Int64(max(count, 1)) - 1)
        guard !o1, !o2 else {
            throw MigrationError(
                .migration,
                "no primary key is left for \(max(count, 1)) new instance\(count == 1 ? "" : "s") of '\(entity.name)': its table's largest key is \(last), and a key cannot pass \(Int64.max)"
            )
        }
        counter.last = end
        return first
    }

    /// The last primary key handed out in the entity's table (0 when none yet).
    func lastAllocatedPrimaryKey(for entity: EntityDescription) -> Int64 {
        maxPrimaryKeys[layout.table(for: entity)]?.last ?? 0
    }

    /// Marks every key up to `key` in the entity's table as used (rows written there by SQL with
    /// keys of their own): later allocations start above it.
    func reservePrimaryKeys(for entity: EntityDescription, upTo key: Int64) {
        let counter = keyCounter(for: layout.table(for: entity))
        counter.last = max(counter.last, key)
    }

    /// Writes the inserted instances still buffered into the open transaction.
    public func flush() throws {
        try checkWritable("write changes")
        try writeBuffer()
    }

    /// Writes the buffer (a no-op when empty, as it always is in a read-only store); every read runs this first.
    func writeBuffer() throws {
        if !pendingJoinRows.isEmpty {
            try beginIfNeeded()
            try pendingJoinRows.write(to: database)
        }
        try writeDeferredRows()
        guard !pending.isEmpty else { return }
        try beginIfNeeded()
        var written = 0
        defer {
            // Rows already written leave the buffer even when a later one fails.
            for row in pending[0..<written] { row.object.isBufferedInsert = false }
            if written == pending.count {
                pending.removeAll(keepingCapacity: true)
                pendingIndex.removeAll(keepingCapacity: true)
            } else if written > 0 {
                for row in pending[0..<written] { pendingIndex[key(row.object)] = nil }
                pending.removeFirst(written)
                for (i, row) in pending.enumerated() { pendingIndex[key(row.object)] = i }
            }
        }
        var index = 0
        while index < pending.count {
            let entity = pending[index].object.entity
            let plan = try insertPlan(for: entity)
            // A run of a chunk's rows of one entity goes in one statement; the rest row by row.
            var run = 1
            while run < plan.rowsPerChunk, index + run < pending.count, pending[index + run].object.entity === entity {
                run += 1
            }
            if run < plan.rowsPerChunk { run = 1 }
            let statement = run == 1 ? plan.statement : plan.chunkStatement
            defer { statement.reset() }
            var position: Int32 = 1
            let attributes = entity.attributes
            let entityNumber = Value.integer(Int64(layout.entityNumber(of: entity)))
            for row in pending[index..<(index + run)] {
                let object = row.object
                try statement.bind(.integer(object.objectID.primaryKey), at: position)
                try statement.bind(entityNumber, at: position + 1)
                try statement.bind(.integer(1), at: position + 2)
                position += 3
                for attributeIndex in plan.attributeIndexes {
                    let value = object.attributeValues[attributeIndex]
                    try statement.bind(
                        attributes[attributeIndex].allowsExternalBinaryDataStorage
                            ? try columnValue(value, of: attributes[attributeIndex]) : value, at: position)
                    position += 1
                }
                for column in plan.linkColumns {
                    try statement.bind(row.links[column] ?? .null, at: position)
                    position += 1
                }
            }
            try statement.step()
            written += run
            index += run
        }
    }

    func insertPlan(for entity: EntityDescription) throws -> InsertPlan {
        if let plan = insertPlans[ObjectIdentifier(entity)] { return plan }
        var columns = ["Z_PK", "Z_ENT", "Z_OPT"]
        var indexes: [Int] = []
        for attribute in entity.attributes {
            guard let column = layout.column(for: attribute) else { continue }
            columns.append(column)
            indexes.append(attribute.index)
        }
        let links = layout.linkColumns(for: entity)
        columns += links
        let sql =
            "INSERT INTO \(layout.table(for: entity)) (\(columns.joined(separator: ", "))) VALUES (\(columns.map { _ in "?" }.joined(separator: ", ")))"
        let tuple = "(\(columns.map { _ in "?" }.joined(separator: ", ")))"
        // Within SQLite's 32,766 bound parameters.
        let rowsPerChunk = max(2, min(64, 32_000 / max(columns.count, 1)))
        let chunkSQL =
            "INSERT INTO \(layout.table(for: entity)) (\(columns.joined(separator: ", "))) VALUES "
            + Array(repeating: tuple, count: rowsPerChunk).joined(separator: ", ")
        let plan = InsertPlan(
            statement: try database.prepareUncached(sql), attributeIndexes: indexes, linkColumns: links,
            chunkStatement: try database.prepareUncached(chunkSQL), rowsPerChunk: rowsPerChunk)
        insertPlans[ObjectIdentifier(entity)] = plan
        return plan
    }

    /// Writes everything: the buffer, `Z_PRIMARYKEY` (`Z_MAX`), `Z_METADATA` for a new store; commits.
    public func save() throws {
        try checkWritable("save")
        try writeBuffer()
        try beginIfNeeded()
        try writeBookkeeping()
        try database.commit()
    }

    /// Replaces the metadata written by the next `save()`.
    public func setMetadata(_ metadata: StoreMetadata) throws {
        try checkWritable("change its metadata")
        self.metadata = metadata
        metadataNeedsSave = true
    }

    func writeBookkeeping() throws {
        if isNew {
            for entity in model.entitiesInStoreOrder {
                let maxKey: Int64 = entity.parent == nil ? maxPrimaryKeys[layout.table(for: entity)]?.last ?? 0 : 0
                try database.run(
                    "INSERT OR REPLACE INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (?, ?, ?, ?)",
                    [
                        .integer(Int64(layout.entityNumber(of: entity))), .string(entity.name),
                        .integer(Int64(entity.parent.map { layout.entityNumber(of: $0) } ?? 0)), .integer(maxKey),
                    ])
            }
        } else {
            for root in model.entities where root.parent == nil {
                let maxKey = maxPrimaryKeys[layout.table(for: root)]?.last ?? 0
                try database.run(
                    "UPDATE Z_PRIMARYKEY SET Z_MAX = ? WHERE Z_ENT = ? AND (Z_MAX IS NULL OR Z_MAX < ?)",
                    [.integer(maxKey), .integer(Int64(layout.entityNumber(of: root))), .integer(maxKey)])
            }
        }
        if metadataNeedsSave {
            try database.run(
                "INSERT OR REPLACE INTO Z_METADATA (Z_VERSION, Z_UUID, Z_PLIST) VALUES (1, ?, ?)",
                [.string(metadata.storeUUID), .binary(metadata.plistBytes())])
            metadataNeedsSave = false
        }
    }
    // MARK: ObjectContext: attributes

    package func attributeDidChange(of object: ManagedObject, _ attribute: AttributeDescription) throws {
        // An instance still in this store's insert buffer: the buffer writes its values (and its
        // insert counted it among the entities written by instance). No row key to look up.
        if object.isBufferedInsert, !isClosed, object.storeReference === objectReference { return }
        try checkWritable("change '\(object.entity.name).\(attribute.name)'")
        try checkOwn(object)
        entitiesWrittenByInstance.insert(ObjectIdentifier(object.entity))
        let rowKey = key(object)
        // A buffered row has no other instance kept (see `recentInstances`): nothing to update.
        guard pendingIndex[rowKey] == nil else { return }
        recentInstances.forget(rowKey, unlessItIs: object)
        guard let column = layout.column(for: attribute) else { return }
        try beginIfNeeded()
        let table = layout.table(for: object.entity)
        // A file this store wrote for the value being replaced goes with it (Core Data deletes a
        // replaced value's file on save as well).
        let replaced =
            ExternalBinaryData.applies(to: attribute)
            ? try database.scalar(
                "SELECT \(column) FROM \(table) WHERE Z_PK = ?", [.integer(object.objectID.primaryKey)]) : nil
        try database.run(
            "UPDATE \(table) SET \(column) = ? WHERE Z_PK = ?",
            [
                try columnValue(object.attributeValues[attribute.index], of: attribute),
                .integer(object.objectID.primaryKey),
            ])
        if case .blob(let bytes)? = replaced { externalData.discardWrittenFile(referencedBy: bytes) }
    }
}
