/// What single-row hooks reuse from one call to the next (`MigrationHandle.rowCallback`): the
/// context, its scope and its entry, kept together in one object so that taking them up for a
/// row costs one reference rather than three.
final class RowCallbackParts {
    let context: CallbackContext
    let scope: Scope
    let entry: ContextEntry

    init(context: CallbackContext, scope: Scope, entry: ContextEntry) {
        self.context = context
        self.scope = scope
        self.entry = entry
    }
}
