/// The last primary key handed out in one table (`PersistentStore.maxPrimaryKeys`), shared by
/// reference: the insert slots of the table's entities count up the same keys.
final class PrimaryKeyCounter {
    var last: Int64
    init(_ last: Int64 = 0) { self.last = last }
}

/// What inserting instances of one entity into one store needs, looked up once rather than on
/// every `insertObject`: the store's own entity (the given one may be another model's entity of
/// that name), its table, its key counter and its attributes' default values. A store keeps one
/// per entity it was asked to insert (`PersistentStore.insertSlot(for:)`); the entity asked for is
/// kept strongly, so no other entity can come to have its identity.
final class EntityInsertSlot {
    /// The entity the caller gave (the key of the store's slots).
    let given: EntityDescription
    /// The store's own entity of that name (`given` itself when it is the store's).
    let entity: EntityDescription
    /// Its table (its root's).
    let table: String
    /// The key counter of that table.
    let keys: PrimaryKeyCounter
    /// The attributes' default values, in `entity.attributes` order: a new instance starts with
    /// this array (copied when first written).
    let defaults: [Value]
    /// Whether the store has counted the entity among those written by instance
    /// (`PersistentStore.entitiesWrittenByInstance`, a set that only grows).
    var recordedAsWritten = false

    init(given: EntityDescription, entity: EntityDescription, table: String, keys: PrimaryKeyCounter) {
        self.given = given
        self.entity = entity
        self.table = table
        self.keys = keys
        defaults = entity.attributes.map { $0.defaultValue }
    }
}

extension PersistentStore {
    /// The key counter of `table`, made (at 0) when the table has none yet.
    func keyCounter(for table: String) -> PrimaryKeyCounter {
        if let counter = maxPrimaryKeys[table] { return counter }
        let counter = PrimaryKeyCounter()
        maxPrimaryKeys[table] = counter
        return counter
    }

    /// The insert slot of `given` (made on first use): the two used last answer without a look-up.
    /// - Throws: what `entity(named:)` throws when `given` is another model's entity this store's
    ///   model has no entity of that name for.
    func insertSlot(for given: EntityDescription) throws -> EntityInsertSlot {
        if let last = recentInsertSlots.0, last.given === given { return last }
        if let before = recentInsertSlots.1, before.given === given {
            recentInsertSlots = (before, recentInsertSlots.0)
            return before
        }
        let slot: EntityInsertSlot
        if let known = insertSlots[ObjectIdentifier(given)] {
            slot = known
        } else {
            let entity = layout.isOwnEntity(given) ? given : try self.entity(named: given.name)
            let table = layout.table(for: entity)
            slot = EntityInsertSlot(given: given, entity: entity, table: table, keys: keyCounter(for: table))
            insertSlots[ObjectIdentifier(given)] = slot
        }
        recentInsertSlots = (slot, recentInsertSlots.0)
        return slot
    }
}
