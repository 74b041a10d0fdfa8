/// One instance in a keyed archive: its class and its keys, read with the types the reader
/// expects (each mismatch an error naming the object, its class and the key).
package struct ArchivedObject {
    package let archive: KeyedArchive
    package let reference: KeyedArchive.Reference
    /// `$classname`.
    package let className: String
    /// `$classes`: the class and its superclasses, most specific first.
    package let classes: [String]
    /// The encoded keys (including `$class`), in archive order.
    package let fields: [(key: String, value: PropertyListValue)]

    /// The encoded keys, without `$class`.
    package var keys: [String] { fields.map { $0.key }.filter { $0 != "$class" } }

    package func isKind(of name: String) -> Bool { classes.contains(name) }

    /// The key's raw property list value, nil when absent.
    package func raw(_ key: String) -> PropertyListValue? {
        return fields.first(where: { $0.key == key })?.value
    }

    package func error(_ key: String, _ problem: String) -> MigrationError {
        return archive.error("object \(reference.index) (\(className)) key '\(key)' \(problem)")
    }

    /// The key's value decoded (`.null` when absent).
    package func value(_ key: String) throws -> ArchiveValue {
        guard let raw = raw(key) else { return .null }
        return try archive.value(raw, at: "object \(reference.index) (\(className)) key '\(key)'")
    }

    /// A string, nil when absent or `$null`.
    package func string(_ key: String) throws -> String? {
        switch try value(key) {
        case .null: return nil
        case .string(let s): return s
        case let other: throw error(key, "is a \(other.typeName), not a string")
        }
    }

    /// An integer (as NSCoder's decodeInt…ForKey), nil when absent.
    package func integer(_ key: String) throws -> Int64? {
        let v = try value(key)
        if v.isNull { return nil }
        guard let i = v.integerValue else { throw error(key, "is a \(v.typeName), not an integer") }
        return i
    }

    /// A boolean (as decodeBoolForKey: false when absent).
    package func bool(_ key: String) throws -> Bool {
        let v = try value(key)
        if v.isNull { return false }
        guard let b = v.boolValue else { throw error(key, "is a \(v.typeName), not a boolean") }
        return b
    }

    /// The instance of a non-Foundation class the key refers to, nil when absent or `$null`.
    package func object(_ key: String) throws -> ArchivedObject? {
        switch try value(key) {
        case .null: return nil
        case .object(let reference, _): return try archive.object(reference)
        case let other: throw error(key, "is a \(other.typeName), not an archived object")
        }
    }

    /// A dictionary (NSDictionary and its kin), nil when absent or `$null`.
    package func dictionary(_ key: String) throws -> [(key: ArchiveValue, value: ArchiveValue)]? {
        switch try value(key) {
        case .null: return nil
        case .dictionary(let d): return d
        case let other: throw error(key, "is a \(other.typeName), not a dictionary")
        }
    }

    /// An array (NSArray, NSSet, NSOrderedSet), nil when absent or `$null`.
    package func array(_ key: String) throws -> [ArchiveValue]? {
        switch try value(key) {
        case .null: return nil
        case .array(let a): return a
        case let other: throw error(key, "is a \(other.typeName), not an array")
        }
    }
}
