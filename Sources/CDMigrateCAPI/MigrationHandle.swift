import CDMigrate

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// cdm_migration: a migration manager with the host's policies, functions and progress callback.
final class MigrationHandle: LongLivedHandle {
    override class var kind: String { "cdm_migration" }
    /// The migration; for a chain (ChainMigration.swift), the running step's, nil between runs.
    var manager: MigrationManager?
    /// Set for a handle of cdm_migration_new_chain: the model set its runs go through.
    var chain: ChainSetup?
    private(set) var policies: [String: PolicyRegistration] = [:]
    private(set) var functions: [String: (className: String, selector: String, registration: FunctionRegistration)] =
        [:]
    /// The methods FUNCTION($entityPolicy, …) calls (PolicyMethods.swift).
    var policyMethods = PolicyMethodTable()
    private var progress: ProgressRegistration?
    var running = false
    /// Made by a Swift host around its own manager (`HostedMigration`): only the host frees it.
    var ownedByHost = false
    var report: MigrationReport?
    /// Whether a run compares the store's entity hashes with the source model's (cdm_migration_set_source_version_check).
    var checkSourceVersion = true
    /// cdm_model handles for the manager's models, lent to callbacks by cdm_context_model.
    private var modelHandles: [ModelHandle?] = [nil, nil]
    /// The context of the callback running now (the innermost one), where errors of retained
    /// instances go; and the scope of the run's retained instances (ObjectRetention.swift). Not
    /// counted: the callback that set it holds its context until it puts the outer one back.
    private(set) unowned(unsafe) var activeContext: CallbackContext?
    var retainedScope: RetainedScope?

    /// A borrowed cdm_model for the source or destination model, owned by this migration.
    func modelHandle(destination: Bool) -> OpaquePointer? {
        let slot = destination ? 1 : 0
        if let manager = manager,
            modelHandles[slot]?.model !== (destination ? manager.destinationModel : manager.sourceModel)
        {
            let handle = ModelHandle()
            handle.model = destination ? manager.destinationModel : manager.sourceModel
            modelHandles[slot] = handle
        }
        return modelHandles[slot].map { OpaquePointer(Unmanaged.passUnretained($0).toOpaque()) }
    }

    /// Throws unless the handle holds a migration or a chain and is not inside one of its own
    /// callbacks: when registrations may be made.
    func checkIdle() throws {
        if chain == nil {
            _ = try idleManager()
        } else if running {
            throw MigrationError.misuse("the migration is running: this cannot be done from inside its callbacks")
        }
    }

    /// The manager, when the handle holds one and is not inside one of its own callbacks.
    func idleManager() throws -> MigrationManager {
        guard let manager = manager else {
            throw MigrationError.misuse("the migration handle holds no migration (its creation failed)")
        }
        if running {
            throw MigrationError.misuse("the migration is running: this cannot be done from inside its callbacks")
        }
        return manager
    }

    func register(_ registration: PolicyRegistration) throws {
        try checkIdle()
        policies[registration.name] = registration
        guard chain == nil, let manager = manager else { return }
        manager.registerPolicy(named: registration.name) { [unowned self] in CPolicy(registration, migration: self) }
    }

    func register(_ registration: FunctionRegistration, className: String, selector: String) throws {
        try checkIdle()
        functions[className + " " + selector] = (className, selector, registration)
        guard chain == nil, let manager = manager else { return }
        manager.registerFunction(className: className, selector: selector) { [unowned self] arguments in
            try self.call(registration, arguments)
        }
    }

    func setProgress(_ registration: ProgressRegistration?) throws {
        try checkIdle()
        progress = registration
        guard chain == nil, let manager = manager else { return }
        guard registration != nil else {
            manager.progressHandler = nil
            return
        }
        manager.progressHandler = { [unowned self] progress in self.report(progress) }
    }

    func run(_ body: (MigrationManager) throws -> MigrationReport) throws {
        let manager = try idleManager()
        running = true
        defer {
            running = false
            endRetention()
        }
        report = nil
        report = try body(manager)
    }

    /// Runs one host callback in a scope of its own: its handles die when it returns, and a
    /// non-zero result becomes the error that stops the migration.
    func callback(_ mapping: EntityMapping?, _ what: String, _ body: (OpaquePointer, Scope) -> Int32) throws {
        guard let manager = manager else { throw MigrationError.misuse("the migration handle holds no migration") }
        let state = ThreadState.current
        let context = CallbackContext(migration: self, manager: manager, mapping: mapping)
        let scope = state.openScope(sink: context)
        context.enter(scope)
        let token = scope.handle(ContextEntry(context))
        unowned(unsafe) let outer = activeContext
        activeContext = context
        let code = body(token, scope)
        activeContext = outer
        state.table.close(scope)
        context.leave()
        if code != 0 { throw context.failure(code: code, in: what) }
    }

    /// What single-row hooks reuse from one call to the next (`rowCallback`): one context, its
    /// scope and its entry per entity mapping instead of per instance.
    private var rowCallbackParts: RowCallbackParts?

    /// `callback` for a hook called once per instance (`create_destination_instances`,
    /// `create_relationships`): the same for the host (the handles it is given die when it
    /// returns, a kept context or instance handle is stale in the next call, errors are the call's
    /// own) without making a context and a scope for every row.
    ///
    /// `body` is also given the calling thread's handle table (the scope's), for the handles it makes.
    func rowCallback(_ mapping: EntityMapping, _ what: String, _ body: (OpaquePointer, Scope, HandleTable) -> Int32)
        throws
    {
        guard let manager = manager else { throw MigrationError.misuse("the migration handle holds no migration") }
        try ThreadState.withCurrent { state in try rowCallback(mapping, what, manager, state, body) }
    }

    private func rowCallback(
        _ mapping: EntityMapping, _ what: String, _ manager: MigrationManager, _ state: ThreadState,
        _ body: (OpaquePointer, Scope, HandleTable) -> Int32
    ) throws {
        let table = state.table
        let parts: RowCallbackParts
        if let kept = rowCallbackParts, kept.fits(mapping, manager, table), !kept.context.isRunning {
            kept.context.reset()
            parts = kept
        } else {
            let context = CallbackContext(migration: self, manager: manager, mapping: mapping)
            parts = RowCallbackParts(
                context: context, scope: state.openScope(sink: context), entry: ContextEntry(context), table: table)
            parts.scope.objectEntryPool = ObjectEntryPool()
            rowCallbackParts = parts
        }
        let context = parts.context
        let scope = parts.scope
        context.enter(scope)
        // A new token each call: the slot's generation moves on when the scope closes.
        let token = table.allocate(parts.entry, in: scope)
        unowned(unsafe) let outer = activeContext
        activeContext = context
        let code = body(token, scope, table)
        activeContext = outer
        table.close(scope)
        context.leave()
        if code != 0 { throw context.failure(code: code, in: what) }
    }

    /// Lets go of what single-row hooks reused (at the end of a stage of an entity mapping).
    func endRowCallbacks() { rowCallbackParts = nil }

    func call(_ registration: FunctionRegistration, _ arguments: [Value]) throws -> Value {
        var result: Value = .null
        try callback(manager?.currentEntityMapping, registration.label) { context, scope in
            var handles: [OpaquePointer?] = arguments.map { scope.handle(ValueEntry($0, writable: false)) }
            let resultEntry = ValueEntry(.null, writable: true)
            let resultHandle = scope.handle(resultEntry)
            let code = handles.withUnsafeMutableBufferPointer { buffer in
                registration.function(
                    context, Int32(arguments.count), UnsafePointer(buffer.baseAddress), resultHandle, registration.user)
            }
            result = resultEntry.value
            return code
        }
        return result
    }

    func report(_ progress: MigrationProgress) -> Bool {
        guard let registration = self.progress else { return true }
        let name = CString.copy(progress.entityMappingName)
        defer { free(name) }
        var record = ProgressRecord(
            fraction: progress.fraction, stage: Int32(progress.stage.rawValue), pass: Int32(progress.pass),
            entityMapping: UnsafePointer(name), processed: Int64(progress.processed), total: Int64(progress.total),
            runProcessed: Int64(progress.runProcessed), runTotal: Int64(progress.runTotal),
            step: Int32(clamping: progress.step), stepCount: Int32(clamping: progress.stepCount))
        return withUnsafePointer(to: &record) { registration.callback(UnsafeRawPointer($0), registration.user) } == 0
    }
}

// MARK: C entry points

@_cdecl("cdm_migration_new")
public func cdm_migration_new(
    _ source: OpaquePointer?, _ destination: OpaquePointer?, _ mappings: UnsafePointer<OpaquePointer?>?, _ count: Int,
    _ out: UnsafeMutablePointer<OpaquePointer?>?
) -> Int32 {
    construct(out, MigrationHandle()) { handle in
        let sourceModel = try ModelHandle.loaded(source, "source model")
        let destinationModel = try ModelHandle.loaded(destination, "destination model")
        if count > 0 && mappings == nil { throw MigrationError.misuse("the mappings array is NULL") }
        var models: [MappingModel] = []
        for i in 0..<max(count, 0) {
            guard let pointer = mappings?[i] else {
                throw MigrationError.misuse("mapping \(i) of the mappings array is NULL")
            }
            models.append(try MappingHandle.loaded(pointer))
        }
        handle.manager = try MigrationManager(
            sourceModel: sourceModel, destinationModel: destinationModel, mappingModels: models)
    }
}

@_cdecl("cdm_migration_free")
public func cdm_migration_free(_ migration: OpaquePointer?) -> Int32 {
    guard migration != nil else { return 0 }
    let handle: MigrationHandle
    do { handle = try MigrationHandle.required(migration, "migration") } catch { return recordError(error, nil) }
    if handle.running {
        return handle.record(
            MigrationError.misuse(
                "cdm_migration_free was called from inside the migration's own callback; free it after cdm_migration_run returns"
            ))
    }
    if handle.ownedByHost {
        return handle.record(
            MigrationError.misuse(
                "this cdm_migration belongs to the program that loaded the policy library, which frees it"))
    }
    MigrationHandle.release(migration, "migration")
    return 0
}

@_cdecl("cdm_migration_register_policy")
public func cdm_migration_register_policy(
    _ migration: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ policy: UnsafeRawPointer?, _ size: Int,
    _ user: UnsafeMutableRawPointer?, _ destroy: DestroyFunction?
) -> Int32 {
    var taken = false
    let code = withHandle(migration, MigrationHandle.self, "migration") { handle in
        let policyName = try CString.argument(name, "the policy name")
        guard let policy = policy else { throw MigrationError.misuse("the policy struct pointer is NULL") }
        guard size > 0, size % MemoryLayout<UnsafeRawPointer>.size == 0 else {
            throw MigrationError.misuse("policy_size \(size) is not the size of a cdm_policy: pass sizeof(cdm_policy)")
        }
        try handle.checkIdle()
        taken = true
        try handle.register(
            PolicyRegistration(
                name: policyName, hooks: PolicyHooks(copying: policy, size: size), user: user, destroy: destroy))
    }
    if !taken { destroy?(user) }
    return code
}

@_cdecl("cdm_migration_register_function")
public func cdm_migration_register_function(
    _ migration: OpaquePointer?, _ className: UnsafePointer<CChar>?, _ selector: UnsafePointer<CChar>?,
    _ function: HostFunction?, _ user: UnsafeMutableRawPointer?, _ destroy: DestroyFunction?
) -> Int32 {
    var taken = false
    let code = withHandle(migration, MigrationHandle.self, "migration") { handle in
        let classText = try CString.argument(className, "the class name")
        let selectorText = try CString.argument(selector, "the selector")
        guard let function = function else { throw MigrationError.misuse("the function pointer is NULL") }
        try handle.checkIdle()
        taken = true
        try handle.register(
            FunctionRegistration(
                function: function, label: "function \(classText) \(selectorText)", user: user, destroy: destroy),
            className: classText, selector: selectorText)
    }
    if !taken { destroy?(user) }
    return code
}

@_cdecl("cdm_migration_set_progress")
public func cdm_migration_set_progress(
    _ migration: OpaquePointer?, _ callback: ProgressFunction?, _ user: UnsafeMutableRawPointer?,
    _ destroy: DestroyFunction?
) -> Int32 {
    var taken = false
    let code = withHandle(migration, MigrationHandle.self, "migration") { handle in
        try handle.checkIdle()
        taken = true
        try handle.setProgress(callback.map { ProgressRegistration(callback: $0, user: user, destroy: destroy) })
        if callback == nil { destroy?(user) }
    }
    if !taken { destroy?(user) }
    return code
}

@_cdecl("cdm_migration_set_progress_interval")
public func cdm_migration_set_progress_interval(_ migration: OpaquePointer?, _ interval: Int) -> Int32 {
    withHandle(migration, MigrationHandle.self, "migration") { handle in
        guard interval > 0 else {
            throw MigrationError(
                .invalidArgument, "the progress interval must be at least 1, not \(UInt(bitPattern: interval))")
        }
        if let chain = handle.chain {
            try handle.checkIdle()
            chain.progressInterval = interval
        } else {
            try handle.idleManager().progressInterval = interval
        }
    }
}

@_cdecl("cdm_migration_set_source_version_check")
public func cdm_migration_set_source_version_check(_ migration: OpaquePointer?, _ check: Int32) -> Int32 {
    withHandle(migration, MigrationHandle.self, "migration") { handle in
        if handle.chain != nil {
            throw MigrationError.misuse(
                "a chain finds the store's version by its hashes: its version check cannot be turned off")
        }
        _ = try handle.idleManager()
        handle.checkSourceVersion = check != 0
    }
}

@_cdecl("cdm_migration_run")
public func cdm_migration_run(
    _ migration: OpaquePointer?, _ source: UnsafePointer<CChar>?, _ destination: UnsafePointer<CChar>?
) -> Int32 {
    withHandle(migration, MigrationHandle.self, "migration") { handle in
        let sourcePath = try CString.argument(source, "the source path")
        let destinationPath = try CString.argument(destination, "the destination path")
        if handle.chain != nil { return try handle.runChain(source: sourcePath, destination: destinationPath) }
        try handle.run {
            try $0.migrateStore(from: sourcePath, to: destinationPath, checkSourceVersion: handle.checkSourceVersion)
        }
    }
}

@_cdecl("cdm_migration_run_in_place")
public func cdm_migration_run_in_place(_ migration: OpaquePointer?, _ path: UnsafePointer<CChar>?) -> Int32 {
    withHandle(migration, MigrationHandle.self, "migration") { handle in
        let storePath = try CString.argument(path, "the store path")
        if handle.chain != nil { return try handle.runChain(source: storePath, destination: nil) }
        try handle.run { try $0.migrateStoreInPlace(at: storePath, checkSourceVersion: handle.checkSourceVersion) }
    }
}

@_cdecl("cdm_migration_report_json")
public func cdm_migration_report_json(
    _ migration: OpaquePointer?, _ out: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
) -> Int32 {
    withHandle(migration, MigrationHandle.self, "migration") { handle in
        guard let out = out else { throw MigrationError.misuse("the json pointer is NULL") }
        if let chain = handle.chain {
            guard let report = chain.report else {
                throw MigrationError.misuse("there is no report: the chain has not run successfully")
            }
            out.pointee = CString.copy(report.json.serialized())
            return
        }
        guard let report = handle.report else {
            throw MigrationError.misuse("there is no report: the migration has not run successfully")
        }
        out.pointee = CString.copy(report.json.serialized())
    }
}

@_cdecl("cdm_migration_set_model_versions")
public func cdm_migration_set_model_versions(_ migration: OpaquePointer?, _ path: UnsafePointer<CChar>?) -> Int32 {
    withHandle(migration, MigrationHandle.self, "migration") { handle in
        let manager = try handle.idleManager()
        guard let path = path else {
            manager.modelVersions = nil
            return
        }
        manager.modelVersions = try ModelVersionSet(contentsOf: try CString.argument(path, "the model set path"))
    }
}

@_cdecl("cdm_migration_warnings_json")
public func cdm_migration_warnings_json(
    _ migration: OpaquePointer?, _ out: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
) -> Int32 {
    withHandle(migration, MigrationHandle.self, "migration") { handle in
        guard let out = out else { throw MigrationError.misuse("the json pointer is NULL") }
        guard let manager = handle.manager else {
            throw MigrationError.misuse("the migration handle holds no migration (its creation failed)")
        }
        out.pointee = CString.copy(JSON.array(manager.warnings.map { .string($0) }).serialized())
    }
}

@_cdecl("cdm_migration_errcode")
public func cdm_migration_errcode(_ migration: OpaquePointer?) -> Int32 {
    MigrationHandle.unretained(migration)?.errcode ?? 101
}
@_cdecl("cdm_migration_errmsg")
public func cdm_migration_errmsg(_ migration: OpaquePointer?) -> UnsafePointer<CChar> {
    MigrationHandle.unretained(migration)?.errmsg
        ?? CString.interned("the migration handle is NULL or not a live cdm_migration")
}
@_cdecl("cdm_migration_error")
public func cdm_migration_error(_ migration: OpaquePointer?) -> OpaquePointer? {
    MigrationHandle.unretained(migration)?.lastError?.pointer
}
