import CDMigrate

/// Where retained cdm_object handles of one migration run live: a handle given to
/// cdm_object_retain moves here from its callback's scope, keeps its token (so the host's copies
/// stay good) and lives until the last cdm_object_release or the end of the run.
///
/// What a retained handle hands out in turn — strings, related instances, values — belongs to
/// the callback running at the time (as it would for a handle of that callback), so using a
/// retained handle in every callback costs nothing that accumulates; only between callbacks
/// (a progress callback) does it fall back to this scope. Its errors go to the running
/// callback's context (or, between callbacks, to the migration).
final class RetainedScope: Scope {
    unowned let migration: MigrationHandle
    private let forwarding: ForwardingSink
    /// Retain counts by handle slot.
    private var counts: [Int32: Int] = [:]

    init(migration: MigrationHandle, table: HandleTable) {
        let sink = ForwardingSink(migration)
        self.migration = migration
        self.forwarding = sink
        super.init(sink: sink, table: table)
    }

    var retainedCount: Int { counts.count }

    override func keep(_ allocation: UnsafeMutableRawPointer) {
        if let scope = migration.activeContext?.scope { scope.keep(allocation) } else { super.keep(allocation) }
    }

    override func handle(_ entry: consuming HandleEntry) -> OpaquePointer {
        if let scope = migration.activeContext?.scope { return scope.handle(entry) }
        return super.handle(entry)
    }

    /// Takes an entry over from its callback's scope (same slot, same token), or counts one more retain.
    func retain(_ entry: ObjectEntry) {
        if entry.belongs(to: self) {
            counts[entry.slot, default: 0] += 1
            return
        }
        entry.place(in: self)
        counts[entry.slot] = 1
    }

    /// One release: the last one ends the handle.
    func release(_ entry: ObjectEntry) {
        let remaining = (counts[entry.slot] ?? 1) - 1
        if remaining > 0 {
            counts[entry.slot] = remaining
            return
        }
        counts[entry.slot] = nil
        table.release(entry)
    }

    /// Ends every retained handle (the run is over).
    func close() {
        slots.append(contentsOf: counts.keys)
        counts.removeAll()
        table.close(self)
    }
}

/// An error sink that passes errors on to whoever is asked about them now: the running
/// callback's context, or between callbacks the migration.
final class ForwardingSink: ErrorSink {
    unowned let migration: MigrationHandle

    init(_ migration: MigrationHandle) { self.migration = migration }

    @discardableResult
    override func record(_ error: MigrationError) -> Int32 {
        if let context = migration.activeContext { return context.record(error) }
        return migration.record(error)
    }
}

extension ObjectEntry {
    /// The manager of the migration the instance came from (nil for a cdm_store's instances),
    /// whether the handle is its callback's or retained.
    var migrationManager: MigrationManager? {
        switch scope?.sink {
        case let context as CallbackContext: return context.manager
        case let forwarding as ForwardingSink: return forwarding.migration.manager
        default: return nil
        }
    }
}

enum ObjectRetention {
    /// Appended to the message about a stale cdm_object handle: how to keep one.
    static let staleHint =
        "; call cdm_object_retain to keep it (until cdm_object_release or the end of the migration run), or keep its object ID (cdm_object_id, cdm_object_uri) and look it up again"

    static func isRetained(_ entry: HandleEntry) -> Bool { entry.scope is RetainedScope }
}

extension MigrationHandle {
    /// The run's scope for retained handles, made on first use (on the running thread).
    func retention() -> RetainedScope {
        if let scope = retainedScope { return scope }
        let scope = RetainedScope(migration: self, table: ThreadState.current.table)
        retainedScope = scope
        return scope
    }

    /// Ends every handle retained during the run.
    func endRetention() {
        retainedScope?.close()
        retainedScope = nil
    }
}

@_cdecl("cdm_object_retain")
public func cdm_object_retain(_ o: OpaquePointer?) -> Int32 {
    withEntry(o, ObjectEntry.self, "object") { entry in
        if let retained = entry.scope as? RetainedScope {
            retained.retain(entry)
            return
        }
        // A cdm_store's instances live until the store is closed anyway.
        guard let context = entry.scope?.sink as? CallbackContext else { return }
        guard context.migration.running else {
            throw MigrationError.misuse("the object cannot be retained: its migration is not running")
        }
        context.migration.retention().retain(entry)
    }
}

@_cdecl("cdm_object_release")
public func cdm_object_release(_ o: OpaquePointer?) {
    let table = ThreadState.current.table
    if let list = table.lookup(o) as? ListEntry {
        table.release(list)  // a fetch's list, ended before its callback returns
        return
    }
    guard let entry = table.lookup(o) as? ObjectEntry else { return }
    if let retained = entry.scope as? RetainedScope {
        retained.release(entry)
    } else {
        table.release(entry)
    }
}

@_cdecl("cdm_internal_handle_count")
public func cdm_internal_handle_count() -> Int { ThreadState.current.table.liveCount }
