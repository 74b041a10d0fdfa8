/// How an instance reaches the store it belongs to: one of these per store, held strongly by
/// every instance of the store and cleared by the store when it goes away (`PersistentStore`'s
/// `deinit`), so that an instance that outlives its store finds none, as a weak reference would.
///
/// Not a weak reference to the store itself: an object that weak references point to keeps its
/// reference counts in a side table, and every retain and release of it then takes the runtime's
/// slow path — for the store, several times per instance made or changed.
package final class ObjectContextReference {
    /// The store; nil once it has gone away. Set only by the store, on its own thread.
    package private(set) unowned(unsafe) var context: ObjectContext?

    init() {}

    /// Called by the store once it is fully made (`to`), and first thing in its `deinit` (nil).
    func point(to context: ObjectContext?) { self.context = context }
}
