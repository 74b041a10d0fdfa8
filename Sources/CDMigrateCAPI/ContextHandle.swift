import CDMigrate

/// cdm_context: what one callback sees of the running migration. It keeps the errors of calls
/// made during the callback, and the host's own error from cdm_context_fail.
final class CallbackContext: ErrorSink {
    unowned let migration: MigrationHandle
    let manager: MigrationManager
    let mapping: EntityMapping?
    /// The scope of the callback running with this context (nil once it has returned): set and
    /// cleared by the callback (`enter`, `leave`), which holds the scope meanwhile, so not counted here.
    private(set) unowned(unsafe) var scope: Scope?
    /// Whether the context's callback is running (`scope` is set), told without reading `scope`.
    private(set) var isRunning = false

    /// The callback running with this context begins, in `scope`.
    func enter(_ scope: Scope) {
        self.scope = scope
        isRunning = true
    }

    /// The callback running with this context has returned.
    func leave() {
        scope = nil
        isRunning = false
    }
    private var hostFailure: (code: Int32, message: String?)?

    init(migration: MigrationHandle, manager: MigrationManager, mapping: EntityMapping?) {
        self.migration = migration
        self.manager = manager
        self.mapping = mapping
    }

    /// Forgets the errors of an earlier call, for a context reused by the next one (`rowCallback`).
    func reset() {
        hostFailure = nil
        lastMigrationError = nil
        lastError = nil
    }

    func fail(code: Int32, message: String?) -> Int32 {
        let code = code == 0 ? MigrationError.Code.entityMigrationPolicy.rawValue : code
        hostFailure = (code, message)
        record(MigrationError(MigrationError.Code(rawValue: code), message ?? "the host reported error \(code)"))
        return code
    }

    /// The error a callback's non-zero result stands for: the host's message, or the message of
    /// the call that failed with that code, or one naming the callback.
    func failure(code: Int32, in what: String) -> MigrationError {
        let errorCode = MigrationError.Code(rawValue: code)
        if let failure = hostFailure, let message = failure.message { return MigrationError(errorCode, message) }
        if let last = lastError, last.code == code, let error = lastMigrationError { return error }
        let place = mapping.map { " (entity mapping '\($0.name)')" } ?? ""
        return MigrationError(errorCode, "\(what) returned \(code)\(place)")
    }

    /// The last engine error kept as a MigrationError too, so it can be rethrown with its details.
    private(set) var lastMigrationError: MigrationError?

    @discardableResult
    override func record(_ error: MigrationError) -> Int32 {
        lastMigrationError = error
        return super.record(error)
    }

    func currentMapping() throws -> EntityMapping {
        guard let mapping = mapping else { throw MigrationError.misuse("this callback has no current entity mapping") }
        return mapping
    }

    func string(_ text: String?) -> UnsafePointer<CChar>? { text.flatMap { scope?.string($0) } }
}

final class ContextEntry: HandleEntry {
    override class var kind: String { "cdm_context" }
    let context: CallbackContext
    init(_ context: CallbackContext) { self.context = context }
}

func withContext(_ ctx: OpaquePointer?, _ body: (CallbackContext, Scope) throws -> Void) -> Int32 {
    withContext(ctx) { context, scope, _ in try body(context, scope) }
}

/// `withContext` whose body is also given the calling thread's handle table: the table of the
/// context's scope (the context's entry was found in it, and the entry is of that scope), for
/// looking up the other handles the call is given and making the ones it gives back.
@inline(__always)
func withContext(_ ctx: OpaquePointer?, _ body: (CallbackContext, Scope, HandleTable) throws -> Void) -> Int32 {
    withEntry(ctx, ContextEntry.self, "context") { entry, table in
        let context = entry.context
        guard let scope = context.scope else {
            throw MigrationError.misuse("the context's callback has returned")
        }
        try body(context, scope, table)
    }
}

/// `withContext` for a call that does not use the context's scope (only the thread's table): the
/// scope is checked, not taken up.
@inline(__always)
func withContextAndTable(_ ctx: OpaquePointer?, _ body: (CallbackContext, HandleTable) throws -> Void) -> Int32 {
    withEntry(ctx, ContextEntry.self, "context") { entry, table in
        let context = entry.context
        guard context.isRunning else { throw MigrationError.misuse("the context's callback has returned") }
        try body(context, table)
    }
}

private func object(_ handle: OpaquePointer?, _ what: String) throws -> ManagedObject {
    try ThreadState.current.entry(handle, as: ObjectEntry.self, what).object
}

/// `object(_:_:)` looked up in the calling thread's table, at hand.
@inline(__always)
private func object(_ handle: OpaquePointer?, _ what: String, in table: HandleTable) throws -> ManagedObject {
    try ThreadState.entry(in: table, handle, as: ObjectEntry.self, what).object
}

private func optionalObject(_ handle: OpaquePointer?, _ what: String) throws -> ManagedObject? {
    guard let handle = handle else { return nil }
    return try object(handle, what)
}

private func objects(_ handles: UnsafePointer<OpaquePointer?>?, _ count: Int, _ what: String) throws -> [ManagedObject]
{
    guard count > 0 else { return [] }
    guard let handles = handles else { throw MigrationError.misuse("the \(what) array is NULL") }
    return try (0..<count).map { try object(handles[$0], "\(what) \($0)") }
}

private func mappingOfCurrentPass(_ context: CallbackContext, _ name: String) throws {
    let manager = context.manager
    guard manager.currentPass < manager.mappingModels.count,
        manager.mappingModels[manager.currentPass].entityMapping(named: name) != nil
    else {
        throw MigrationError.notFound(
            "there is no entity mapping named '\(name)' in the current mapping model (pass \(manager.currentPass))")
    }
}

@_cdecl("cdm_context_errcode")
public func cdm_context_errcode(_ ctx: OpaquePointer?) -> Int32 {
    guard let entry = ThreadState.current.table.lookup(ctx) as? ContextEntry else {
        return MigrationError.Code.misuse.rawValue
    }
    return entry.context.errcode
}

@_cdecl("cdm_context_errmsg")
public func cdm_context_errmsg(_ ctx: OpaquePointer?) -> UnsafePointer<CChar> {
    guard let entry = ThreadState.current.table.lookup(ctx) as? ContextEntry else {
        return CString.interned("the context handle is NULL or no longer valid")
    }
    return entry.context.errmsg
}

@_cdecl("cdm_context_error")
public func cdm_context_error(_ ctx: OpaquePointer?) -> OpaquePointer? {
    (ThreadState.current.table.lookup(ctx) as? ContextEntry)?.context.lastError?.pointer
}

@_cdecl("cdm_context_fail")
public func cdm_context_fail(_ ctx: OpaquePointer?, _ code: Int32, _ message: UnsafePointer<CChar>?) -> Int32 {
    guard let entry = ThreadState.current.table.lookup(ctx) as? ContextEntry else {
        recordError(MigrationError.misuse("cdm_context_fail: the context handle is NULL or no longer valid"), nil)
        return code == 0 ? MigrationError.Code.entityMigrationPolicy.rawValue : code
    }
    // An unreadable message must not hide the host's error: keep the code, say what went wrong.
    let text: String?
    do { text = try message.map { try CString.argument($0, "the message") } } catch {
        text = "(the host's error message is not valid UTF-8)"
    }
    return entry.context.fail(code: code, message: text)
}

@_cdecl("cdm_context_entity_mapping_name")
public func cdm_context_entity_mapping_name(_ ctx: OpaquePointer?, _ name: UnsafeMutablePointer<UnsafePointer<CChar>?>?)
    -> Int32
{
    withContext(ctx) { context, _ in
        try required(name, "name").pointee = context.string(try context.currentMapping().name)
    }
}

@_cdecl("cdm_context_source_entity_name")
public func cdm_context_source_entity_name(_ ctx: OpaquePointer?, _ name: UnsafeMutablePointer<UnsafePointer<CChar>?>?)
    -> Int32
{
    withContext(ctx) { context, _ in
        try required(name, "name").pointee = context.string(try context.currentMapping().sourceEntityName)
    }
}

@_cdecl("cdm_context_destination_entity_name")
public func cdm_context_destination_entity_name(
    _ ctx: OpaquePointer?, _ name: UnsafeMutablePointer<UnsafePointer<CChar>?>?
) -> Int32 {
    withContext(ctx) { context, _ in
        try required(name, "name").pointee = context.string(try context.currentMapping().destinationEntityName)
    }
}

@_cdecl("cdm_context_pass")
public func cdm_context_pass(_ ctx: OpaquePointer?, _ pass: UnsafeMutablePointer<Int32>?) -> Int32 {
    withContext(ctx) { context, _ in try required(pass, "pass").pointee = Int32(context.manager.currentPass) }
}

@_cdecl("cdm_context_create_instance")
public func cdm_context_create_instance(
    _ ctx: OpaquePointer?, _ entity: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<OpaquePointer?>?
) -> Int32 {
    withContext(ctx) { context, scope, table in
        guard let out = out else { throw MigrationError.misuse("the out pointer is NULL") }
        let manager = context.manager
        guard let found = try scope.entity(of: manager.destinationModel, name: entity) else {
            throw MigrationError.notFound(
                "the destination model has no entity named '\(try CString.argument(entity, "the entity name"))'")
        }
        out.pointee = scope.callbackHandle(for: try manager.createDestinationInstance(entity: found), in: table)
    }
}

@_cdecl("cdm_context_apply_attribute_mappings")
public func cdm_context_apply_attribute_mappings(
    _ ctx: OpaquePointer?, _ source: OpaquePointer?, _ destination: OpaquePointer?
) -> Int32 {
    withContextAndTable(ctx) { context, table in
        try context.manager.applyAttributeMappings(
            of: try context.currentMapping(),
            source: try source.map { try object($0, "source object", in: table) },
            destination: try object(destination, "destination object", in: table))
    }
}

@_cdecl("cdm_context_associate")
public func cdm_context_associate(_ ctx: OpaquePointer?, _ source: OpaquePointer?, _ destination: OpaquePointer?)
    -> Int32
{
    withContextAndTable(ctx) { context, table in
        try context.manager.associate(
            sourceInstance: try object(source, "source object", in: table),
            withDestinationInstance: try object(destination, "destination object", in: table),
            for: try context.currentMapping())
    }
}

/// The instances the named entity mapping of the current pass made from `given` (or made them
/// from): `find` is the manager's lookup of one direction; `what` names the given side.
private func associatedInstances(
    _ ctx: OpaquePointer?, _ mapping: UnsafePointer<CChar>?, _ given: UnsafePointer<OpaquePointer?>?,
    _ givenCount: Int, _ what: String, _ out: UnsafeMutablePointer<UnsafePointer<OpaquePointer?>?>?,
    _ count: UnsafeMutablePointer<Int>?,
    _ find: (MigrationManager, String, [ManagedObject]) throws -> [ManagedObject]
) -> Int32 {
    withContext(ctx) { context, scope in
        guard let out = out else { throw MigrationError.misuse("the out pointer is NULL") }
        let count = try required(count, "count")
        let name = try CString.argument(mapping, "the entity mapping name")
        try mappingOfCurrentPass(context, name)
        let found = try find(context.manager, name, try objects(given, givenCount, what))
        out.pointee = UnsafePointer(scope.handleArray(found))
        count.pointee = found.count
    }
}

@_cdecl("cdm_context_destination_instances")
public func cdm_context_destination_instances(
    _ ctx: OpaquePointer?, _ mapping: UnsafePointer<CChar>?, _ sources: UnsafePointer<OpaquePointer?>?,
    _ sourceCount: Int,
    _ out: UnsafeMutablePointer<UnsafePointer<OpaquePointer?>?>?, _ count: UnsafeMutablePointer<Int>?
) -> Int32 {
    associatedInstances(ctx, mapping, sources, sourceCount, "source", out, count) { manager, name, sources in
        try manager.destinationInstances(forEntityMappingName: name, sourceInstances: sources)
    }
}

@_cdecl("cdm_context_source_instances")
public func cdm_context_source_instances(
    _ ctx: OpaquePointer?, _ mapping: UnsafePointer<CChar>?, _ destinations: UnsafePointer<OpaquePointer?>?,
    _ destinationCount: Int,
    _ out: UnsafeMutablePointer<UnsafePointer<OpaquePointer?>?>?, _ count: UnsafeMutablePointer<Int>?
) -> Int32 {
    associatedInstances(ctx, mapping, destinations, destinationCount, "destination", out, count) {
        manager, name, destinations in
        try manager.sourceInstances(forEntityMappingName: name, destinationInstances: destinations)
    }
}

@_cdecl("cdm_context_evaluate")
public func cdm_context_evaluate(
    _ ctx: OpaquePointer?, _ expression: UnsafePointer<CChar>?, _ source: OpaquePointer?, _ destination: OpaquePointer?,
    _ out: UnsafeMutablePointer<OpaquePointer?>?
) -> Int32 {
    withContext(ctx) { context, scope in
        guard let out = out else { throw MigrationError.misuse("the result pointer is NULL") }
        let text = try CString.argument(expression, "the expression")
        let value = try context.manager.evaluate(
            text, source: try optionalObject(source, "source object"),
            destination: try optionalObject(destination, "destination object"))
        out.pointee = scope.handle(ValueEntry(value, writable: false))
    }
}
