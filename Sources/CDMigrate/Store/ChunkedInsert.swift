/// Rows of integer columns written by multi-row `INSERT … VALUES (…), (…)` statements, each
/// prepared once and kept (no SQL text built, hashed or compiled per write): full chunks by one
/// statement, what is left by statements of power-of-two row counts (at most one of each size per
/// write, so a table needs at most a dozen statements whatever the counts written). Used for the
/// rows a migration buffers a pair or a tuple at a time (join rows, associations).
final class ChunkedInsert {
    /// "INSERT [OR IGNORE] INTO table (a, b, …)".
    let insert: String
    let columns: Int
    /// Rows per full statement (within SQLite's bound-parameter limit).
    let rowsPerChunk: Int
    /// The prepared statements by their row count.
    private var statements: [Int: SQLiteStatement] = [:]
    private let database: SQLiteDatabase

    init(_ insert: String, columns: Int, rowsPerChunk: Int, database: SQLiteDatabase) {
        self.insert = insert
        self.columns = max(columns, 1)
        self.rowsPerChunk = max(1, min(rowsPerChunk, 32_000 / max(columns, 1)))
        self.database = database
    }

    private func sql(rows: Int) -> String {
        let tuple = "(" + Array(repeating: "?", count: columns).joined(separator: ", ") + ")"
        return insert + " VALUES " + Array(repeating: tuple, count: rows).joined(separator: ", ")
    }

    private func statement(rows: Int) throws -> SQLiteStatement {
        if let prepared = statements[rows] { return prepared }
        let statement = try database.prepareUncached(sql(rows: rows))
        statements[rows] = statement
        return statement
    }

    /// Writes `values` (row after row, `columns` values each; a trailing partial row is ignored),
    /// in order.
    func write<C: Collection>(_ values: C) throws where C.Element == Int64, C.Index == Int {
        let rows = values.count / columns
        var row = 0
        var index = values.startIndex
        while row < rows {
            let left = rows - row
            // A full chunk, else the largest power of two not above what is left.
            let count = left >= rowsPerChunk ? rowsPerChunk : 1 << (Int.bitWidth - 1 - left.leadingZeroBitCount)
            let statement = try statement(rows: count)
            defer { statement.reset() }
            var position: Int32 = 1
            for _ in 0..<(count * columns) {
                try statement.bind(.integer(values[index]), at: position)
                position += 1
                index += 1
            }
            while try statement.step() {}
            row += count
        }
    }
}
