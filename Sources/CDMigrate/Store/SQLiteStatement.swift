import CSQLite

/// A prepared statement: bind arguments by position, step through rows, read typed columns.
package final class SQLiteStatement {
    /// A column value as SQLite holds it.
    package enum Raw: Equatable {
        case null
        case integer(Int64)
        case real(Double)
        case text(String)
        case blob([UInt8])

        package var integer: Int64? {
            switch self {
            case .integer(let i): return i
            case .real(let d): return d.isFinite && abs(d) < 9.2e18 ? Int64(d) : nil
            case .text(let s): return Int64(s)
            default: return nil
            }
        }

        package var text: String? {
            switch self {
            case .text(let s): return s
            case .integer(let i): return String(i)
            case .real(let d): return String(d)
            case .blob(let b): return String(decoding: b, as: UTF8.self)
            case .null: return nil
            }
        }

        package var bytes: [UInt8]? {
            switch self {
            case .blob(let b): return b
            case .text(let s): return Array(s.utf8)
            default: return nil
            }
        }
    }

    package let sql: String
    private(set) var handle: OpaquePointer?
    private unowned let database: SQLiteDatabase
    /// True between a step that returned a row and the next reset: the statement is in use.
    private(set) var isBusy = false

    init(database: SQLiteDatabase, handle: OpaquePointer, sql: String) {
        self.database = database
        self.handle = handle
        self.sql = sql
    }

    deinit { finalize() }

    func finalize() {
        if let h = handle { sqlite3_finalize(h) }
        handle = nil
        isBusy = false
    }

    private func live() throws -> OpaquePointer {
        guard let h = handle else {
            throw MigrationError(.sqlite, "statement used after its database was closed — SQL: \(sql)")
        }
        return h
    }

    /// Makes the statement ready to run again and forgets its arguments.
    package func reset() {
        guard let h = handle else { return }
        sqlite3_reset(h)
        sqlite3_clear_bindings(h)
        isBusy = false
    }

    // MARK: Binding

    package var parameterCount: Int { handle.map { Int(sqlite3_bind_parameter_count($0)) } ?? 0 }

    /// Binds arguments to parameters 1, 2, … (after a reset).
    package func bind(_ values: [Value]) throws {
        let h = try live()
        let count = Int(sqlite3_bind_parameter_count(h))
        guard values.count <= count else {
            throw MigrationError(.sqlite, "\(values.count) arguments given for \(count) parameters — SQL: \(sql)")
        }
        for (i, value) in values.enumerated() { try bind(value, at: Int32(i + 1)) }
    }

    /// Binds one value (1-based position) as Core Data stores it: dates as REAL seconds since
    /// 2001, booleans 0/1, UUIDs as 16-byte BLOBs, decimals as text (a DECIMAL column's numeric
    /// affinity turns them into numbers), an instance as its primary key.
    package func bind(_ value: Value, at position: Int32) throws {
        let h = try live()
        var rc: Int32
        switch value {
        case .null: rc = sqlite3_bind_null(h, position)
        case .bool(let b): rc = sqlite3_bind_int64(h, position, b ? 1 : 0)
        case .integer(let i): rc = sqlite3_bind_int64(h, position, i)
        case .double(let d), .date(let d): rc = sqlite3_bind_double(h, position, d)
        case .decimal(let s), .string(let s), .uri(let s): rc = bindText(h, position, s)
        case .binary(let bytes), .uuid(let bytes): rc = bindBlob(h, position, bytes)
        case .object(let object): rc = sqlite3_bind_int64(h, position, object.objectID.primaryKey)
        case .collection, .dictionary:
            throw MigrationError(.sqlite, "cannot bind a \(value.typeName) to parameter \(position) — SQL: \(sql)")
        case .migrationManager:
            throw MigrationError(.sqlite, "cannot bind the migration manager to parameter \(position) — SQL: \(sql)")
        }
        if rc != SQLITE_OK { throw database.error(rc, sql: sql, what: "cannot bind parameter \(position)") }
    }

    private func bindText(_ h: OpaquePointer, _ position: Int32, _ text: String) -> Int32 {
        var text = text
        return text.withUTF8 { buffer in
            // An empty buffer may have no base address; "" is still text, not NULL.
            guard let base = buffer.baseAddress else {
                return sqlite3_bind_text(h, position, "", 0, cdm_sqlite_transient)
            }
            return base.withMemoryRebound(to: CChar.self, capacity: buffer.count) {
                sqlite3_bind_text(h, position, $0, Int32(buffer.count), cdm_sqlite_transient)
            }
        }
    }

    private func bindBlob(_ h: OpaquePointer, _ position: Int32, _ bytes: [UInt8]) -> Int32 {
        // A NULL pointer would bind SQL NULL; an empty blob is still a blob.
        if bytes.isEmpty { return sqlite3_bind_zeroblob(h, position, 0) }
        return bytes.withUnsafeBytes {
            sqlite3_bind_blob(h, position, $0.baseAddress, Int32($0.count), cdm_sqlite_transient)
        }
    }

    // MARK: Stepping

    /// Advances to the next row: true when there is one, false when the statement is done.
    @discardableResult
    package func step() throws -> Bool {
        let h = try live()
        let rc = sqlite3_step(h)
        switch rc {
        case SQLITE_ROW:
            isBusy = true
            return true
        case SQLITE_DONE:
            isBusy = false
            return false
        default:
            let error = database.error(rc, sql: sql)
            sqlite3_reset(h)
            isBusy = false
            throw error
        }
    }

    /// Resets, binds, and runs to completion (for statements returning no rows).
    package func run(_ arguments: [Value] = []) throws {
        reset()
        try bind(arguments)
        while try step() {}
        reset()
    }

    // MARK: Reading columns

    package var columnCount: Int { handle.map { Int(sqlite3_column_count($0)) } ?? 0 }

    package func columnName(at index: Int) -> String {
        guard let h = handle, let name = sqlite3_column_name(h, Int32(index)) else { return "" }
        return String(cString: name)
    }

    package func isNull(at index: Int) -> Bool {
        guard let h = handle else { return true }
        return sqlite3_column_type(h, Int32(index)) == SQLITE_NULL
    }

    package func int64(at index: Int) -> Int64 { handle.map { sqlite3_column_int64($0, Int32(index)) } ?? 0 }
    package func double(at index: Int) -> Double { handle.map { sqlite3_column_double($0, Int32(index)) } ?? 0 }

    package func text(at index: Int) -> String? {
        guard let h = handle, let pointer = sqlite3_column_text(h, Int32(index)) else { return nil }
        let count = Int(sqlite3_column_bytes(h, Int32(index)))
        return String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self)
    }

    package func blob(at index: Int) -> [UInt8] {
        guard let h = handle else { return [] }
        let count = Int(sqlite3_column_bytes(h, Int32(index)))
        guard count > 0, let pointer = sqlite3_column_blob(h, Int32(index)) else { return [] }
        return Array(UnsafeRawBufferPointer(start: pointer, count: count))
    }

    /// The column as SQLite stores it.
    package func raw(at index: Int) -> Raw {
        guard let h = handle else { return .null }
        switch sqlite3_column_type(h, Int32(index)) {
        case SQLITE_INTEGER: return .integer(sqlite3_column_int64(h, Int32(index)))
        case SQLITE_FLOAT: return .real(sqlite3_column_double(h, Int32(index)))
        case SQLITE_TEXT: return .text(text(at: index) ?? "")
        case SQLITE_BLOB: return .blob(blob(at: index))
        default: return .null
        }
    }

    /// The column as a value of an attribute type, converting what SQLite's type affinity did
    /// (e.g. a decimal stored as INTEGER or REAL). A value that cannot be one of that type reads as nil.
    package func value(at index: Int, as type: AttributeType) -> Value {
        raw(at: index).value(as: type)
    }
}

extension SQLiteStatement.Raw {
    /// The stored value as a value of an attribute type (`StoredValueRule`): converted where
    /// the conversion is exact, nil where it cannot be one of that type.
    package func value(as type: AttributeType) -> Value {
        let raw = self
        switch raw {
        case .null: return .null
        default: break
        }
        switch type {
        case .integer16, .integer32, .integer64:
            if case .real(let d) = raw, !(d.isFinite && abs(d) < 9.2e18) { return .null }
            if case .text(let s) = raw, Int64(s) == nil {
                guard let d = Double(s), d.isFinite, abs(d) < 9.2e18 else { return .null }
                return .integer(Int64(d))
            }
            return raw.integer.map { .integer($0) } ?? .null
        case .boolean:
            switch raw {
            case .integer(let i): return .bool(i != 0)
            case .real(let d): return .bool(d != 0)
            case .text(let s): return .bool(Value.string(s).boolValue)
            default: return .null
            }
        case .double, .float, .date:
            let d: Double?
            switch raw {
            case .integer(let i): d = Double(i)
            case .real(let r): d = r
            case .text(let s): d = Double(s)
            default: d = nil
            }
            guard let number = d else { return .null }
            return type == .date ? .date(number) : .double(number)
        case .decimal:
            switch raw {
            case .integer(let i): return .decimal(String(i))
            case .real(let d): return .decimal(Value.format(d))
            case .text(let s): return .decimal(s)
            default: return .null
            }
        case .string:
            return raw.text.map { .string($0) } ?? .null
        case .uri:
            return raw.text.map { .uri($0) } ?? .null
        case .binary, .transformable:
            return raw.bytes.map { .binary($0) } ?? .null
        case .uuid:
            switch raw {
            case .blob(let b) where b.count == 16: return .uuid(b)
            case .text(let s): return Value.uuidBytes(s).map { .uuid($0) } ?? .null
            default: return .null
            }
        case .undefined, .objectID, .composite:
            return raw.bytes.map { .binary($0) } ?? .null  // transient only: no column holds them
        }
    }
}
