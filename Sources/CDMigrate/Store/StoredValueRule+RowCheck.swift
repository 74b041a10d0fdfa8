import CSQLite

/// The per-row check of a declarative copy that reads its source columns bare (`cdm_plain`).
///
/// Its first argument is the signature, one code per further argument: `plainCode`'s codes (and
/// `requiredCode`'s, `h`, `w`) check a column's storage class and the destination's rules;
/// `countCode` counts a column's values for the loss report; `entityCode` checks the row's
/// `Z_ENT` against the `equalsCode` constants that follow it; `keyCode` checks that the row's key
/// is the one after the last key the statement checked (`ValueCounts.lastKey`), which lets a copy
/// keeping the source keys leave them to SQLite (`DeclarativeMappingSQL.insertRowsDense`).
///
/// A value that needs converting, or a `Z_ENT` naming none of the entity's numbers, fails the
/// call with `needsConversion`: the caller then runs the copy again with the `CASE`s that convert
/// and name the row (`DeclarativeMappingSQL.runInsertRows`), so the rows and the errors are
/// those of that copy. A key out of sequence fails with `keysNotDense`.
extension StoredValueRule {
    /// The code of the row's `Z_ENT`: an integer equal to one of the `equalsCode` arguments that
    /// follow it.
    package static let entityCode = UInt8(ascii: "e")
    /// The code of a constant an `entityCode` value is compared with.
    package static let equalsCode = UInt8(ascii: "=")
    /// The code of the row's key: an integer one above the last key the statement checked.
    package static let keyCode = UInt8(ascii: "k")

    /// The error `cdm_plain` fails with when a row's key is not the one after the last key.
    package static let keysNotDense = "cdm_plain: the source keys are not consecutive from 1"

    /// The body of `cdm_plain` (see above): sets the function's result, 1, or its error.
    /// `signature` is NUL-terminated (`sqlite3_value_text`); its length must be `count - 1`.
    @inline(__always)
    static func checkRow(
        _ context: OpaquePointer, _ signature: UnsafePointer<UInt8>,
        _ arguments: UnsafeMutablePointer<OpaquePointer?>, _ count: Int
    ) {
        let data = sqlite3_user_data(context)
        var broken = false
        var counted = 0
        var i = 1
        while i < count {
            let code = signature[i - 1]
            // A NUL before the last argument: the signature is shorter than the columns.
            if code == 0 { return mismatch(context) }
            guard let value = arguments[i] else {
                i += 1
                continue
            }
            // One storage-class read per value; the rules only for the codes that carry some.
            let storage = sqlite3_value_type(value)
            switch code {
            case countCode:
                if let data, !ValueCounts.note(counted, hasValue: storage != SQLITE_NULL, in: data) {
                    sqlite3_result_error(context, "cdm_plain: too many counted columns", -1)
                    return
                }
                counted += 1
            case entityCode:
                let entity = storage == SQLITE_INTEGER ? sqlite3_value_int64(value) : nil
                var known = false
                while i + 1 < count, signature[i] == equalsCode {
                    i += 1
                    if let entity, let number = arguments[i], sqlite3_value_int64(number) == entity { known = true }
                }
                if !known {
                    sqlite3_result_error(context, needsConversion, -1)
                    return
                }
            case keyCode:
                guard let data else { return mismatch(context) }
                let tally = data.assumingMemoryBound(to: Int.self)
                let last = tally[ValueCounts.keySlot]
                guard storage == SQLITE_INTEGER, last < Int.max, sqlite3_value_int64(value) == Int64(last + 1) else {
                    sqlite3_result_error(context, keysNotDense, -1)
                    return
                }
                tally[ValueCounts.keySlot] = last + 1
            case equalsCode:
                return mismatch(context)  // only after an entity code
            default:
                if !isPlain(value, storage: storage, code: code) {
                    sqlite3_result_error(context, needsConversion, -1)
                    return
                }
                if code < UInt8(ascii: "a") || code == UInt8(ascii: "h") || code == UInt8(ascii: "w") {
                    if breaksRule(value, storage: storage, code: code) { broken = true }
                }
            }
            i += 1
        }
        // The signature must end with the arguments.
        if count >= 1, signature[count - 1] != 0 { return mismatch(context) }
        if broken, let data { ValueCounts.noteBrokenRule(in: data) }
        sqlite3_result_int64(context, 1)
    }

    private static func mismatch(_ context: OpaquePointer) {
        sqlite3_result_error(context, "cdm_plain: the signature does not match the columns", -1)
    }
}
