import CDMigrate

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Short-lived handles (cdm_context, cdm_object, cdm_value) are not pointers but tokens: a slot
/// number and that slot's generation, looked up in the calling thread's table. When a callback
/// returns, its slots are freed and their generations move on, so a handle kept past its
/// callback finds a different generation and gives CDM_MISUSE instead of touching freed memory.
/// Tokens have their top bit set, which no user-space address has, so a long-lived handle (a
/// pointer) is never taken for a token, nor a token for a pointer.
final class HandleTable {
    private static let tag: UInt = 1 << (UInt.bitWidth - 1)

    private var entries: [HandleEntry?] = []
    private var generations: [UInt32] = []
    private var freeSlots: [Int32] = []

    /// How many handles are live (for cdm_internal_handle_count).
    var liveCount: Int { entries.count - freeSlots.count }

    func allocate(_ entry: HandleEntry, in scope: Scope) -> OpaquePointer {
        let slot: Int32
        if let reused = freeSlots.popLast() {
            slot = reused
            entries[Int(slot)] = entry
        } else {
            slot = Int32(entries.count)
            entries.append(entry)
            generations.append(1)
        }
        entry.slot = slot
        entry.scope = scope
        scope.slots.append(slot)
        let token = HandleTable.tag | UInt(generations[Int(slot)]) << 32 | UInt(slot + 1)
        // Never NULL: the tag bit is set.
        return OpaquePointer(bitPattern: token).unsafelyUnwrapped
    }

    func lookup(_ handle: OpaquePointer?) -> HandleEntry? {
        guard let handle = handle else { return nil }
        let token = UInt(bitPattern: handle)
        guard token & HandleTable.tag != 0 else { return nil }
        let index = Int(token & 0xFFFF_FFFF) - 1
        let generation = UInt32(truncatingIfNeeded: (token & ~HandleTable.tag) >> 32)
        guard index >= 0, index < entries.count, generations[index] == generation else { return nil }
        return entries[index]
    }

    func release(_ entry: HandleEntry) {
        let index = Int(entry.slot)
        guard index >= 0, index < entries.count, entries[index] === entry else { return }
        vacate(index, entry)
    }

    /// Empties slot `index`, which holds `entry`: its generation moves on (in the 31 bits below
    /// the tag), so the handle it gave is stale from now on.
    @inline(__always)
    private func vacate(_ index: Int, _ entry: HandleEntry) {
        entries[index] = nil
        let generation = generations[index]
        generations[index] = generation & 0x7FFF_FFFF == 0x7FFF_FFFF ? 1 : generation + 1
        freeSlots.append(entry.slot)
        entry.slot = -1
    }

    /// Frees every handle the scope still holds, and its other allocations.
    func close(_ scope: Scope) {
        let pool = scope.objectEntryPool
        for slot in scope.slots {
            let index = Int(slot)
            guard var entry = entries[index], entry.scope === scope else { continue }
            vacate(index, entry)  // the entry is the slot's (just read from it)
            pool?.recycle(&entry)
        }
        // Capacity kept: a single-row hook's scope is closed and filled again on every row.
        scope.slots.removeAll(keepingCapacity: true)
        for allocation in scope.allocations { free(allocation) }
        scope.allocations.removeAll(keepingCapacity: true)
    }
}

/// What a group of short-lived handles lives and dies with: one callback, or one cdm_store (or,
/// for retained instances, one migration run: `RetainedScope`).
class Scope {
    var slots: [Int32] = []
    /// malloc'd memory handed out in this scope (arrays of handles, strings), freed with it.
    var allocations: [UnsafeMutableRawPointer] = []
    /// Where errors of calls on this scope's handles go.
    unowned let sink: ErrorSink
    unowned let table: HandleTable
    /// The names calls on this scope's handles looked up last (`NameLookupCache`): a single-row
    /// hook's scope is reused from row to row, and what it keeps goes with it.
    var names = NameLookupCache()
    /// The cdm_object entries released with the scope, for the next ones it makes: set for a
    /// single-row hook's scope, closed and filled again on every row (`ObjectEntryPool`).
    var objectEntryPool: ObjectEntryPool?

    init(sink: ErrorSink, table: HandleTable) {
        self.sink = sink
        self.table = table
    }

    deinit { names.removeAll() }

    func keep(_ allocation: UnsafeMutableRawPointer) { allocations.append(allocation) }

    /// A C string valid as long as the scope.
    func string(_ text: String) -> UnsafePointer<CChar> {
        let copy = CString.copy(text)
        keep(UnsafeMutableRawPointer(copy))
        return UnsafePointer(copy)
    }

    func handle(_ entry: HandleEntry) -> OpaquePointer { table.allocate(entry, in: self) }

    func handle(for object: ManagedObject) -> OpaquePointer {
        handle(objectEntryPool?.entry(for: object) ?? ObjectEntry(object))
    }

    /// A C array of handles for instances, valid as long as the scope.
    func handleArray(_ objects: [ManagedObject]) -> UnsafeMutablePointer<OpaquePointer?>? {
        guard let raw = malloc(max(objects.count, 1) * MemoryLayout<OpaquePointer?>.stride) else { return nil }
        keep(raw)
        let array = raw.bindMemory(to: OpaquePointer?.self, capacity: max(objects.count, 1))
        for (i, object) in objects.enumerated() { array[i] = handle(for: object) }
        return array
    }
}

/// A live short-lived handle.
class HandleEntry {
    /// The C type's name ("cdm_object"), for messages.
    class var kind: String { "short-lived handle" }

    var slot: Int32 = -1
    unowned(unsafe) var scope: Scope?
    var sink: ErrorSink? { scope?.sink }
}

/// Per-thread state: the handle table and the thread's last error.
final class ThreadState {
    let table = HandleTable()
    var lastError: ErrorRecord?

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key) { pointer in
            guard let pointer = pointer else { return }
            Unmanaged<ThreadState>.fromOpaque(pointer).release()
        }
        return key
    }()

    static var current: ThreadState {
        if let pointer = pthread_getspecific(key) {
            return Unmanaged<ThreadState>.fromOpaque(pointer).takeUnretainedValue()
        }
        let state = ThreadState()
        pthread_setspecific(key, Unmanaged.passRetained(state).toOpaque())
        return state
    }

    func openScope(sink: ErrorSink) -> Scope { Scope(sink: sink, table: table) }

    /// The live entry of a handle of the expected kind, or CDM_MISUSE naming what is wrong.
    func entry<T: HandleEntry>(_ handle: OpaquePointer?, as type: T.Type, _ what: String) throws -> T {
        try ThreadState.entry(in: table, handle, as: type, what)
    }

    /// `entry(_:as:_:)` in a table already at hand (the calling thread's: that of the scope of a
    /// handle just looked up), without reading the thread's state again.
    static func entry<T: HandleEntry>(in table: HandleTable, _ handle: OpaquePointer?, as type: T.Type, _ what: String)
        throws -> T
    {
        guard let handle = handle else { throw MigrationError.misuse("the \(what) handle is NULL") }
        guard let entry = table.lookup(handle) else {
            if let live = LiveHandles.handle(handle) {
                throw MigrationError.misuse("the \(what) handle is a \(Swift.type(of: live).kind), not a \(T.kind)")
            }
            throw MigrationError.misuse(
                "the \(what) handle is no longer valid: short-lived handles live only during the callback (or store) that made them, on its thread"
                    + (T.self == ObjectEntry.self ? ObjectRetention.staleHint : ""))
        }
        guard let typed = entry as? T else {
            throw MigrationError.misuse("the \(what) handle is a \(Swift.type(of: entry).kind), not a \(T.kind)")
        }
        return typed
    }
}

/// Runs a C entry point on a short-lived handle: errors go to the handle's scope (its context or
/// store) and to the thread's last error; a NULL or stale handle only to the latter.
@inline(__always)
func withEntry<T: HandleEntry>(_ handle: OpaquePointer?, _ type: T.Type, _ what: String, _ body: (T) throws -> Void)
    -> Int32
{
    let state = ThreadState.current
    let entry: T
    do {
        entry = try state.entry(handle, as: type, what)
    } catch {
        return recordError(error, nil)
    }
    return guarded(entry.sink) { try body(entry) }
}
