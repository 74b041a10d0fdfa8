/// What a store's external binary data looks like on disk, read without a model: the files in
/// its `.<name>_SUPPORT/_EXTERNAL_DATA` folder, the references its rows hold, and the references
/// whose file is missing. A reference is a BLOB cell of an entity table in Core Data's external
/// form (`0x02`, a 36-character UUID, `0x00`: see `ExternalBinaryData`), wherever it is.
package struct ExternalDataCensus: Equatable {
    /// The folder the store's external files belong in.
    package var folder: String
    /// Files in the folder.
    package var files: Int
    /// Row values that name a file.
    package var references: Int
    /// The paths of the files named by rows but missing from the folder (each once).
    package var missingFiles: [String]

    /// Counts the external data of the store at `path` (opened read-only).
    ///
    /// - Parameters:
    ///   - path: the store's main file.
    ///   - uri: what SQLite opens instead of `path` (a `file:` URI with options), when given.
    /// - Throws: `MigrationError` `.sqlite` when the store cannot be read.
    ///
    /// Core Data counterpart: none (Core Data keeps the folder to itself).
    package static func read(at path: String, uri: String? = nil) throws -> ExternalDataCensus {
        let folder = ExternalBinaryData.folder(forStore: path)
        let names = Set(FileIO.isDirectory(folder) ? (try? FileIO.directoryEntries(path: folder)) ?? [] : [])
        let database = try SQLiteDatabase(path: path, mode: .readOnly, uri: uri)
        defer { database.close() }
        var references = 0
        var missing = Set<String>()
        let tables = try database.rows(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'Z%' AND name NOT LIKE 'Z\\_%' ESCAPE '\\'"
        )
        for row in tables {
            guard let table = row.first?.text else { continue }
            for column in try database.rows("PRAGMA table_info(\(SQLiteDatabase.quote(table)))") where column.count > 2
            {
                guard let name = column[1].text, (column[2].text ?? "").uppercased() == "BLOB" else { continue }
                let quoted = SQLiteDatabase.quote(name)
                let sql =
                    "SELECT substr(\(quoted), 2, 36) FROM \(SQLiteDatabase.quote(table)) "
                    + "WHERE typeof(\(quoted)) = 'blob' AND length(\(quoted)) = 38 AND substr(\(quoted), 1, 1) = x'02' AND substr(\(quoted), 38, 1) = x'00'"
                for reference in try database.rows(sql) {
                    guard case .blob(let bytes)? = reference.first, bytes.allSatisfy(ExternalBinaryData.isNameByte)
                    else { continue }
                    references += 1
                    let file = String(decoding: bytes, as: UTF8.self)
                    if !names.contains(file) { missing.insert(folder + "/" + file) }
                }
            }
        }
        return ExternalDataCensus(
            folder: folder, files: names.count, references: references, missingFiles: missing.sorted())
    }
}
