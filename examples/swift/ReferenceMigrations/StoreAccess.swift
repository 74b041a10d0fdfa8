import CDMigrate

/// Small conveniences over the store API that the generators, policies and tests share.
public enum StoreAccess {
    /// Creates a new store, lets `body` fill it, saves and closes it.
    public static func createStore(at path: String, model: ManagedObjectModel, _ body: (PersistentStore) throws -> Void) throws {
        let store = try PersistentStore.create(at: path, model: model)
        defer { store.close() }
        try body(store)
        try store.save()
    }

    /// Opens a store read-only (checking that it fits `model`) for `body`.
    public static func readStore<T>(at path: String, model: ManagedObjectModel, _ body: (PersistentStore) throws -> T) throws -> T {
        let store = try PersistentStore.open(at: path, model: model, readOnly: true, checkVersion: true)
        defer { store.close() }
        return try body(store)
    }

    /// Every instance of an entity (sub-entities' too unless `exact`).
    public static func all(_ entityName: String, in store: PersistentStore, exact: Bool = false) throws -> [ManagedObject] {
        var request = FetchRequest(entityName: entityName)
        if exact { request.includesSubentities = false }
        return try store.fetch(request)
    }
}

extension ManagedObject {
    /// A string attribute's value (nil when unset).
    public func string(_ key: String) throws -> String? { try value(forKey: key).stringValue }

    /// The instances of a to-many relationship.
    public func objects(_ key: String) throws -> [ManagedObject] { try value(forKey: key).elements.compactMap { $0.object } }

    /// Adds instances to a to-many relationship named `key`.
    public func add(_ objects: [ManagedObject], toKey key: String) throws {
        guard let relationship = entity.relationship(named: key) else {
            throw MigrationError(.invalidArgument, "entity '\(entity.name)' has no relationship named '\(key)'")
        }
        try add(objects, to: relationship)
    }
}

extension String {
    /// NSString's `stringByReplacingOccurrencesOfString:withString:` (literal, left to right), without Foundation.
    public func replacingAll(_ target: String, with replacement: String) -> String {
        guard !target.isEmpty else { return self }
        var result = ""
        var rest = Substring(self)
        while let range = rest.range(ofLiteral: target) {
            result += rest[..<range.lowerBound]
            result += replacement
            rest = rest[range.upperBound...]
        }
        return result + rest
    }
}

extension Substring {
    /// The first range of `target` in the text, compared character by character.
    func range(ofLiteral target: String) -> Range<Substring.Index>? {
        let needle = Array(target)
        guard let firstCharacter = needle.first else { return nil }
        var index = startIndex
        while index < endIndex {
            if self[index] == firstCharacter {
                var i = index, j = 0
                while j < needle.count, i < endIndex, self[i] == needle[j] { i = self.index(after: i); j += 1 }
                if j == needle.count { return index..<i }
            }
            index = self.index(after: index)
        }
        return nil
    }
}
