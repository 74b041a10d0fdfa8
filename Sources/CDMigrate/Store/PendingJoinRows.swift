/// Join rows of plain many-to-many relationships (no order columns, not their own inverse) added
/// one pair at a time and not written yet: a store writes them a chunk per multi-row
/// `INSERT OR IGNORE` (one statement's start-up per chunk instead of per pair), and before
/// anything reads a join table or deletes from one (`PersistentStore.writeBuffer`). Written in
/// the order they were added, so a pair added twice is kept once, as row-by-row inserts keep it.
struct PendingJoinRows {
    /// Pairs per multi-row statement.
    static let chunk = 200

    private struct Table {
        /// "INSERT OR IGNORE INTO table (own, other)".
        let insert: String
        /// Owner and target keys, pair after pair.
        var keys: [Int64]
        /// Its statements, made at the first write.
        var writer: ChunkedInsert?
    }

    /// Per relationship, in the order relationships were first added to.
    private var tables: [ObjectIdentifier: Int] = [:]
    private var order: [Table] = []
    /// The relationship `index(of:)` found last, and its table's index.
    private var last: (relationship: ObjectIdentifier, index: Int)?
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    /// The index of the buffer of `relationship`'s pairs, nil before its first pair: a relationship
    /// with such a buffer is a plain many-to-many whose pairs need no other look-up (`add(at:_:_:)`).
    mutating func index(of relationship: RelationshipDescription) -> Int? {
        let key = ObjectIdentifier(relationship)
        if let last = last, last.relationship == key { return last.index }
        guard let index = tables[key] else { return nil }
        last = (key, index)
        return index
    }

    /// Buffers one pair; true when the buffer holds a chunk and should be written.
    mutating func add(
        _ relationship: RelationshipDescription, table: String, own: String, other: String, _ owner: Int64,
        _ target: Int64
    ) -> Bool {
        let index: Int
        if let known = self.index(of: relationship) {
            index = known
        } else {
            index = order.count
            tables[ObjectIdentifier(relationship)] = index
            order.append(Table(insert: "INSERT OR IGNORE INTO \(table) (\(own), \(other))", keys: []))
        }
        return add(at: index, owner, target)
    }

    /// Buffers one pair of the relationship whose buffer is at `index` (`index(of:)`); true when
    /// the buffer holds a chunk and should be written.
    mutating func add(at index: Int, _ owner: Int64, _ target: Int64) -> Bool {
        order[index].keys.append(owner)
        order[index].keys.append(target)
        count += 1
        return count >= Self.chunk
    }

    /// Writes every buffered pair and empties the buffer (also when a statement fails).
    mutating func write(to database: SQLiteDatabase) throws {
        guard count > 0 else { return }
        count = 0
        var batches: [(Int, [Int64])] = []
        for i in order.indices where !order[i].keys.isEmpty {
            batches.append((i, order[i].keys))
            order[i].keys.removeAll(keepingCapacity: true)
            if order[i].writer == nil {
                order[i].writer = ChunkedInsert(
                    order[i].insert, columns: 2, rowsPerChunk: Self.chunk, database: database)
            }
        }
        for (i, keys) in batches { try order[i].writer?.write(keys) }
    }

    mutating func removeAll() {
        tables.removeAll()
        last = nil
        order.removeAll()
        count = 0
    }
}
