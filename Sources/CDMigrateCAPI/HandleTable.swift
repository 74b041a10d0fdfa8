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

    /// A slot: the entry it holds (nil when free), its generation, and, when free, the next
    /// free slot (-1: none).
    private struct Slot {
        var entry: HandleEntry?
        var generation: UInt32
        var nextFree: Int32
    }

    /// The slots, in memory the table manages itself rather than in arrays: every C call looks
    /// a handle up, and a single-row hook makes and frees a few on every row, so no access
    /// checks a buffer's uniqueness or counts a reference to it.
    private var slots: UnsafeMutablePointer<Slot>
    /// Slots in use or free (initialized), and room for.
    private var count = 0
    private var capacity: Int
    /// The free slot reused first (the one freed last), or -1.
    private var firstFree: Int32 = -1

    /// How many handles are live (for cdm_internal_handle_count).
    private(set) var liveCount = 0

    /// The buffer of `withOne`, kept from call to call (empty between calls).
    private var one: [ManagedObject] = []

    init() {
        capacity = 64
        slots = .allocate(capacity: capacity)
    }

    deinit {
        slots.deinitialize(count: count)
        slots.deallocate()
    }

    /// A handle for `entry` (taken over: a new or pooled entry is stored without counting a
    /// reference to it), one of `scope`'s.
    func allocate(_ entry: consuming HandleEntry, in scope: Scope) -> OpaquePointer {
        let reused = firstFree >= 0
        let index = reused ? Int(firstFree) : count
        let slot = Int32(index)
        entry.slot = slot
        entry.place(in: scope)
        if reused {
            firstFree = slots[index].nextFree
            slots[index].entry = consume entry
        } else {
            if count == capacity { grow() }
            (slots + index).initialize(to: Slot(entry: consume entry, generation: 1, nextFree: -1))
            count += 1
        }
        liveCount += 1
        scope.slots.append(slot)
        let token = HandleTable.tag | UInt(slots[index].generation) << 32 | UInt(slot + 1)
        // Never NULL: the tag bit is set.
        return OpaquePointer(bitPattern: token).unsafelyUnwrapped
    }

    /// `body` on a one-element array of `object` whose buffer the table keeps from call to call:
    /// adding one instance to a to-many (several times a row in a single-row hook) allocates no
    /// array. A call made while the buffer is in use gets an array of its own.
    func withOne(_ object: ManagedObject, _ body: ([ManagedObject]) throws -> Void) rethrows {
        guard one.isEmpty else { return try body([object]) }
        one.append(object)
        defer { one.removeLast() }
        try body(one)
    }

    private func grow() {
        let larger = UnsafeMutablePointer<Slot>.allocate(capacity: capacity * 2)
        larger.moveInitialize(from: slots, count: count)
        slots.deallocate()
        slots = larger
        capacity *= 2
    }

    func lookup(_ handle: OpaquePointer?) -> HandleEntry? {
        guard let handle = handle else { return nil }
        let token = UInt(bitPattern: handle)
        guard token & HandleTable.tag != 0 else { return nil }
        let index = Int(token & 0xFFFF_FFFF) - 1
        let generation = UInt32(truncatingIfNeeded: (token & ~HandleTable.tag) >> 32)
        guard index >= 0, index < count, slots[index].generation == generation else { return nil }
        return slots[index].entry
    }

    func release(_ entry: HandleEntry) {
        let index = Int(entry.slot)
        guard index >= 0, index < count, slots[index].entry === entry else { return }
        _ = vacate(index)
    }

    /// Empties slot `index` (in use) and gives back the entry it held: the slot's generation
    /// moves on (in the 31 bits below the tag), so the handle it gave is stale from now on.
    @inline(__always)
    private func vacate(_ index: Int) -> HandleEntry? {
        let entry = slots[index].entry.take()
        freeSlot(index, of: entry)
        return entry
    }

    /// Makes slot `index`, whose entry was just taken out, free: its generation moves on.
    @inline(__always)
    private func freeSlot(_ index: Int, of entry: HandleEntry?) {
        let slot = slots + index
        let generation = slot.pointee.generation
        slot.pointee.generation = generation & 0x7FFF_FFFF == 0x7FFF_FFFF ? 1 : generation + 1
        slot.pointee.nextFree = firstFree
        firstFree = Int32(index)
        liveCount -= 1
        entry?.slot = -1
    }

    /// Frees every handle the scope still holds, and its other allocations. Each entry is moved
    /// out of its slot (not copied), for the scope's pool to keep when it is the last reference.
    func close(_ scope: Scope) {
        let pool = scope.objectEntryPool
        for slot in scope.slots {
            let index = Int(slot)
            guard index >= 0, index < count, let entry = slots[index].entry.take() else { continue }
            // Only the scope's own entry: the slot may have been released and made again since
            // (another scope's entry is moved back).
            guard entry.belongs(to: scope) else {
                slots[index].entry = entry
                continue
            }
            freeSlot(index, of: entry)
            if let pool = pool { pool.recycle(entry) }
        }
        // Capacity kept: a single-row hook's scope is closed and filled again on every row.
        scope.slots.removeAll(keepingCapacity: true)
        if !scope.allocations.isEmpty {
            for allocation in scope.allocations { free(allocation) }
            scope.allocations.removeAll(keepingCapacity: true)
        }
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

    func handle(_ entry: consuming HandleEntry) -> OpaquePointer { table.allocate(entry, in: self) }

    func handle(for object: ManagedObject) -> OpaquePointer {
        handle(objectEntryPool?.entry(for: object) ?? ObjectEntry(object))
    }

    /// `handle(for:)` in a callback's scope (never a `RetainedScope`, whose handles are made in
    /// the running callback's scope) whose table, the calling thread's, is at hand: the scope's
    /// table is not read (an `unowned` reference, checked at each read).
    @inline(__always)
    final func callbackHandle(for object: ManagedObject, in table: HandleTable) -> OpaquePointer {
        table.allocate(objectEntryPool?.entry(for: object) ?? ObjectEntry(object), in: self)
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
    private(set) unowned(unsafe) var scope: Scope?
    /// The scope's identity, to tell whether the entry is of a scope without taking a reference
    /// to the scope (which reading `scope` takes).
    private(set) var scopeIdentity: ObjectIdentifier?
    var sink: ErrorSink? { scope?.sink }

    /// Makes the entry one of `scope`'s (`HandleTable.allocate`).
    @inline(__always)
    final func place(in scope: Scope) {
        self.scope = scope
        scopeIdentity = ObjectIdentifier(scope)
    }

    /// Whether the entry is one of `scope`'s.
    @inline(__always)
    final func belongs(to scope: Scope) -> Bool { scopeIdentity == ObjectIdentifier(scope) }
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

    /// `body` on the calling thread's state, without counting a reference to it: the thread's
    /// key holds the state until the thread ends, which it cannot do while `body` runs on it.
    @inline(__always)
    static func withCurrent<R>(_ body: (ThreadState) throws -> R) rethrows -> R {
        if let pointer = pthread_getspecific(key) {
            return try Unmanaged<ThreadState>.fromOpaque(pointer)._withUnsafeGuaranteedRef(body)
        }
        return try body(current)
    }

    func openScope(sink: ErrorSink) -> Scope { Scope(sink: sink, table: table) }

    /// The live entry of a handle of the expected kind, or CDM_MISUSE naming what is wrong.
    func entry<T: HandleEntry>(_ handle: OpaquePointer?, as type: T.Type, _ what: String) throws -> T {
        try ThreadState.entry(in: table, handle, as: type, what)
    }

    /// `entry(_:as:_:)` in a table already at hand (the calling thread's: that of the scope of a
    /// handle just looked up), without reading the thread's state again. Inlined in each entry
    /// point for the common case, a live handle of exactly the expected class; anything else goes
    /// through `checkedEntry`.
    @inline(__always)
    static func entry<T: HandleEntry>(in table: HandleTable, _ handle: OpaquePointer?, as type: T.Type, _ what: String)
        throws -> T
    {
        if let entry = table.lookup(handle), ObjectIdentifier(Swift.type(of: entry)) == ObjectIdentifier(T.self) {
            return unsafeDowncast(entry, to: T.self)
        }
        return try checkedEntry(in: table, handle, as: type, what)
    }

    /// `entry(in:_:as:_:)` for any handle: the entry when it is of the expected kind (or of a
    /// subclass), otherwise CDM_MISUSE naming what is wrong.
    @inline(never)
    private static func checkedEntry<T: HandleEntry>(
        in table: HandleTable, _ handle: OpaquePointer?, as type: T.Type, _ what: String
    ) throws -> T {
        guard let handle = handle else { throw MigrationError.misuse("the \(what) handle is NULL") }
        guard let entry = table.lookup(handle) else {
            if let live = LiveHandles.handle(handle) {
                throw MigrationError.misuse("the \(what) handle is a \(Swift.type(of: live).kind), not a \(T.kind)")
            }
            throw MigrationError.misuse(
                "the \(what) handle is no longer valid: short-lived handles live only during the callback (or store) that made them, on its thread"
                    + (T.self == ObjectEntry.self ? ObjectRetention.staleHint : ""))
        }
        guard let typed = cast(entry, to: T.self) else {
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
    withEntry(handle, type, what) { entry, _ in try body(entry) }
}

/// `withEntry` whose body is also given the calling thread's handle table (the one the entry was
/// found in, and so the table of the entry's scope), for the handles and look-ups it makes.
@inline(__always)
func withEntry<T: HandleEntry>(
    _ handle: OpaquePointer?, _ type: T.Type, _ what: String, _ body: (T, HandleTable) throws -> Void
) -> Int32 {
    ThreadState.withCurrent { state in
        let table = state.table
        let entry: T
        do {
            entry = try ThreadState.entry(in: table, handle, as: type, what)
        } catch {
            return recordError(error, nil)
        }
        return guarded(entry.sink) { try body(entry, table) }
    }
}
