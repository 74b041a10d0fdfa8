/// NSEntityDescription: an entity with its own and inherited properties.
public final class EntityDescription {
    /// The entity's name (Core Data: `name`).
    public let name: String
    /// Whether the entity has no instances of its own (Core Data: `isAbstract`).
    public internal(set) var isAbstract: Bool
    /// The parent entity's name, nil for a root entity.
    public let parentName: String?
    /// The parent entity (Core Data: `superentity`); nil once the model has gone away.
    public internal(set) var parent: EntityDescription? {
        get { modelReference?.owner == nil ? nil : linkedParent }
        set { linkedParent = newValue }
    }
    /// The model the entity belongs to (Core Data: `managedObjectModel`); nil before it is given
    /// to a model and once the model has gone away.
    public var model: ManagedObjectModel? { modelReference?.owner }
    /// How the entity reaches its model: set when a model links it (`belong(to:)`).
    private(set) var modelReference: ModelReference?
    /// The parent, kept alive by the model (read through `parent`, which checks the model is alive).
    private unowned(unsafe) var linkedParent: EntityDescription?
    /// The entity's former name for inferred mappings (Core Data: `renamingIdentifier`).
    public internal(set) var renamingIdentifier: String?
    /// Text mixed into the version hash to force a new one (Core Data: `versionHashModifier`).
    public internal(set) var versionHashModifier: String?
    /// The entity's user info (Core Data: `userInfo`).
    public internal(set) var userInfo: [String: String]
    /// NSEntityDescription.managedObjectClassName (Xcode's `representedClassName`); not part of the hash.
    public internal(set) var managedObjectClassName: String?
    /// NSEntityDescription.uniquenessConstraints: each constraint is a list of property names
    /// (the entity's own constraints, as declared). Part of the version hash.
    public internal(set) var uniquenessConstraints: [[String]] = []
    /// NSEntityDescription.indexes: the entity's own fetch indexes, as declared (not part of the hash).
    public internal(set) var fetchIndexes: [FetchIndexDescription] = []

    /// Properties declared by this entity itself.
    public internal(set) var ownAttributes: [AttributeDescription]
    /// The relationships the entity declares itself, without inherited ones.
    public internal(set) var ownRelationships: [RelationshipDescription]

    /// All attributes and relationships, inherited ones first (filled in when the model links).
    public internal(set) var attributes: [AttributeDescription] = []
    /// All relationships, inherited ones first (Core Data: `relationshipsByName.values`).
    public internal(set) var relationships: [RelationshipDescription] = []
    /// All attributes by name (Core Data: `attributesByName`).
    public internal(set) var attributesByName: [String: AttributeDescription] = [:]
    /// All relationships by name (Core Data: `relationshipsByName`).
    public internal(set) var relationshipsByName: [String: RelationshipDescription] = [:]

    /// The store's entity number (`Z_ENT`): depth-first over the hierarchy, roots alphabetically,
    /// as Core Data numbers them.
    public internal(set) var entityNumber: Int = 0
    /// Apple's version hash of the entity (`NSStoreModelVersionHashes`), or the explicit hash the model file wrote.
    public internal(set) var versionHash: [UInt8] = []
    var explicitVersionHash: [UInt8]?
    /// The direct subentities, kept alive by the model (read through `subentities`).
    var subentityList: [Unowned<EntityDescription>] = []

    /// An entity made in code; linked when given to `ManagedObjectModel.init`.
    ///
    /// - parameter name: The entity's name.
    /// - parameter parent: The parent entity's name.
    /// - parameter isAbstract: Whether it has no instances of its own.
    /// - parameter attributes: The attributes it declares.
    /// - parameter relationships: The relationships it declares.
    /// - parameter renamingIdentifier: The name it had in the previous version (Xcode's
    ///   renaming identifier), for inferred mappings.
    /// - parameter versionHashModifier: Text that changes its version hash without another change.
    /// - parameter userInfo: The model's user info for it.
    ///
    /// Core Data: `NSEntityDescription()` with these properties set.
    public init(
        name: String, parent: String? = nil, isAbstract: Bool = false, attributes: [AttributeDescription] = [],
        relationships: [RelationshipDescription] = [], renamingIdentifier: String? = nil,
        versionHashModifier: String? = nil, userInfo: [String: String] = [:]
    ) {
        self.name = name
        self.parentName = parent
        self.isAbstract = isAbstract
        self.ownAttributes = attributes
        self.ownRelationships = relationships
        self.renamingIdentifier = renamingIdentifier
        self.versionHashModifier = versionHashModifier
        self.userInfo = userInfo
    }

    /// Direct subentities, alphabetically; none once the model has gone away.
    public var subentities: [EntityDescription] {
        modelReference?.owner == nil ? [] : subentityList.map { $0.value }
    }

    /// Makes the entity and the properties it declares reach `reference`'s model.
    func belong(to reference: ModelReference) {
        modelReference = reference
        for attribute in ownAttributes { attribute.modelReference = reference }
        for relationship in ownRelationships { relationship.modelReference = reference }
    }

    /// The entity and all its descendants, depth-first.
    public var selfAndDescendants: [EntityDescription] {
        var result = [self]
        for sub in subentities { result += sub.selfAndDescendants }
        return result
    }

    /// The top of the inheritance hierarchy (whose table stores this entity's rows).
    public var rootEntity: EntityDescription {
        var entity = self
        while let parent = entity.parent { entity = parent }
        return entity
    }

    /// Whether this entity is `other` or inherits from it.
    public func isKind(of other: EntityDescription) -> Bool {
        if self === other { return true }
        var entity = parent
        while let e = entity {
            if e === other { return true }
            entity = e.parent
        }
        return false
    }

    /// The attribute called `name`, own or inherited, or nil.
    public func attribute(named name: String) -> AttributeDescription? { attributesByName[name] }
    /// The relationship called `name`, own or inherited, or nil.
    public func relationship(named name: String) -> RelationshipDescription? { relationshipsByName[name] }
    /// The attribute or relationship called `name`, or nil (Core Data: `propertiesByName[name]`).
    public func property(named name: String) -> PropertyDescription? {
        attributesByName[name] ?? relationshipsByName[name]
    }
}
