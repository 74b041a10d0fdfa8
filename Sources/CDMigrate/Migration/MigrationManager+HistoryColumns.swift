import CSQLite

/// `ACHANGE.ZCOLUMNS` through an inferred step: each change's bit vector of touched properties
/// (`HistoryColumnSlots`) is re-encoded for the destination entity's slots, by property name
/// (following the step's renames), where the step changed the entity's slots. A property the step
/// removed loses its bit.
extension MigrationManager {
    /// The remapping of one store entity number's changes.
    final class HistoryColumnsRemap {
        var entries: [Int64: (source: HistoryColumnSlots, destination: HistoryColumnSlots, renamed: [String: String])] =
            [:]
    }

    /// Re-encodes `ZCOLUMNS` of `table` (in the destination, not yet renumbered: `ZENTITY` holds
    /// source entity numbers) for the entities whose slots the step changes.
    func remapHistoryColumns(
        of table: String, entityColumn: String, source: PersistentStore, destination: PersistentStore
    ) throws {
        let remap = HistoryColumnsRemap()
        for mapping in mappingModels.flatMap({ $0.entityMappings }) {
            guard let sourceEntity = mapping.sourceEntity, !sourceEntity.isAbstract,
                let destinationEntity = mapping.destinationEntity
            else { continue }
            var renamed: [String: String] = [:]
            for property in mapping.attributeMappings + mapping.relationshipMappings {
                guard let expression = property.valueExpression else { continue }
                let keys = IntendedLosses.sourceKeysRead(byExpression: expression)
                if keys.count == 1, let key = keys.first, key != property.name { renamed[key] = property.name }
            }
            let from = HistoryColumnSlots(entity: sourceEntity, layout: source.layout)
            let to = HistoryColumnSlots(entity: destinationEntity, layout: destination.layout)
            if from == to && renamed.isEmpty { continue }
            remap.entries[Int64(source.layout.entityNumber(of: sourceEntity))] = (from, to, renamed)
        }
        guard !remap.entries.isEmpty, let db = destination.database.handle else { return }
        let box = Unmanaged.passRetained(remap).toOpaque()
        let name = "cdm_remap_history_columns"
        sqlite3_create_function_v2(
            db, name, 2, SQLITE_UTF8, box,
            { context, count, arguments in
                guard let context, count == 2, let arguments, let entity = arguments[0], let value = arguments[1],
                    let data = sqlite3_user_data(context)
                else { return }
                let remap = Unmanaged<HistoryColumnsRemap>.fromOpaque(data).takeUnretainedValue()
                guard let entry = remap.entries[sqlite3_value_int64(entity)], sqlite3_value_type(value) == SQLITE_BLOB
                else {
                    sqlite3_result_value(context, value)
                    return
                }
                let length = Int(sqlite3_value_bytes(value))
                let bytes =
                    length > 0
                    ? sqlite3_value_blob(value).map { Array(UnsafeRawBufferPointer(start: $0, count: length)) } ?? []
                    : []
                let properties = entry.source.properties(in: bytes).map { entry.renamed[$0] ?? $0 }
                let result = entry.destination.bits(for: properties)
                result.withUnsafeBytes {
                    sqlite3_result_blob(context, $0.baseAddress, Int32(clamping: $0.count), cdm_sqlite_transient)
                }
            }, nil, nil,
            { pointer in
                if let pointer { Unmanaged<HistoryColumnsRemap>.fromOpaque(pointer).release() }
            })
        defer { sqlite3_create_function_v2(db, name, 2, SQLITE_UTF8, nil, nil, nil, nil, nil) }
        let numbers = remap.entries.keys.sorted().map(String.init).joined(separator: ", ")
        let quoted = "main." + SQLiteDatabase.quote(table)
        try destination.database.exec(
            "UPDATE \(quoted) SET ZCOLUMNS = \(name)(\(entityColumn), ZCOLUMNS) WHERE ZCOLUMNS IS NOT NULL AND \(entityColumn) IN (\(numbers))"
        )
    }
}
