/// NSSortDescriptor for fetches during a migration (named apart from Foundation's
/// SortDescriptor): an attribute of the fetched entity and a direction, with the default
/// comparison (`compare:`).
///
/// Sorting runs in SQL, as Core Data's SQLite store does: `ORDER BY` on the attributes' columns,
/// then `Z_PK` ascending, so ties (and a fetch without sort descriptors) come in primary-key
/// order — the order instances were made in, which policies relying on `lastObject` expect.
/// Strings compare as SQLite's BINARY collation: by Unicode code point, case-sensitively
/// ("B" before "a"), as NSString's `compare:` does for text in one normalization form; unlike
/// `compare:` a precomposed "é" and "e" + combining accent are not equal, and characters above
/// U+FFFF sort after U+E000–U+FFFF (compare: counts UTF-16 code units). Null sorts first
/// ascending, last descending, as nil does in Core Data. Numbers, dates and booleans compare as
/// numbers.
public struct FetchSortDescriptor: Equatable {
    /// An attribute of the fetched entity (inherited ones included). Key paths through
    /// relationships are not sortable here.
    public var key: String
    /// Whether smaller values come first (Core Data: `ascending`).
    public var ascending: Bool

    /// - Parameters:
    ///   - key: the attribute to sort on.
    ///   - ascending: smallest first (Core Data's `ascending: true`).
    public init(key: String, ascending: Bool = true) {
        self.key = key
        self.ascending = ascending
    }
}

extension FetchRequest {
    /// Sets `sqlOrderBy` from sort descriptors, in order, with `Z_PK` ascending last; no
    /// descriptors keep the default `Z_PK` order.
    ///
    /// - Throws: `.invalidArgument` naming the descriptor's position and key for a key that is not
    ///   a stored attribute of the entity (a relationship, a key path, a transient attribute, a
    ///   misspelt name).
    public mutating func sort(by descriptors: [FetchSortDescriptor], in store: PersistentStore) throws {
        guard !descriptors.isEmpty else { return }
        guard let entity = store.model.entity(named: entityName) else {
            throw MigrationError(
                .invalidArgument, "cannot sort a fetch of '\(entityName)': the store's model has no such entity")
        }
        var terms: [String] = []
        for (i, descriptor) in descriptors.enumerated() {
            let key = descriptor.key
            func refuse(_ why: String) -> MigrationError {
                MigrationError(
                    .invalidArgument, "sort descriptor \(i + 1) ('\(key)') of a fetch of '\(entityName)': \(why)")
            }
            if key.contains(".") {
                throw refuse("sorting follows no relationships; sort on an attribute of '\(entity.name)'")
            }
            if entity.relationship(named: key) != nil {
                throw refuse("'\(key)' is a relationship; sort on an attribute")
            }
            guard let attribute = entity.attribute(named: key) else {
                throw refuse(
                    "entity '\(entity.name)' has no attribute '\(key)'\(SpellingSuggestion.hint(key, among: entity.attributes.map { $0.name }))"
                )
            }
            guard let column = store.layout.sqlColumn(forKeyPath: [attribute.name], of: entity)?.sql else {
                throw refuse("attribute '\(key)' is not stored (transient)")
            }
            terms.append("t.\(column) \(descriptor.ascending ? "ASC" : "DESC")")
        }
        sqlOrderBy = (terms + ["t.Z_PK"]).joined(separator: ", ")
    }
}
