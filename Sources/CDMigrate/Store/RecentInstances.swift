/// The instances a store handed out or wrote most recently, by row: an identity map of bounded
/// size, so that looking an instance up by its ID again (a policy fetching the same `Categoria`
/// for each of a million notes) needs no query, while memory does not grow with the store.
///
/// Two generations of at most `capacity` instances each: a look-up finds an instance in either
/// (and moves it to the young one); when the young generation is full it becomes the old one and
/// the previous old one is dropped. So at most `2 × capacity` instances are kept, and an instance
/// used again and again stays.
///
/// Core Data: the row cache and registered objects of an `NSManagedObjectContext`, bounded.
struct RecentInstances {
    /// Instances per generation.
    let capacity: Int
    private var young: [PersistentStore.RowKey: ManagedObject] = [:]
    private var old: [PersistentStore.RowKey: ManagedObject] = [:]

    init(capacity: Int) { self.capacity = max(capacity, 1) }

    /// How many instances are kept (at most `2 × capacity`).
    var count: Int { young.count + old.count }

    /// The instance kept for the row, if any.
    mutating func instance(for key: PersistentStore.RowKey) -> ManagedObject? {
        if let object = young[key] { return object }
        guard let object = old.removeValue(forKey: key) else { return nil }
        remember(object, for: key)
        return object
    }

    /// Keeps `object` as the instance of its row (replacing any other kept for it).
    mutating func remember(_ object: ManagedObject, for key: PersistentStore.RowKey) {
        if young.count >= capacity && young[key] == nil {
            old = young
            young = [:]
            young.reserveCapacity(capacity)
        }
        young[key] = object
        old[key] = nil
    }

    /// Forgets the row's instance unless it is `object` (another instance of the row changed it,
    /// so the kept one is out of date).
    mutating func forget(_ key: PersistentStore.RowKey, unlessItIs object: ManagedObject) {
        if let kept = young[key], kept !== object { young[key] = nil }
        if let kept = old[key], kept !== object { old[key] = nil }
    }

    /// Forgets every instance.
    mutating func removeAll() {
        young = [:]
        old = [:]
    }
}
