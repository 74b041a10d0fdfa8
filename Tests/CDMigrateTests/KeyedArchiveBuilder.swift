@testable import CDMigrate

/// Writes NSKeyedArchiver archives by hand for tests: objects with a class chain and keys,
/// references between them, and the Foundation containers.
final class KeyedArchiveBuilder {
    private(set) var objects: [PropertyListValue] = [.string("$null")]
    private var classes: [String: Int] = [:]

    /// Reserves a slot to fill later (for objects that point at each other).
    func reserve() -> PropertyListValue {
        objects.append(.string("placeholder"))
        return .uid(UInt64(objects.count - 1))
    }

    func add(_ value: PropertyListValue) -> PropertyListValue {
        objects.append(value)
        return .uid(UInt64(objects.count - 1))
    }

    func classReference(_ chain: [String]) -> PropertyListValue {
        if let i = classes[chain[0]] { return .uid(UInt64(i)) }
        objects.append(
            .dictionary([
                ("$classname", .string(chain[0])), ("$classes", .array((chain + ["NSObject"]).map { .string($0) })),
            ]))
        classes[chain[0]] = objects.count - 1
        return .uid(UInt64(objects.count - 1))
    }

    /// An instance: `$class` plus keys; fills `slot` when given.
    @discardableResult
    func instance(_ chain: [String], _ fields: [(String, PropertyListValue)], slot: PropertyListValue? = nil)
        -> PropertyListValue
    {
        let value = PropertyListValue.dictionary(
            [("$class", classReference(chain))] + fields.map { (key: $0.0, value: $0.1) })
        if case .uid(let i)? = slot {
            objects[Int(i)] = value
            return .uid(i)
        }
        return add(value)
    }

    func string(_ s: String) -> PropertyListValue { add(.string(s)) }

    func array(_ items: [PropertyListValue], chain: [String] = ["NSArray"]) -> PropertyListValue {
        instance(chain, [("NS.objects", .array(items))])
    }

    func dictionary(_ entries: [(PropertyListValue, PropertyListValue)], chain: [String] = ["NSDictionary"])
        -> PropertyListValue
    {
        instance(chain, [("NS.keys", .array(entries.map { $0.0 })), ("NS.objects", .array(entries.map { $0.1 }))])
    }

    func archive(root: PropertyListValue) -> [UInt8] {
        return BinaryPropertyList.encode(
            .dictionary([
                ("$version", .integer(100000)), ("$archiver", .string("NSKeyedArchiver")),
                ("$top", .dictionary([("root", root)])), ("$objects", .array(objects)),
            ]))
    }
}
