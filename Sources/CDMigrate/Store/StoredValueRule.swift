import CSQLite

/// One rule for a stored value that does not fit its attribute's type (text in an integer
/// column, a real in a boolean one, a blob in a string one), whichever path reads it: the
/// per-instance read (`SQLiteStatement.value(at:as:)`) and the declarative SQL path, which
/// copies a column through `StoredValueRule.sql` and calls `cdm_read` for any value outside the
/// type's plain storage classes. Both give `Raw.value(as:)`: the value converted where SQLite's
/// own conversion is exact (`'12'` → 12, 1.5 → 1 in an integer column), nil where it cannot be
/// one of the type (`'text'`, a blob, 1e300 in an integer column). A range check (an
/// integer 16 above 32767) then fails the same way on both paths, in validation.
///
/// A row whose `Z_ENT` names no entity of its table is refused on both paths (134180,
/// naming the row): Core Data cannot make an instance of an unknown entity. A row of another
/// entity of the table is not read at all, as Core Data's fetch restricts on `Z_ENT`.
package enum StoredValueRule {
    /// The SQL of a source column read as `type`: the column itself when its storage class
    /// is one the per-instance read keeps unchanged, otherwise `cdm_read(column, type)`.
    package static func sql(_ column: String, as type: AttributeType) -> String {
        let plain: String
        switch type {
        case .integer16, .integer32, .integer64: plain = "typeof(\(column)) IN ('integer', 'null')"
        case .boolean: plain = "\(column) IS NULL OR (typeof(\(column)) = 'integer' AND \(column) IN (0, 1))"
        case .double, .float, .date: plain = "typeof(\(column)) IN ('real', 'integer', 'null')"
        case .string, .uri: plain = "typeof(\(column)) IN ('text', 'integer', 'null')"
        case .decimal: plain = "typeof(\(column)) IN ('integer', 'real', 'text', 'null')"
        case .binary, .transformable: plain = "typeof(\(column)) IN ('blob', 'null')"
        case .uuid: plain = "\(column) IS NULL OR (typeof(\(column)) = 'blob' AND length(\(column)) = 16)"
        case .undefined, .objectID, .composite: return column
        }
        return "(CASE WHEN \(plain) THEN \(column) ELSE cdm_read(\(column), '\(type.rawValue)') END)"
    }

    /// The SQL of a row's destination entity number when every `Z_ENT` of the table is taken:
    /// `destinationNumber`, or an error naming the row when its `Z_ENT` is not among `numbers`.
    package static func checkedEntity(_ destinationNumber: Int, numbers: [Int], table: String, storePath: String, entityName: String) -> String {
        let list = numbers.map(String.init).joined(separator: ", ")
        return "(CASE WHEN t.Z_ENT IN (\(list)) THEN \(destinationNumber) ELSE cdm_bad_entity(t.Z_PK, t.Z_ENT, \(quote(table)), \(quote(storePath)), \(quote(entityName))) END)"
    }

    /// The message both paths give for a row whose `Z_ENT` is not one of the entity's.
    package static func badEntityMessage(primaryKey: Int64, entityNumber: Int64, table: String, storePath: String, entityName: String) -> String {
        "row \(primaryKey) of table '\(table)' in the store '\(storePath)' has Z_ENT \(entityNumber), which is not '\(entityName)' or one of its subentities"
    }

    /// An SQLite error message starting with this is a `MigrationError` message as it is
    /// (`SQLiteDatabase.error` drops the marker and the SQL).
    package static let errorMarker = "cdmigrate: "

    private static func quote(_ text: String) -> String { "'" + text.replacingAll("'", with: "''") + "'" }

    /// Registers `cdm_read` and `cdm_bad_entity` on a connection.
    static func register(on db: OpaquePointer) {
        let flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC
        sqlite3_create_function_v2(db, "cdm_read", 2, flags, nil, { context, count, arguments in
            guard let context, count == 2, let arguments, let value = arguments[0], let typeArgument = arguments[1] else { return }
            let typeName = sqlite3_value_text(typeArgument).map { String(cString: $0) } ?? ""
            guard let type = AttributeType(rawValue: typeName) else {
                sqlite3_result_error(context, "cdm_read: unknown attribute type", -1)
                return
            }
            StoredValueRule.result(SQLiteStatement.Raw(value).value(as: type), context)
        }, nil, nil, nil)
        sqlite3_create_function_v2(db, "cdm_bad_entity", 5, SQLITE_UTF8, nil, { context, count, arguments in
            guard let context, count == 5, let arguments else { return }
            func text(_ i: Int) -> String { arguments[i].flatMap { sqlite3_value_text($0) }.map { String(cString: $0) } ?? "" }
            let message = StoredValueRule.errorMarker + StoredValueRule.badEntityMessage(
                primaryKey: arguments[0].map { sqlite3_value_int64($0) } ?? 0, entityNumber: arguments[1].map { sqlite3_value_int64($0) } ?? 0,
                table: text(2), storePath: text(3), entityName: text(4))
            sqlite3_result_error(context, message, -1)
        }, nil, nil, nil)
    }

    /// Stores `value` as the function's result, as a bound parameter would be stored.
    private static func result(_ value: Value, _ context: OpaquePointer) {
        switch value {
        case .bool(let b): sqlite3_result_int64(context, b ? 1 : 0)
        case .integer(let i): sqlite3_result_int64(context, i)
        case .double(let d), .date(let d): sqlite3_result_double(context, d)
        case .decimal(let s), .string(let s), .uri(let s):
            let bytes = Array(s.utf8) + [0]
            bytes.withUnsafeBufferPointer { buffer in
                buffer.withMemoryRebound(to: CChar.self) { sqlite3_result_text(context, $0.baseAddress, Int32(clamping: bytes.count - 1), cdm_sqlite_transient) }
            }
        case .binary(let bytes), .uuid(let bytes):
            if bytes.isEmpty { sqlite3_result_zeroblob(context, 0); return }
            bytes.withUnsafeBytes { sqlite3_result_blob(context, $0.baseAddress, Int32(clamping: $0.count), cdm_sqlite_transient) }
        case .null, .object, .collection, .migrationManager: sqlite3_result_null(context)
        }
    }
}

extension SQLiteStatement.Raw {
    /// The value of an SQL function's argument.
    init(_ value: OpaquePointer) {
        switch sqlite3_value_type(value) {
        case SQLITE_INTEGER: self = .integer(sqlite3_value_int64(value))
        case SQLITE_FLOAT: self = .real(sqlite3_value_double(value))
        case SQLITE_TEXT:
            let count = Int(sqlite3_value_bytes(value))
            let text = sqlite3_value_text(value).map { String(decoding: UnsafeBufferPointer(start: $0, count: count), as: UTF8.self) } ?? ""
            self = .text(text)
        case SQLITE_BLOB:
            let count = Int(sqlite3_value_bytes(value))
            self = .blob(count > 0 ? sqlite3_value_blob(value).map { Array(UnsafeRawBufferPointer(start: $0, count: count)) } ?? [] : [])
        default: self = .null
        }
    }
}
