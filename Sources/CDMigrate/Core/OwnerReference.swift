/// How the parts of an object reach it: one per owner, held strongly by every part, pointed at the
/// owner once it is made and cleared first thing in the owner's `deinit`, so that a part that
/// outlives its owner finds none, as a weak reference would. A model's entities and properties
/// reach their model (and, through it, each other) this way, and a migration's put-off attribute
/// mappings their manager (a store's instances reach it the same way, through
/// `ObjectContextReference`, whose owner is a protocol type).
///
/// Not a weak reference to the owner: an object that weak references point to keeps its reference
/// counts in a side table, and every retain and release of it then takes the runtime's slow path;
/// for entities and models that is several times per instance made or associated. As with a weak
/// reference read on one thread while another thread drops the owner's last reference, reading it
/// is only meaningful on the thread that holds the owner (models and managers are not shared
/// between threads while they are being released).
package final class OwnerReference<Owner: AnyObject> {
    /// The owner; nil before it is made and once it has gone away.
    package private(set) unowned(unsafe) var owner: Owner?

    init() {}

    /// Called by the owner once it is fully made (`to`), and first thing in its `deinit` (nil).
    func point(to owner: Owner?) { self.owner = owner }
}
