/// NSManagedObject: an instance of an entity.
///
/// Attribute values live in the object. Relationship values of an instance that belongs to a
/// store are read from and written to the store through its `ObjectContext` (so that a million
/// rows never sit in memory at once); an instance that belongs to no store keeps them itself.
public final class ManagedObject: CustomStringConvertible {
    /// The instance's entity (Core Data: `entity`).
    public let entity: EntityDescription
    /// The instance's ID (Core Data: `objectID`).
    public internal(set) var objectID: ObjectID
    /// The store it belongs to; nil for a free-standing instance (tests, expression evaluation),
    /// or once the store is gone.
    package var context: ObjectContext? { storeReference?.context }
    /// How the instance reaches its store (`ObjectContextReference`): nil for a free-standing instance.
    let storeReference: ObjectContextReference?
    /// Indexed like `entity.attributes`.
    var attributeValues: [Value]
    /// A fault knows its identity but not yet its attribute values; the first access to an
    /// attribute reads its row (as Core Data's faults do), so handing instances around is cheap.
    public internal(set) var isFault = false
    /// An instance inserted into its store and still in the store's insert buffer: its values are
    /// written with the buffer, so a change to an attribute needs no write of its own.
    var isBufferedInsert = false
    /// Whether an attribute was ever set on the instance (`setValue`).
    var hasSetAttributes = false
    /// Values put off until first access (`DeferredValues`); the instance is then a fault.
    var deferredValues: DeferredValues?
    /// Indexed like `entity.relationships`; used only when `context` is nil.
    var relationshipValues: [Value]
    /// The enumeration row a fault reads its values from while the row is current (`LiveSourceRow`).
    var liveRow: LiveSourceRow?

    /// A free-standing instance with the attributes' default values.
    public convenience init(entity: EntityDescription, primaryKey: Int64 = 0) {
        self.init(
            entity: entity, objectID: ObjectID(storeIdentifier: "", entityName: entity.name, primaryKey: primaryKey),
            store: nil)
    }

    init(entity: EntityDescription, objectID: ObjectID, store: ObjectContextReference?, values: [Value]? = nil) {
        self.entity = entity
        self.objectID = objectID
        self.storeReference = store
        self.attributeValues = values ?? entity.attributes.map { $0.defaultValue }
        self.relationshipValues =
            store == nil ? entity.relationships.map { $0.isToMany ? .collection([]) : .null } : []
    }

    // MARK: Key-value coding

    /// The value of an attribute or relationship (`valueForKey:`); to-many values are collections.
    /// A transformable attribute answers the object its stored bytes stand for where cdmigrate can
    /// read it (`TransformableValue.read`), else the bytes.
    public func value(forKey key: String) throws -> Value {
        if let attribute = entity.attributesByName[key] {
            return TransformableValue.read(try storedValue(at: attribute.index), for: attribute)
        }
        if let relationship = entity.relationshipsByName[key] { return try value(for: relationship) }
        throw MigrationError(.invalidArgument, "entity '\(entity.name)' has no property named '\(key)'")
    }

    /// `valueForKeyPath:`: follows to-one relationships; through a to-many it collects the values
    /// of every member (flattened), as KVC does.
    public func value(forKeyPath keyPath: String) throws -> Value {
        let keys = keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        return try ManagedObject.value(.object(self), keys: keys[...])
    }

    static func value(_ start: Value, keys: ArraySlice<String>) throws -> Value {
        guard let key = keys.first else { return start }
        switch start {
        case .null: return .null
        case .object(let object):
            return try value(try object.value(forKey: key), keys: keys.dropFirst())
        case .collection(let items):
            var result: [Value] = []
            for item in items {
                let v = try value(item, keys: keys)
                if case .collection(let inner) = v { result += inner } else if !v.isNull { result.append(v) }
            }
            return .collection(result)
        default:
            throw MigrationError(.invalidArgument, "cannot take key '\(key)' of a \(start.typeName) value")
        }
    }

    /// The value of `attribute`, read from the row when the instance is a fault (a transformable
    /// attribute's as `value(forKey:)` answers it).
    ///
    /// - throws: `MigrationError` when the attribute is not the entity's, or the store cannot be read.
    public func value(for attribute: AttributeDescription) throws -> Value {
        TransformableValue.read(try storedValue(for: attribute), for: attribute)
    }

    /// The value of `attribute` as the store keeps it: a transformable attribute's bytes, for a
    /// copy into another transformable attribute that keeps them unchanged.
    package func storedValue(for attribute: AttributeDescription) throws -> Value {
        try checkOwnAttribute(attribute)
        return try storedValue(at: attribute.index)
    }

    /// The stored value at an attribute index of the entity: a fault of a live row reads that column alone.
    private func storedValue(at index: Int) throws -> Value {
        if isFault {
            if let row = liveRow, let value = try row.value(at: index, of: self) { return value }
            try fireFault()
        }
        return attributeValues[index]
    }

    /// Makes an instance of a store that nobody holds any more the fault of another row of its
    /// entity, as `PersistentStore.fault(entity:primaryKey:)` makes one (`LiveSourceRow` reuses
    /// the instance of a row nobody kept for the next row, rather than free it and make another;
    /// the live row it reads from stays).
    func becomeFault(ofRow primaryKey: Int64) {
        objectID.primaryKey = primaryKey
        if !attributeValues.isEmpty { attributeValues = [] }
        isFault = true
        isBufferedInsert = false
        hasSetAttributes = false
        if deferredValues != nil { deferredValues = nil }
    }

    /// Reads the values of a fault.
    func fireFault() throws {
        guard isFault else { return }
        if let deferred = deferredValues {
            // Values put off: computed now, as they would have been at once.
            deferredValues = nil
            isFault = false
            do {
                try deferred.writer.materialize(self, deferred)
            } catch {
                // Still put off: the next access evaluates again (and fails the same way).
                deferredValues = deferred
                isFault = true
                throw error
            }
            return
        }
        if let row = liveRow, let values = try row.values(of: self) {
            attributeValues = values
            liveRow = nil
            isFault = false
            return
        }
        guard let context = context else {
            throw MigrationError(
                .invalidArgument, "instance \(objectID.uriRepresentation) belongs to a store that was closed")
        }
        try context.fulfillFault(self)
        isFault = false
    }

    private func checkOwnAttribute(_ attribute: AttributeDescription) throws {
        guard attribute.index < entity.attributes.count, entity.attributes[attribute.index] === attribute else {
            throw MigrationError(
                .invalidArgument,
                "attribute '\(attribute.entity?.name ?? "?").\(attribute.name)' is not an attribute of entity '\(entity.name)'"
            )
        }
    }

    /// The instances of `relationship`: `.object`, `.null` or `.collection`.
    ///
    /// - throws: `MigrationError` when the relationship is not the entity's, or the store cannot be read.
    public func value(for relationship: RelationshipDescription) throws -> Value {
        if let context = context { return try context.relationshipValue(of: self, relationship) }
        try checkFreeStanding(relationship)
        return relationshipValues[relationship.index]
    }

    /// Sets an attribute (checked against its type) or a relationship (`setValue:forKey:`).
    public func setValue(_ value: Value, forKey key: String) throws {
        if let attribute = entity.attributesByName[key] { return try setValue(value, for: attribute) }
        if let relationship = entity.relationshipsByName[key] { return try setValue(value, for: relationship) }
        throw MigrationError(.invalidArgument, "entity '\(entity.name)' has no property named '\(key)'")
    }

    /// Sets `attribute` to `value`, converted to the attribute's type where Core Data would (a
    /// transformable attribute archives what its transformer would: `TransformableValue`).
    ///
    /// - throws: `MigrationError` `.invalidArgument` when the value does not suit the type.
    public func setValue(_ value: Value, for attribute: AttributeDescription) throws {
        try checkOwnAttribute(attribute)
        let coerced = try AttributeValueCoercion.coerce(TransformableValue.stored(value, for: attribute), to: attribute)
        if isFault { try fireFault() }
        attributeValues[attribute.index] = coerced
        hasSetAttributes = true
        try context?.attributeDidChange(of: self, attribute)
    }

    /// Sets a relationship: an instance or nil for a to-one, a collection for a to-many (replacing it).
    public func setValue(_ value: Value, for relationship: RelationshipDescription) throws {
        let targets = try RelationshipValue.instances(in: value, for: relationship, of: entity)
        if let context = context { return try context.setRelationship(of: self, relationship, to: targets) }
        try checkFreeStanding(relationship)
        relationshipValues[relationship.index] =
            relationship.isToMany
            ? .collection(targets.map { .object($0) }) : (targets.first.map { .object($0) } ?? .null)
    }

    /// Adds instances to a to-many (appending for an ordered one), like `mutableSetValueForKey:`'s `addObject:`.
    public func add(_ objects: [ManagedObject], to relationship: RelationshipDescription) throws {
        guard relationship.isToMany else {
            throw MigrationError(
                .invalidArgument,
                "'\(entity.name).\(relationship.name)' is a to-one relationship; set it instead of adding to it")
        }
        try RelationshipValue.check(objects, for: relationship, of: entity)
        if let context = context { return try context.addToRelationship(of: self, relationship, objects) }
        try checkFreeStanding(relationship)
        var current = relationshipValues[relationship.index].elements
        for object in objects where !current.contains(.object(object)) { current.append(.object(object)) }
        relationshipValues[relationship.index] = .collection(current)
    }

    /// Inserts instances into an ordered to-many at `index` (clamped to the list), moving them there
    /// when they are already members, like `insertObject:inValuesOfOrderedSetAtIndex:`.
    public func insert(_ objects: [ManagedObject], at index: Int, into relationship: RelationshipDescription) throws {
        guard relationship.isToMany && relationship.isOrdered else {
            throw MigrationError(
                .invalidArgument,
                "'\(entity.name).\(relationship.name)' is not an ordered to-many relationship; add to it instead")
        }
        var members = try value(for: relationship).elements.compactMap { $0.object }
        members.removeAll { member in objects.contains { $0.isSameInstance(as: member) } }
        members.insert(contentsOf: objects, at: min(max(index, 0), members.count))
        try setValue(.collection(members.map { .object($0) }), for: relationship)
    }

    /// The same row of the same store (or, for free-standing instances, the same object).
    func isSameInstance(as other: ManagedObject) -> Bool {
        self === other
            || (storeReference != nil && storeReference === other.storeReference && objectID == other.objectID)
    }

    /// Removes instances from a to-many.
    public func remove(_ objects: [ManagedObject], from relationship: RelationshipDescription) throws {
        guard relationship.isToMany else {
            throw MigrationError(
                .invalidArgument,
                "'\(entity.name).\(relationship.name)' is a to-one relationship; set it to nil instead")
        }
        if let context = context { return try context.removeFromRelationship(of: self, relationship, objects) }
        try checkFreeStanding(relationship)
        let removed = Set(objects.map { ObjectIdentifier($0) })
        relationshipValues[relationship.index] = .collection(
            relationshipValues[relationship.index].elements.filter {
                guard let o = $0.object else { return true }
                return !removed.contains(ObjectIdentifier(o))
            })
    }

    /// A relationship of another entity, or an instance whose store is gone (its relationships
    /// lived only there), is an error rather than an out-of-range index.
    private func checkFreeStanding(_ relationship: RelationshipDescription) throws {
        guard relationship.index < relationshipValues.count, entity.relationships[relationship.index] === relationship
        else {
            if relationshipValues.isEmpty && !entity.relationships.isEmpty {
                throw MigrationError(
                    .invalidArgument,
                    "instance \(objectID.uriRepresentation): its store was released, so relationship '\(relationship.name)' cannot be read or written"
                )
            }
            throw MigrationError(
                .invalidArgument, "'\(relationship.name)' is not a relationship of entity '\(entity.name)'")
        }
    }

    /// `dictionaryWithValuesForKeys:` over all attributes (or the keys given).
    public func attributeDictionary(keys: [String]? = nil) throws -> [(key: String, value: Value)] {
        if let keys = keys { return try keys.map { ($0, try value(forKey: $0)) } }
        if isFault { try fireFault() }
        return entity.attributes.map { ($0.name, attributeValues[$0.index]) }
    }

    /// `setValuesForKeysWithDictionary:` for attributes, skipping keys the entity does not have (and,
    /// when `skippingNil`, nil values), as policies that copy "every attribute" generically need.
    /// Returns the keys that were set.
    @discardableResult
    public func setAttributeValues(_ values: [(key: String, value: Value)], skippingNil: Bool = false) throws
        -> [String]
    {
        var set: [String] = []
        for (key, value) in values {
            guard let attribute = entity.attributesByName[key], !(skippingNil && value.isNull) else { continue }
            try setValue(value, for: attribute)
            set.append(key)
        }
        return set
    }

    /// The entity, the object ID and the attribute values, for messages.
    public var description: String {
        if isFault { return "<\(entity.name) \(objectID.uriRepresentation)> (fault)" }
        let values = entity.attributes.map { "\($0.name) = \(attributeValues[$0.index])" }.joined(separator: "; ")
        return "<\(entity.name) \(objectID.uriRepresentation)> { \(values) }"
    }
}

/// What a store does for the instances that belong to it.
package protocol ObjectContext: AnyObject {
    /// Fills a fault's attribute values from its row.
    func fulfillFault(_ object: ManagedObject) throws
    func relationshipValue(of object: ManagedObject, _ relationship: RelationshipDescription) throws -> Value
    func attributeDidChange(of object: ManagedObject, _ attribute: AttributeDescription) throws
    func setRelationship(of object: ManagedObject, _ relationship: RelationshipDescription, to targets: [ManagedObject])
        throws
    func addToRelationship(
        of object: ManagedObject, _ relationship: RelationshipDescription, _ targets: [ManagedObject]) throws
    func removeFromRelationship(
        of object: ManagedObject, _ relationship: RelationshipDescription, _ targets: [ManagedObject]) throws
}

enum RelationshipValue {
    /// Checks instances given for a relationship (`instances(in:for:of:)` on instances already
    /// unwrapped): each must be of the relationship's destination entity.
    static func check(
        _ objects: [ManagedObject], for relationship: RelationshipDescription, of entity: EntityDescription
    )
        throws
    {
        if let destination = relationship.destinationEntity {
            for object in objects where !object.entity.isKind(of: destination) {
                throw MigrationError(
                    .invalidArgument,
                    "relationship '\(entity.name).\(relationship.name)' takes '\(destination.name)' instances, not '\(object.entity.name)'"
                )
            }
        }
        if !relationship.isToMany && objects.count > 1 {
            throw MigrationError(
                .invalidArgument,
                "to-one relationship '\(entity.name).\(relationship.name)' cannot take \(objects.count) instances")
        }
    }

    /// The instances a relationship value holds, checked against the relationship's destination.
    static func instances(in value: Value, for relationship: RelationshipDescription, of entity: EntityDescription)
        throws -> [ManagedObject]
    {
        var objects: [ManagedObject] = []
        for element in value.elements {
            guard let object = element.object else {
                throw MigrationError(
                    .invalidArgument,
                    "relationship '\(entity.name).\(relationship.name)' takes instances, not a \(element.typeName) value"
                )
            }
            if let destination = relationship.destinationEntity, !object.entity.isKind(of: destination) {
                throw MigrationError(
                    .invalidArgument,
                    "relationship '\(entity.name).\(relationship.name)' takes '\(destination.name)' instances, not '\(object.entity.name)'"
                )
            }
            objects.append(object)
        }
        if !relationship.isToMany && objects.count > 1 {
            throw MigrationError(
                .invalidArgument,
                "to-one relationship '\(entity.name).\(relationship.name)' cannot take \(objects.count) instances")
        }
        return objects
    }
}
