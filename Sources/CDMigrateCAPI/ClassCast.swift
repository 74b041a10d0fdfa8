/// `object as? T`, with the common case first: an object whose class is `T` itself is taken by
/// comparing its type, without the runtime's dynamic cast (which walks the class's ancestry);
/// any other object (of a subclass of `T`, or of another class) goes through `as?` as before.
/// The C calls look up a handle's entry, and the names they are given, several times a row.
@inline(__always)
func cast<T: AnyObject>(_ object: AnyObject, to type: T.Type) -> T? {
    if ObjectIdentifier(Swift.type(of: object)) == ObjectIdentifier(type) { return unsafeDowncast(object, to: type) }
    return object as? T
}
