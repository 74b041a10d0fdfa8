/// Core Data's own tables — persistent history (`ATRANSACTION`, `ACHANGE`, `ATRANSACTIONSTRING`)
/// and CloudKit mirroring (`ANSCK…`), entities numbered from 16000 in `Z_PRIMARYKEY` — carried
/// through an inferred (lightweight) step, as Core Data's lightweight migration keeps them when it
/// alters a store in place. The entity numbers and primary keys they record of the model's
/// instances (`ZENTITY`/`ZENTITYID` with `ZENTITYPK`) are remapped where the step changed them;
/// records of an entity the step removed are dropped and counted in a warning.
extension MigrationManager {
    /// Whether the run is one inferred mapping model (Core Data's `IEM_` entity mappings only).
    var isInferredStep: Bool {
        mappingModels.count == 1 && mappingModels[0].entityMappings.allSatisfy { $0.name.hasPrefix("IEM_") }
    }

    /// Copies the framework tables of `source` (attached) into the destination and remaps them.
    func carryFrameworkTables(from source: PersistentStore, to destination: PersistentStore) throws {
        try attachSource(source, to: destination)
        let src = DeclarativeMappingSQL.sourceSchema
        let database = destination.database
        try destination.beginIfNeeded()
        var tables: [String] = []
        for row in try database.rows(
            "SELECT Z_NAME FROM \(src).Z_PRIMARYKEY WHERE Z_ENT >= ? ORDER BY Z_ENT",
            [.integer(Int64(StoreInfo.frameworkEntityNumbers))])
        {
            guard let name = row.first?.text else { continue }
            let table = "A" + name.uppercased()
            guard !tables.contains(table),
                let sql = try database.rows(
                    "SELECT sql FROM \(src).sqlite_master WHERE type = 'table' AND name = ?", [.string(table)]
                ).first?.first?.text
            else { continue }
            try database.exec(sql)
            try database.exec(
                "INSERT INTO main.\(SQLiteDatabase.quote(table)) SELECT * FROM \(src).\(SQLiteDatabase.quote(table))")
            for index in try database.rows(
                "SELECT sql FROM \(src).sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL",
                [.string(table)])
            {
                if let text = index.first?.text { try database.exec(text) }
            }
            tables.append(table)
        }
        try database.run(
            "INSERT OR REPLACE INTO main.Z_PRIMARYKEY SELECT * FROM \(src).Z_PRIMARYKEY WHERE Z_ENT >= ?",
            [.integer(Int64(StoreInfo.frameworkEntityNumbers))])

        // Which store entity number becomes which, and whose keys changed.
        var numbers: [(from: Int, to: Int?)] = []
        var keyChanges: [(storeNumber: Int, mapping: Int, modelNumber: Int)] = []
        for mapping in mappingModels.flatMap({ $0.entityMappings }) {
            guard let sourceEntity = mapping.sourceEntity, !sourceEntity.isAbstract else { continue }
            let from = source.layout.entityNumber(of: sourceEntity)
            let to = mapping.destinationEntity.map { destination.layout.entityNumber(of: $0) }
            numbers.append((from, to))
            if to != nil, run.associations?.identities[mappingID(mapping)] == nil {
                keyChanges.append((from, mappingID(mapping), sourceEntity.entityNumber))
            }
        }
        if !keyChanges.isEmpty { try run.associations?.materialize([]) }
        var dropped = 0
        for table in tables {
            let columns = Set(
                try database.rows("PRAGMA main.table_info(\(SQLiteDatabase.quote(table)))").compactMap {
                    $0.count > 1 ? $0[1].text : nil
                })
            guard columns.contains("ZENTITYPK"),
                let entityColumn = ["ZENTITY", "ZENTITYID"].first(where: columns.contains)
            else { continue }
            let quoted = "main." + SQLiteDatabase.quote(table)
            if columns.contains("ZCOLUMNS") {
                try remapHistoryColumns(of: table, entityColumn: entityColumn, source: source, destination: destination)
            }
            for change in keyChanges {
                try database.run(
                    """
                    UPDATE \(quoted) SET ZENTITYPK = COALESCE((SELECT a.destination_pk FROM cdm_association a
                        WHERE a.mapping = ? AND a.source_ent = ? AND a.source_pk = \(quoted).ZENTITYPK), ZENTITYPK)
                    WHERE \(entityColumn) = ?
                    """,
                    [
                        .integer(Int64(change.mapping)), .integer(Int64(change.modelNumber)),
                        .integer(Int64(change.storeNumber)),
                    ])
            }
            let removed = numbers.filter { $0.to == nil }.map { String($0.from) }
            if !removed.isEmpty {
                try database.exec("DELETE FROM \(quoted) WHERE \(entityColumn) IN (\(removed.joined(separator: ", ")))")
                dropped += database.changes
            }
            let moves = numbers.compactMap { pair in
                pair.to.flatMap { $0 != pair.from ? "WHEN \(pair.from) THEN \($0)" : nil }
            }
            if !moves.isEmpty {
                try database.exec(
                    "UPDATE \(quoted) SET \(entityColumn) = CASE \(entityColumn) \(moves.joined(separator: " ")) ELSE \(entityColumn) END"
                )
            }
        }
        if dropped > 0 {
            run.report.warnings.append(
                "\(dropped) persistent history or CloudKit record\(dropped == 1 ? "" : "s") of entities this step removes \(dropped == 1 ? "was" : "were") not carried"
            )
        }
    }
}
