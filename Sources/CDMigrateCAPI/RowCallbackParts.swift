import CDMigrate

/// What single-row hooks reuse from one call to the next (`MigrationHandle.rowCallback`): the
/// context, its scope and its entry, kept together in one object so that taking them up for a
/// row costs one reference rather than three.
final class RowCallbackParts {
    let context: CallbackContext
    let scope: Scope
    let entry: ContextEntry
    /// What the parts were made for, by identity (compared on every row without counting a
    /// reference to any of them): the context's mapping and manager, the scope's table.
    private let mapping: ObjectIdentifier?
    private let manager: ObjectIdentifier
    private let table: ObjectIdentifier

    init(context: CallbackContext, scope: Scope, entry: ContextEntry, table: HandleTable) {
        self.context = context
        self.scope = scope
        self.entry = entry
        mapping = context.mapping.map { ObjectIdentifier($0) }
        manager = ObjectIdentifier(context.manager)
        self.table = ObjectIdentifier(table)
    }

    /// Whether the parts serve a call for `mapping` of `manager` on the thread of `table`.
    func fits(_ mapping: EntityMapping, _ manager: MigrationManager, _ table: HandleTable) -> Bool {
        self.mapping == ObjectIdentifier(mapping) && self.manager == ObjectIdentifier(manager)
            && self.table == ObjectIdentifier(table)
    }
}
