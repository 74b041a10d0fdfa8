import CDMigrate

/// The cdm_object entries of a single-row hook's scope, kept from one row to the next: the scope
/// is closed after every row (its handles' generations move on, so a handle kept past its row is
/// stale as before), and the entries it released are reused for the next row's handles instead
/// of being freed and made again. An entry a host retained (`cdm_object_retain`) has left the
/// scope and is not released with it; one still referenced elsewhere is not taken.
final class ObjectEntryPool {
    /// What a cleared entry answers if ever asked (none is: a cleared entry waits here, out of
    /// any handle's reach): no instance of any store.
    static let placeholder = ManagedObject(entity: EntityDescription(name: "ReleasedHandle"))

    /// Entries kept at most: a hook making many instances in one row does not keep as many entries.
    static let capacity = 32

    /// The kept entries, in memory of the pool's own (not an array: no uniqueness check or
    /// reference to a buffer for each entry taken or kept, several a row).
    private let kept = UnsafeMutablePointer<ObjectEntry>.allocate(capacity: ObjectEntryPool.capacity)
    private var count = 0

    deinit {
        kept.deinitialize(count: count)
        kept.deallocate()
    }

    /// A kept entry made to stand for `object`, or nil when none is kept.
    func entry(for object: ManagedObject) -> ObjectEntry? {
        guard count > 0 else { return nil }
        count -= 1
        let entry = (kept + count).move()
        entry.reuse(for: object)
        return entry
    }

    /// Keeps an entry its scope has just released (taken over: kept without counting a reference
    /// to it, or let go), when it is a cdm_object entry and the caller's reference was the only one left.
    @inline(__always)
    func recycle(_ released: consuming HandleEntry) {
        // The class compared by identity, not cast: ObjectEntry is final.
        guard count < ObjectEntryPool.capacity, released.slot == -1,
            ObjectIdentifier(type(of: released)) == ObjectIdentifier(ObjectEntry.self),
            isKnownUniquelyReferenced(&released)
        else { return }
        let entry = unsafeDowncast(consume released, to: ObjectEntry.self)
        entry.clear()
        (kept + count).initialize(to: consume entry)
        count += 1
    }
}
