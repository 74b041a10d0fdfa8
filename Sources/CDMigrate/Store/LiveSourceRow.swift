import CSQLite

/// The row an enumeration's statement stands on, for the instance made of it: the instance is a
/// fault whose values are read from the statement's current row when first asked for, one
/// attribute at a time, instead of every column of every row up front. A row-by-row migration
/// whose policy reads one attribute of each source instance (or none: a mapping's attributes
/// copied by SQL) decodes that one column.
///
/// Before the statement moves on, an instance still held by anyone (a policy's dictionary, a
/// retained C handle, a Python object, `run.currentSource`) takes all its values from the row
/// (`release(_:)`), so it answers them as an instance read whole would, even once its store is
/// closed; one nobody holds is let go unread, or made the next row's instance when that row is of
/// the same entity (an instance's making and freeing cost more than the reading of a column). An
/// instance that somehow outlives its row unfilled stays an ordinary fault (its row is read again
/// by primary key).
final class LiveSourceRow {
    private unowned let store: PersistentStore
    private let statement: SQLiteStatement
    private let table: String
    /// The instance of the current row (nil between rows), and its entity's column positions.
    private var object: ObjectIdentifier?
    private var positions: [Int?] = []

    /// The values counted as the rows pass, for the loss report (none when nil).
    private let counts: NonNilValueCounts?

    init(store: PersistentStore, statement: SQLiteStatement, table: String, counting counts: NonNilValueCounts?) {
        self.store = store
        self.statement = statement
        self.table = table
        self.counts = counts
    }

    /// The current row's instance, held here alone while `body` does not keep it; between rows,
    /// the last row's instance when nobody kept it (`reusable`), which serves the next row of its
    /// entity with its link to this row kept.
    private var current: ManagedObject?
    private var reusable = false
    /// The entity whose column positions `positions` holds.
    private var positionsEntity: ObjectIdentifier?

    /// Hands the row's instance (a fault of its concrete `entity`, whose columns are at
    /// `positions`) to `body`, reading its values from the row on demand, and ends the row: the
    /// instance takes all its values when someone still holds it. Returns what `body` returns.
    func deliver(
        _ entity: EntityDescription, primaryKey: Int64, _ positions: [Int?], _ body: (ManagedObject) throws -> Bool
    ) throws -> Bool {
        // Made here (or taken up again) and held by `current` alone, so that a reference kept by `body` is seen.
        if reusable, let reused = current, reused.entity === entity {
            reused.becomeFault(ofRow: primaryKey)
        } else {
            let made = store.fault(entity: entity, primaryKey: primaryKey)
            end()
            made.liveRow = self
            current = made
            object = ObjectIdentifier(made)
        }
        reusable = false
        if positionsEntity != ObjectIdentifier(entity) {
            self.positions = positions
            positionsEntity = ObjectIdentifier(entity)
        }
        counts?.count(statement, entity, positions)
        let more: Bool
        do {
            more = try call(body)
        } catch {
            // The enumeration ends: a kept instance stays a fault, read by primary key if ever asked.
            end()
            throw error
        }
        if isKnownUniquelyReferenced(&current) {
            reusable = true
        } else {
            if let kept = current, kept.isFault, let values = try values(of: kept) {
                kept.attributeValues = values
                kept.isFault = false
            }
            end()
        }
        return more
    }

    /// `body` on the current instance; the reference it is given ends with the call.
    @inline(never)
    private func call(_ body: (ManagedObject) throws -> Bool) throws -> Bool {
        guard let object = current else { return true }
        return try body(object)
    }

    /// Lets go of the current instance (its link to the row too).
    private func end() {
        current?.liveRow = nil
        current = nil
        object = nil
        reusable = false
    }

    /// Lets go of the instance kept for a next row: the enumeration has ended.
    func finish() { end() }

    /// The stored value of the attribute at `index` of `object`, read from the row (again at
    /// each call: a value is rarely read twice, and SQLite keeps the row decoded); nil when
    /// `object` is not the current row's instance (it is then filled as any fault).
    func value(at index: Int, of object: ManagedObject) throws -> Value? {
        guard self.object == ObjectIdentifier(object), index >= 0, index < positions.count else { return nil }
        return try column(index, of: object)
    }

    /// Every attribute value of `object`; nil when it is not the current row's instance.
    func values(of object: ManagedObject) throws -> [Value]? {
        guard self.object == ObjectIdentifier(object) else { return nil }
        var values: [Value] = []
        values.reserveCapacity(positions.count)
        for i in positions.indices { values.append(try column(i, of: object)) }
        return values
    }

    /// `body` on the bytes of the text the column of the attribute at `index` holds, when
    /// `object` is the current row's instance and that column holds null (`body` gets nil) or
    /// text that is valid UTF-8: `value(at:of:)` of a string attribute then reads null or that
    /// very text. False without calling `body` otherwise (another instance, no column, a value
    /// of another storage class or that needs repair), for the caller to read the value.
    func withText(at index: Int, of object: ManagedObject, _ body: (UnsafeBufferPointer<UInt8>?) -> Void) -> Bool {
        guard self.object == ObjectIdentifier(object), index >= 0, index < positions.count,
            let p = positions[index], let h = statement.handle
        else { return false }
        let column = Int32(p + 2)
        switch sqlite3_column_type(h, column) {
        case SQLITE_NULL:
            body(nil)
            return true
        case SQLITE_TEXT:
            guard let pointer = sqlite3_column_text(h, column) else { return false }
            let bytes = UnsafeBufferPointer(start: pointer, count: Int(sqlite3_column_bytes(h, column)))
            guard UTF8Check.isValid(bytes) else { return false }
            body(bytes)
            return true
        default:
            return false
        }
    }

    private func column(_ index: Int, of object: ManagedObject) throws -> Value {
        let attributes = object.entity.attributes
        guard index < attributes.count else { return .null }
        let attribute = attributes[index]
        guard let p = positions[index] else { return attribute.defaultValue }
        let raw = statement.value(at: p + 2, as: attribute.attributeType)
        return attribute.allowsExternalBinaryDataStorage
            ? try store.attributeValue(raw, of: attribute, table: table, primaryKey: object.objectID.primaryKey) : raw
    }
}

extension ManagedObject {
    /// `body` on the bytes of a string attribute's text as the live row the instance is read
    /// from holds them (nil for null), without making a `String` of them: what `value(for:)`
    /// reads then is null or that text. False without calling `body` when the value is not
    /// read that way (no live row, not a string attribute of the instance's entity, a column
    /// that needs converting or repairing), for the caller to read `value(for:)`.
    package func withLiveRowText(for attribute: AttributeDescription, _ body: (UnsafeBufferPointer<UInt8>?) -> Void)
        -> Bool
    {
        guard isFault, let row = liveRow, attribute.attributeType == .string,
            !attribute.allowsExternalBinaryDataStorage,
            attribute.index >= 0, attribute.index < entity.attributes.count,
            entity.attributes[attribute.index] === attribute
        else { return false }
        return row.withText(at: attribute.index, of: self, body)
    }
}
