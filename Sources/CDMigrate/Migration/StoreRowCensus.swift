/// Counts, in a source store, the rows that an inferred step's "becomes non-optional" rules are
/// about: how many instances of an entity (with its sub-entities) have no value for a property, or
/// how many there are at all.
///
/// Core Data infers a mapping model without looking at the data and validates every migrated
/// instance at save: a non-optional attribute or to-one left nil stops the migration with error
/// 1570 (`NSValidationMissingMandatoryPropertyError`), and a store whose rows all have a value
/// migrates. Planning asks these counts instead of refusing such a step outright: one `COUNT(*)`
/// per property, answered from the store's indexes or one scan of its table, the store opened
/// read-only the first time a count is asked (through the same snapshot rules as a migration's
/// source, so nothing is created beside it) and closed with `close()`.
final class StoreRowCensus {
    let storePath: String
    let model: ManagedObjectModel
    private var access: SourceAccess?
    private var database: SQLiteDatabase?
    private var layout: StoreLayout?

    /// A census of the store at `storePath`, written with `model` (nothing is opened yet).
    init(storePath: String, model: ManagedObjectModel) {
        self.storePath = storePath
        self.model = model
    }

    deinit { close() }

    /// The rows of `entity` (a source model's entity, sub-entities included) that have no value
    /// for `property` — an attribute or a to-one relationship — or all its rows when `property` is
    /// nil. Nil when the store keeps no column that answers (a to-many's emptiness is not asked).
    ///
    /// - Throws: `MigrationError` when the store cannot be opened or read with the model.
    func rows(of entity: EntityDescription, lacking property: PropertyDescription?) throws -> Int? {
        let (database, layout) = try open()
        var conditions: [String] = []
        if let restriction = layout.entityRestriction(for: entity, includingSubentities: true) {
            conditions.append(restriction)
        }
        if let attribute = property as? AttributeDescription {
            guard let column = layout.column(for: attribute) else { return nil }
            conditions.append("\(SQLiteDatabase.quote(column)) IS NULL")
        } else if let relationship = property as? RelationshipDescription {
            guard case .foreignKey(let column, _, _) = layout.storage(of: relationship) else { return nil }
            conditions.append("\(SQLiteDatabase.quote(column)) IS NULL")
        } else if property != nil {
            return nil
        }
        let table = SQLiteDatabase.quote(layout.table(for: entity))
        let sql =
            "SELECT COUNT(*) FROM \(table)"
            + (conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND "))
        let count = try database.scalar(sql)?.integer ?? 0
        return Int(clamping: count)
    }

    /// Closes the store (a later count opens it again).
    func close() {
        database?.close()
        database = nil
        layout = nil
        access?.removeSnapshot()
        access = nil
    }

    private func open() throws -> (SQLiteDatabase, StoreLayout) {
        if let database, let layout { return (database, layout) }
        let access = try SourceAccess.prepare(source: storePath, scratchBeside: SourceAccess.temporaryScratch)
        self.access = access
        do {
            let database = try SQLiteDatabase(path: storePath, mode: .readOnly, uri: access.uri)
            self.database = database
            let layout = try StoreLayout.read(from: database, model: model)
            self.layout = layout
            return (database, layout)
        } catch {
            close()
            throw error
        }
    }
}
