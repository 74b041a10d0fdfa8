import CSQLite

/// A connection to an SQLite database: the thin layer every store operation goes through.
///
/// Statements are cached by their SQL text, so the hot paths of a migration (one INSERT per row,
/// one SELECT per relationship look-up) prepare each statement once. Every failure is a
/// `MigrationError(.sqlite, …)` carrying SQLite's own message and the SQL at fault.
package final class SQLiteDatabase {
    package enum OpenMode {
        /// Reads only; SQLite refuses every write.
        case readOnly
        /// Reads and writes an existing file.
        case readWrite
        /// Reads and writes, creating the file when it is missing.
        case create
    }

    package let path: String
    package let mode: OpenMode
    private(set) var handle: OpaquePointer?
    private var cache: [String: SQLiteStatement] = [:]
    /// What `cdm_count_values` counted (see `StoredValueRule.ValueCounts`).
    package let valueCounts = StoredValueRule.ValueCounts()
    /// Statements prepared outside the cache (kept by their owner, or a cached one was busy); finalized on close.
    private var extraStatements: [Weak<SQLiteStatement>] = []

    /// Opens `path`; with `uri` (a `file:` URI naming that file with query options such as
    /// `mode=ro` or `immutable=1`), SQLite opens the URI and `path` names it in messages.
    package init(path: String, mode: OpenMode, uri: String? = nil) throws {
        self.path = path
        self.mode = mode
        var flags: Int32
        switch mode {
        case .readOnly: flags = SQLITE_OPEN_READONLY
        case .readWrite: flags = SQLITE_OPEN_READWRITE
        // URI names are on for stores this library creates, so a migration can ATTACH its source with mode=ro.
        case .create: flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_URI
        }
        // One connection per store, used from one thread at a time: no mutex needed.
        flags |= SQLITE_OPEN_NOMUTEX
        if uri != nil { flags |= SQLITE_OPEN_URI }
        var db: OpaquePointer?
        let rc = sqlite3_open_v2(uri ?? path, &db, flags, nil)
        if rc != SQLITE_OK {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(rc))
            sqlite3_close_v2(db)
            var error = MigrationError(.sqlite, "cannot open SQLite database '\(path)': \(message)")
            error.sqliteResultCode = rc
            throw error
        }
        handle = db
        sqlite3_extended_result_codes(db, 1)
        // Wait a little for another connection (e.g. a host app) instead of failing at once.
        sqlite3_busy_timeout(db, 5000)
        if let db { StoredValueRule.register(on: db, counts: valueCounts) }
        if let db { DerivedAttributeSQL.register(on: db) }
    }

    deinit { close() }

    package var isOpen: Bool { handle != nil }

    /// Finalizes every statement and closes the connection; harmless when already closed.
    package func close() {
        guard let db = handle else { return }
        for statement in cache.values { statement.finalize() }
        cache.removeAll()
        for weak in extraStatements { weak.value?.finalize() }
        extraStatements.removeAll()
        sqlite3_close_v2(db)
        handle = nil
    }

    // MARK: Errors

    /// The error for a failed call, with SQLite's message and the SQL it ran.
    func error(_ rc: Int32, sql: String?, what: String? = nil) -> MigrationError {
        var message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(rc))
        if message.isEmpty || message == "not an error" { message = String(cString: sqlite3_errstr(rc)) }
        if message.hasPrefix(StoredValueRule.errorMarker) {
            var error = MigrationError(.sqlite, String(message.dropFirst(StoredValueRule.errorMarker.count)))
            error.sqliteResultCode = rc
            return error
        }
        var text = "\(what ?? "SQLite error") in '\(path)': \(message) (code \(rc))"
        if let sql = sql { text += " — SQL: \(sql)" }
        var error = MigrationError(.sqlite, text)
        error.sqliteResultCode = rc
        return error
    }

    func openHandle(sql: String?) throws -> OpaquePointer {
        guard let db = handle else {
            throw MigrationError(.sqlite, "the database '\(path)' is closed\(sql.map { " — SQL: \($0)" } ?? "")")
        }
        return db
    }

    /// The extended result code of the last failure.
    package var lastErrorCode: Int32 { handle.map { sqlite3_extended_errcode($0) } ?? SQLITE_MISUSE }

    // MARK: Running SQL

    /// Runs one or more statements that return no rows.
    package func exec(_ sql: String) throws {
        let db = try openHandle(sql: sql)
        var errorMessage: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(db, sql, nil, nil, &errorMessage)
        if rc != SQLITE_OK {
            let message = errorMessage.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(rc))
            sqlite3_free(errorMessage)
            var error = MigrationError(.sqlite, "SQLite error in '\(path)': \(message) (code \(rc)) — SQL: \(sql)")
            error.sqliteResultCode = rc
            throw error
        }
    }

    /// A prepared statement for `sql`, reused from the cache when it is not in the middle of a
    /// query (a nested query with the same SQL gets its own statement).
    package func prepare(_ sql: String) throws -> SQLiteStatement {
        if let cached = cache[sql] {
            if !cached.isBusy {
                cached.reset()
                return cached
            }
            return try prepareUncached(sql)
        }
        let statement = try prepareStatement(sql)
        cache[sql] = statement
        return statement
    }

    /// A statement outside the cache (for its owner to keep), finalized when released or when the database closes.
    package func prepareUncached(_ sql: String) throws -> SQLiteStatement {
        let statement = try prepareStatement(sql)
        extraStatements.removeAll { $0.value == nil }
        extraStatements.append(Weak(statement))
        return statement
    }

    private func prepareStatement(_ sql: String) throws -> SQLiteStatement {
        let db = try openHandle(sql: sql)
        var stmt: OpaquePointer?
        let rc = sqlite3_prepare_v2(db, sql, -1, &stmt, nil)
        guard rc == SQLITE_OK, let prepared = stmt else {
            sqlite3_finalize(stmt)
            throw error(rc, sql: sql, what: "cannot prepare statement")
        }
        return SQLiteStatement(database: self, handle: prepared, sql: sql)
    }

    /// Runs a statement that returns no rows, with its arguments.
    package func run(_ sql: String, _ arguments: [Value] = []) throws {
        let statement = try prepare(sql)
        try statement.bind(arguments)
        while try statement.step() {}
        statement.reset()
    }

    /// The first column of the first row, or nil when there is no row.
    package func scalar(_ sql: String, _ arguments: [Value] = []) throws -> SQLiteStatement.Raw? {
        let statement = try prepare(sql)
        defer { statement.reset() }
        try statement.bind(arguments)
        guard try statement.step() else { return nil }
        return statement.raw(at: 0)
    }

    /// Every row of a query, each as raw column values (for small bookkeeping queries).
    package func rows(_ sql: String, _ arguments: [Value] = []) throws -> [[SQLiteStatement.Raw]] {
        let statement = try prepare(sql)
        defer { statement.reset() }
        try statement.bind(arguments)
        var result: [[SQLiteStatement.Raw]] = []
        let count = statement.columnCount
        while try statement.step() {
            result.append((0..<count).map { statement.raw(at: $0) })
        }
        return result
    }

    // MARK: Transactions

    /// True while a transaction is open (SQLite is not in autocommit mode).
    package var isInTransaction: Bool {
        guard let db = handle else { return false }
        return sqlite3_get_autocommit(db) == 0
    }

    package func begin() throws { try exec("BEGIN") }
    package func commit() throws { try exec("COMMIT") }

    /// Rolls back the open transaction, if any.
    package func rollback() throws {
        if isInTransaction { try exec("ROLLBACK") }
    }

    package var lastInsertRowID: Int64 { handle.map { sqlite3_last_insert_rowid($0) } ?? 0 }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    package var changes: Int { handle.map { Int(sqlite3_changes64($0)) } ?? 0 }

    // MARK: Schema

    /// Whether a table of that name exists (case-insensitive, as SQLite's names are).
    package func tableExists(_ name: String) throws -> Bool {
        return try scalar(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ? COLLATE NOCASE", [.string(name)]) != nil
    }

    /// The column names of a table, in order; empty when there is no such table.
    package func columns(ofTable name: String) throws -> [String] {
        return try rows("SELECT name FROM pragma_table_info(?)", [.string(name)]).compactMap { $0.first?.text }
    }

    /// Quotes an identifier for SQL.
    package static func quote(_ identifier: String) -> String {
        return "\"" + identifier.replacingAll("\"", with: "\"\"") + "\""
    }
}
