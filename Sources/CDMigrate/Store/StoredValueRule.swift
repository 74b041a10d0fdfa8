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
/// Testing each column in SQL costs the copy more than the copy itself (a `CASE` per column
/// made a 20-column copy 2.35× slower), so the SQL path first copies the columns bare with one
/// `cdm_plain` call per row checking every column's storage class (`plainRowCheck`); only
/// when a row fails it does the copy run again through `sql` (BENCHMARKS.md).
///
/// A row whose `Z_ENT` names no entity of its table is refused on both paths (134180,
/// naming the row): Core Data cannot make an instance of an unknown entity. A row of another
/// entity of the table is not read at all, as Core Data's fetch restricts on `Z_ENT`.
package enum StoredValueRule {
    /// The SQL of a source column read as `type`: the column itself when its storage class
    /// is one the per-instance read keeps unchanged, otherwise `cdm_read(column, type)`.
    package static func sql(_ column: String, as type: AttributeType) -> String {
        guard let plain = plainCondition(column, as: type) else { return column }
        return "(CASE WHEN \(plain) THEN \(column) ELSE cdm_read(\(column), '\(type.rawValue)') END)"
    }

    /// The SQL condition under which `sql` copies the column unchanged (`cdm_plain` tests the
    /// same classes in C, `isPlain`); nil for the types `sql` never converts.
    package static func plainCondition(_ column: String, as type: AttributeType) -> String? {
        switch type {
        case .integer16, .integer32, .integer64: return "typeof(\(column)) IN ('integer', 'null')"
        case .boolean: return "\(column) IS NULL OR (typeof(\(column)) = 'integer' AND \(column) IN (0, 1))"
        case .double, .float, .date: return "typeof(\(column)) IN ('real', 'integer', 'null')"
        case .string, .uri: return "typeof(\(column)) IN ('text', 'integer', 'null')"
        case .decimal: return "typeof(\(column)) IN ('integer', 'real', 'text', 'null')"
        case .binary, .transformable: return "typeof(\(column)) IN ('blob', 'null')"
        case .uuid: return "\(column) IS NULL OR (typeof(\(column)) = 'blob' AND length(\(column)) = 16)"
        case .undefined, .objectID, .composite: return nil
        }
    }

    /// The code `cdm_plain` checks a value of `type` by: the storage classes `sql` copies
    /// unchanged. Nil for the types `sql` never converts.
    package static func plainCode(_ type: AttributeType) -> UInt8? {
        switch type {
        case .integer16, .integer32, .integer64: return UInt8(ascii: "i")
        case .boolean: return UInt8(ascii: "b")
        case .double, .float, .date: return UInt8(ascii: "d")
        case .string, .uri: return UInt8(ascii: "s")
        case .decimal: return UInt8(ascii: "x")
        case .binary, .transformable: return UInt8(ascii: "n")
        case .uuid: return UInt8(ascii: "u")
        case .undefined, .objectID, .composite: return nil
        }
    }

    /// `code` for a column whose destination attribute is required: the check then also records
    /// a NULL as a broken rule (see `ValueCounts.rulesBroken`). Besides `plainCode`'s codes, `h` and
    /// `w` check an integer as `i` does and record one outside the 16-bit or 32-bit range.
    package static func requiredCode(_ code: UInt8) -> UInt8 { code >= UInt8(ascii: "a") ? code - 32 : code }

    /// Whether `sql` would copy the value as it is (one of `plainCode`'s storage classes).
    static func isPlain(_ value: OpaquePointer, code: UInt8) -> Bool {
        isPlain(value, storage: sqlite3_value_type(value), code: code)
    }

    /// `isPlain` for a value whose storage class (`sqlite3_value_type`) is `storage`.
    @inline(__always)
    static func isPlain(_ value: OpaquePointer, storage: Int32, code: UInt8) -> Bool {
        if storage == SQLITE_NULL { return true }
        switch code | 0x20 {
        case UInt8(ascii: "i"), UInt8(ascii: "h"), UInt8(ascii: "w"): return storage == SQLITE_INTEGER
        case UInt8(ascii: "b"): return storage == SQLITE_INTEGER && (0...1).contains(sqlite3_value_int64(value))
        case UInt8(ascii: "d"): return storage == SQLITE_INTEGER || storage == SQLITE_FLOAT
        case UInt8(ascii: "s"): return storage == SQLITE_TEXT || storage == SQLITE_INTEGER
        case UInt8(ascii: "x"): return storage != SQLITE_BLOB
        case UInt8(ascii: "n"): return storage == SQLITE_BLOB
        case UInt8(ascii: "u"): return storage == SQLITE_BLOB && sqlite3_value_bytes(value) == 16
        default: return false
        }
    }

    /// Whether a plain value (`isPlain`) breaks the destination's rules that `code` carries: NULL
    /// for an uppercase code, an integer outside the range of `h` (16 bits) or `w` (32 bits).
    static func breaksRule(_ value: OpaquePointer, code: UInt8) -> Bool {
        breaksRule(value, storage: sqlite3_value_type(value), code: code)
    }

    /// `breaksRule` for a plain value whose storage class is `storage`.
    @inline(__always)
    static func breaksRule(_ value: OpaquePointer, storage: Int32, code: UInt8) -> Bool {
        if storage == SQLITE_NULL { return code < UInt8(ascii: "a") }
        switch code | 0x20 {
        case UInt8(ascii: "h"): return !(Int64(Int16.min)...Int64(Int16.max)).contains(sqlite3_value_int64(value))
        case UInt8(ascii: "w"): return !(Int64(Int32.min)...Int64(Int32.max)).contains(sqlite3_value_int64(value))
        default: return false
        }
    }

    /// SQL that is 1 for a row whose `columns` (source columns, each read as its type) all hold
    /// values `sql` copies unchanged, and fails with `needsConversion` for any other row: one
    /// function call per row (at most `plainArguments` columns a call) instead of a `CASE` per
    /// column. The copy that uses it reads the columns bare; when it fails, the caller runs the
    /// copy again with `sql` (see `DeclarativeMappingSQL.runInsertRows`). Nil when no column
    /// needs a check.
    package static func plainRowCheck(_ columns: [(column: String, type: AttributeType)]) -> String? {
        plainRowCheck(codes: columns.compactMap { column in plainCode(column.type).map { (column.column, $0) } })
    }

    /// `plainRowCheck` with each column's code given (`plainCode`, `requiredCode`, `h`, `w`).
    package static func plainRowCheck(codes columns: [(column: String, code: UInt8)]) -> String? {
        var calls: [String] = []
        var chunk: [(String, UInt8)] = []
        func flush() {
            guard !chunk.isEmpty else { return }
            let signature = String(decoding: chunk.map { $0.1 }, as: UTF8.self)
            calls.append("cdm_plain('\(signature)', \(chunk.map { $0.0 }.joined(separator: ", ")))")
            chunk.removeAll()
        }
        for (column, code) in columns {
            chunk.append((column, code))
            if chunk.count == plainArguments { flush() }
        }
        flush()
        if calls.isEmpty { return nil }
        return calls.count == 1 ? calls[0] : "min(\(calls.joined(separator: ", ")))"
    }

    /// SQL that is 1 for every row and counts, per column of `columns`, the rows where it is not
    /// NULL, in the connection's `ValueCounts` (reset it before the statement). Nil without
    /// columns or with more than one call takes (`plainArguments`).
    package static func valueCount(_ columns: [String]) -> String? {
        guard !columns.isEmpty, columns.count <= plainArguments else { return nil }
        return "cdm_count_values(\(columns.joined(separator: ", ")))"
    }

    /// The `cdm_plain` code of a column that is not checked but counted: its non-NULL values are
    /// counted in the connection's `ValueCounts`, the n-th `c` of the signature in `counts[n]`, as
    /// `cdm_count_values` counts them (the copy then makes one call per row instead of two).
    package static let countCode = UInt8(ascii: "c")

    /// The counts of `cdm_count_values`, one per argument, for the connection that owns them.
    ///
    /// Kept in memory of its own, which the SQL functions reach through their user data with no
    /// Swift object in between (no reference counting or exclusivity check per row): `tally[0]`
    /// is the broken-rule flag, `tally[1]` how many counts the statement touched, `tally[2 + n]`
    /// the n-th count, up to `plainArguments` counts, and the last slot the last key a `k` code
    /// checked (`lastKey`).
    package final class ValueCounts {
        /// Slots: the flag, the number touched, one count per argument a call can have, the last key.
        static let slots = 3 + StoredValueRule.plainArguments
        /// The slot of `lastKey`.
        static let keySlot = slots - 1
        private let tally: UnsafeMutablePointer<Int>

        package init() {
            tally = UnsafeMutablePointer<Int>.allocate(capacity: Self.slots)
            tally.initialize(repeating: 0, count: Self.slots)
        }

        deinit { tally.deallocate() }

        /// Per counted column, its rows with a value (the columns a statement counted, in order);
        /// set to `[]` before the statement.
        package var counts: [Int] {
            get { (0..<min(max(tally[1], 0), StoredValueRule.plainArguments)).map { tally[2 + $0] } }
            set {
                let n = min(newValue.count, StoredValueRule.plainArguments)
                tally.advanced(by: 2).update(repeating: 0, count: StoredValueRule.plainArguments)
                for i in 0..<n { tally[2 + i] = newValue[i] }
                tally[1] = n
            }
        }

        /// Set by `cdm_plain` when a row breaks a destination rule its codes carry
        /// (`requiredCode`, `h`, `w`); reset it before the statement.
        package var rulesBroken: Bool {
            get { tally[0] != 0 }
            set { tally[0] = newValue ? 1 : 0 }
        }

        /// The key the last `k` code of the statement checked (0 before the first row); set it to 0
        /// before the statement.
        package var lastKey: Int64 {
            get { Int64(tally[Self.keySlot]) }
            set { tally[Self.keySlot] = Int(truncatingIfNeeded: newValue) }
        }

        /// The user data the SQL functions count through (`register`).
        var userData: UnsafeMutableRawPointer { UnsafeMutableRawPointer(tally) }

        /// Counts the value of counted column `index` (0-based) in the tally `data` (a
        /// `userData`): the column is touched, and counted when it has a value. False, changing
        /// nothing, past the last slot.
        @inline(__always)
        static func note(_ index: Int, hasValue: Bool, in data: UnsafeMutableRawPointer) -> Bool {
            guard index >= 0, index < StoredValueRule.plainArguments else { return false }
            let tally = data.assumingMemoryBound(to: Int.self)
            if tally[1] <= index { tally[1] = index + 1 }
            if hasValue { tally[2 + index] &+= 1 }
            return true
        }

        /// Records a broken rule in the tally `data`.
        static func noteBrokenRule(in data: UnsafeMutableRawPointer) {
            data.assumingMemoryBound(to: Int.self)[0] = 1
        }
    }

    /// Columns per `cdm_plain` call (SQLite allows 127 arguments by default).
    static let plainArguments = 100

    /// The error `cdm_plain` fails with: a value needs the conversion of `sql`.
    package static let needsConversion = "cdm_plain: a stored value needs converting"

    /// The SQL of a row's destination entity number when every `Z_ENT` of the table is taken:
    /// `destinationNumber`, or an error naming the row when its `Z_ENT` is not among `numbers`.
    package static func checkedEntity(
        _ destinationNumber: Int, numbers: [Int], table: String, storePath: String, entityName: String
    ) -> String {
        let list = numbers.map(String.init).joined(separator: ", ")
        return
            "(CASE WHEN t.Z_ENT IN (\(list)) THEN \(destinationNumber) ELSE cdm_bad_entity(t.Z_PK, t.Z_ENT, \(quote(table)), \(quote(storePath)), \(quote(entityName))) END)"
    }

    /// The message both paths give for a row whose `Z_ENT` is not one of the entity's.
    package static func badEntityMessage(
        primaryKey: Int64, entityNumber: Int64, table: String, storePath: String, entityName: String
    ) -> String {
        "row \(primaryKey) of table '\(table)' in the store '\(storePath)' has Z_ENT \(entityNumber), which is not '\(entityName)' or one of its subentities"
    }

    /// An SQLite error message starting with this is a `MigrationError` message as it is
    /// (`SQLiteDatabase.error` drops the marker and the SQL).
    package static let errorMarker = "cdmigrate: "

    private static func quote(_ text: String) -> String { "'" + text.replacingAll("'", with: "''") + "'" }

    /// Registers `cdm_read`, `cdm_plain`, `cdm_count_values` (counting into `counts`, which the
    /// connection keeps for as long as it is open) and `cdm_bad_entity` on a connection.
    static func register(on db: OpaquePointer, counts: ValueCounts) {
        let flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC
        sqlite3_create_function_v2(
            db, "cdm_read", 2, flags, nil,
            { context, count, arguments in
                guard let context, count == 2, let arguments, let value = arguments[0], let typeArgument = arguments[1]
                else { return }
                let typeName = sqlite3_value_text(typeArgument).map { String(cString: $0) } ?? ""
                guard let type = AttributeType(rawValue: typeName) else {
                    sqlite3_result_error(context, "cdm_read: unknown attribute type", -1)
                    return
                }
                StoredValueRule.result(SQLiteStatement.Raw(value).value(as: type), context)
            }, nil, nil, nil)
        // Not deterministic: it records broken rules, once for every row the statement reads.
        sqlite3_create_function_v2(
            db, "cdm_plain", -1, SQLITE_UTF8, counts.userData,
            { context, count, arguments in
                guard let context else { return }
                guard let arguments, count >= 1, let signatureValue = arguments[0],
                    let signature = sqlite3_value_text(signatureValue)
                else {
                    sqlite3_result_error(context, "cdm_plain: the signature does not match the columns", -1)
                    return
                }
                StoredValueRule.checkRow(context, signature, arguments, Int(count))
            }, nil, nil, nil)
        // Not deterministic: it must run once for every row the statement reads.
        sqlite3_create_function_v2(
            db, "cdm_count_values", -1, SQLITE_UTF8, counts.userData,
            { context, count, arguments in
                guard let context else { return }
                guard let arguments, let data = sqlite3_user_data(context) else {
                    sqlite3_result_error(context, "cdm_count_values: no counts", -1)
                    return
                }
                for i in 0..<Int(max(count, 0)) {
                    let hasValue = arguments[i].map { sqlite3_value_type($0) != SQLITE_NULL } ?? false
                    if !ValueCounts.note(i, hasValue: hasValue, in: data) {
                        sqlite3_result_error(context, "cdm_count_values: too many columns", -1)
                        return
                    }
                }
                sqlite3_result_int64(context, 1)
            }, nil, nil, nil)
        sqlite3_create_function_v2(
            db, "cdm_bad_entity", 5, SQLITE_UTF8, nil,
            { context, count, arguments in
                guard let context, count == 5, let arguments else { return }
                func text(_ i: Int) -> String {
                    arguments[i].flatMap { sqlite3_value_text($0) }.map { String(cString: $0) } ?? ""
                }
                let message =
                    StoredValueRule.errorMarker
                    + StoredValueRule.badEntityMessage(
                        primaryKey: arguments[0].map { sqlite3_value_int64($0) } ?? 0,
                        entityNumber: arguments[1].map { sqlite3_value_int64($0) } ?? 0,
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
                buffer.withMemoryRebound(to: CChar.self) {
                    sqlite3_result_text(context, $0.baseAddress, Int32(clamping: bytes.count - 1), cdm_sqlite_transient)
                }
            }
        case .binary(let bytes), .uuid(let bytes):
            if bytes.isEmpty {
                sqlite3_result_zeroblob(context, 0)
                return
            }
            bytes.withUnsafeBytes {
                sqlite3_result_blob(context, $0.baseAddress, Int32(clamping: $0.count), cdm_sqlite_transient)
            }
        case .null, .object, .collection, .dictionary, .migrationManager: sqlite3_result_null(context)
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
            let text =
                sqlite3_value_text(value).map {
                    String(decoding: UnsafeBufferPointer(start: $0, count: count), as: UTF8.self)
                } ?? ""
            self = .text(text)
        case SQLITE_BLOB:
            let count = Int(sqlite3_value_bytes(value))
            self = .blob(
                count > 0
                    ? sqlite3_value_blob(value).map { Array(UnsafeRawBufferPointer(start: $0, count: count)) } ?? []
                    : [])
        default: self = .null
        }
    }
}
