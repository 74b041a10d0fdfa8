/// A reference in a collection to an object its owner keeps alive (as a model keeps its entities:
/// `OwnerReference`), without counting it.
struct Unowned<T: AnyObject> {
    unowned(unsafe) let value: T
    init(_ value: T) { self.value = value }
}
