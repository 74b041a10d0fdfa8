/// Writes an NSKeyedArchiver archive without Foundation: the mirror of `KeyedArchive`.
///
/// Objects go into `$objects` as NSKeyedArchiver puts them there: object 0 is `$null`; an
/// instance gets its UID when it is first met, its keys are encoded after it (depth-first), and
/// its class (`{$classname, $classes}`, one per class) follows its keys. Strings, numbers and data
/// are plain property list objects (strings and numbers written once per value); containers are
/// NSArray/NSSet (`NS.objects`) and NSDictionary (`NS.keys`, `NS.objects`).
///
/// Objects that point at each other (an entity and its model, a relationship and its inverse) are
/// referred to by key: `reference(to:)` hands out the UID of an object that is encoded later
/// (NSCoder's `encodeConditionalObject:`), `encode(_:…)` fills it. `archive(root:)` refuses an
/// archive with an object referred to but never encoded. Nothing here recurses on its own: the
/// caller's field closures nest only as deep as the caller nests them.
package final class KeyedArchiveWriter {
    /// What the archive is, for messages.
    let what: String
    /// `$objects`, nil for a slot handed out and not filled yet.
    private var objects: [PropertyListValue?] = [.string("$null")]
    private var uidByKey: [String: UInt64] = [:]
    private var classUIDs: [String: UInt64] = [:]
    private var scalarUIDs: [BinaryPropertyList.UniqueKey: UInt64] = [:]

    /// The reference NSKeyedArchiver writes for nil.
    package static let null = PropertyListValue.uid(0)

    package init(what: String) { self.what = what }

    /// How many objects the archive holds so far.
    package var count: Int { objects.count }

    private func append(_ value: PropertyListValue?) -> UInt64 {
        objects.append(value)
        return UInt64(objects.count - 1)
    }

    // MARK: Plain objects

    /// A string object (NSString), nil for `$null`; one object per distinct string.
    package func string(_ text: String?) -> PropertyListValue {
        guard let text else { return KeyedArchiveWriter.null }
        return scalar(.string(text), key: .string(text))
    }

    /// An NSNumber: an integer, a real or a boolean as a plain object, one per distinct value.
    package func number(_ value: PropertyListValue) -> PropertyListValue {
        switch value {
        case .integer(let i): return scalar(value, key: .integer(i))
        case .real(let d): return scalar(value, key: .real(d.bitPattern))
        case .bool(let b): return scalar(value, key: .bool(b))
        default: return KeyedArchiveWriter.null
        }
    }

    /// An NSData: the bytes as a plain data object.
    package func data(_ bytes: [UInt8]) -> PropertyListValue {
        return .uid(append(.data(bytes)))
    }

    private func scalar(_ value: PropertyListValue, key: BinaryPropertyList.UniqueKey) -> PropertyListValue {
        if let uid = scalarUIDs[key] { return .uid(uid) }
        let uid = append(value)
        scalarUIDs[key] = uid
        return .uid(uid)
    }

    // MARK: Instances

    /// The class object of `classes` (most specific first, `NSObject` appended), written once.
    private func classReference(_ classes: [String]) -> PropertyListValue {
        let name = classes.first ?? "NSObject"
        if let uid = classUIDs[name] { return .uid(uid) }
        let chain = classes.last == "NSObject" ? classes : classes + ["NSObject"]
        let uid = append(.dictionary([("$classname", .string(name)), ("$classes", .array(chain.map { .string($0) }))]))
        classUIDs[name] = uid
        return .uid(uid)
    }

    /// The UID of the object known as `key`, handing one out when it has none yet (it must be
    /// encoded with `encode(_:classes:fields:)` before the archive is finished).
    package func reference(to key: String) -> PropertyListValue {
        if let uid = uidByKey[key] { return .uid(uid) }
        let uid = append(nil)
        uidByKey[key] = uid
        return .uid(uid)
    }

    /// Whether the object known as `key` has been encoded (not only referred to).
    package func isEncoded(_ key: String) -> Bool {
        guard let uid = uidByKey[key], uid < UInt64(objects.count) else { return false }
        return objects[Int(uid)] != nil
    }

    /// Encodes an instance once: its slot is taken (or the one handed out by `reference(to:)` is
    /// used), then `fields` runs (encoding what the keys refer to after it), then its class.
    ///
    /// - Parameters:
    ///   - key: the object's identity within the archive; nil for an object no one else refers to.
    ///   - classes: its class and superclasses, most specific first.
    ///   - fields: its keys and values (plain numbers inline, objects as references).
    /// - Returns: the reference to the object.
    @discardableResult
    package func encode(_ key: String?, classes: [String], fields: () throws -> [(String, PropertyListValue)]) rethrows
        -> PropertyListValue
    {
        let uid: UInt64
        if let key {
            if case .uid(let known) = reference(to: key) { uid = known } else { uid = append(nil) }
            if objects[Int(uid)] != nil { return .uid(uid) }
            // Taken, so that a key referring back to the object while its fields encode finds it.
            objects[Int(uid)] = .string("$null")
        } else {
            uid = append(.string("$null"))
        }
        let members = try fields()
        let classValue = classReference(classes)
        var dictionary: [(key: String, value: PropertyListValue)] = [("$class", classValue)]
        dictionary += members.map { (key: $0.0, value: $0.1) }
        objects[Int(uid)] = .dictionary(dictionary)
        return .uid(uid)
    }

    // MARK: Foundation containers

    /// An NSArray (or NSMutableArray, NSSet, …: `classes`) of the references `items` makes.
    package func array(_ classes: [String] = ["NSArray"], _ items: () throws -> [PropertyListValue]) rethrows
        -> PropertyListValue
    {
        return try encode(nil, classes: classes) { [("NS.objects", .array(try items()))] }
    }

    /// An NSDictionary (or NSMutableDictionary: `classes`): the keys are encoded before the values.
    package func dictionary(
        _ classes: [String] = ["NSDictionary"], keys: () throws -> [PropertyListValue],
        values: () throws -> [PropertyListValue]
    ) rethrows -> PropertyListValue {
        return try encode(nil, classes: classes) {
            let keyReferences = try keys()
            let valueReferences = try values()
            return [("NS.keys", .array(keyReferences)), ("NS.objects", .array(valueReferences))]
        }
    }

    // MARK: The archive

    /// The archive as a binary property list, `root` under `$top`.
    ///
    /// - Throws: `MigrationError` `.invalidModel` when an object was referred to but never encoded.
    package func archive(root: PropertyListValue) throws -> [UInt8] {
        var filled: [PropertyListValue] = []
        filled.reserveCapacity(objects.count)
        for (index, object) in objects.enumerated() {
            guard let object else {
                let key = uidByKey.first(where: { $0.value == UInt64(index) })?.key ?? "?"
                throw MigrationError(
                    .invalidModel, "\(what): object \(index) ('\(key)') is referred to but never encoded")
            }
            filled.append(object)
        }
        return BinaryPropertyList.encode(
            .dictionary([
                ("$version", .integer(100000)), ("$archiver", .string("NSKeyedArchiver")),
                ("$top", .dictionary([("root", root)])), ("$objects", .array(filled)),
            ]))
    }
}
