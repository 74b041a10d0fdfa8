/// How many of the rows an enumeration went through hold a value (a non-NULL column) for each of
/// some attributes, counted from the rows as they pass (`LiveSourceRow`): what
/// `SELECT COUNT(t.column), …` over the same rows gives, without a second scan of the table.
final class NonNilValueCounts {
    /// The attributes counted, by name (those of the entity enumerated, inherited by its sub-entities).
    let names: [String]
    /// Per name, the rows holding a value.
    private(set) var counts: [Int]
    /// Per concrete entity seen last, the column of each name in the enumeration's row.
    private var entity: ObjectIdentifier?
    private var columns: [Int?] = []

    init(names: [String]) {
        self.names = names
        counts = [Int](repeating: 0, count: names.count)
    }

    /// Counts the values of the row the statement stands on, an instance of `concrete` whose
    /// attributes' columns are at `positions` (offset by the two key columns).
    func count(_ statement: SQLiteStatement, _ concrete: EntityDescription, _ positions: [Int?]) {
        if entity != ObjectIdentifier(concrete) {
            entity = ObjectIdentifier(concrete)
            columns = names.map { name in
                concrete.attributesByName[name].flatMap { $0.index < positions.count ? positions[$0.index] : nil }
            }
        }
        for (i, column) in columns.enumerated() {
            if let column = column, !statement.isNull(at: column + 2) { counts[i] += 1 }
        }
    }
}
