/// What attributes and relationships share (NSPropertyDescription).
public class PropertyDescription {
    /// The property's name (Core Data: `name`).
    public let name: String
    /// Whether the property may be nil (Core Data: `isOptional`).
    public internal(set) var isOptional: Bool
    /// Whether the property is not stored (Core Data: `isTransient`).
    public internal(set) var isTransient: Bool
    /// The property's former name for inferred mappings (Core Data: `renamingIdentifier`).
    public internal(set) var renamingIdentifier: String?
    /// Text mixed into the version hash (Core Data: `versionHashModifier`).
    public internal(set) var versionHashModifier: String?
    /// The property's user info (Core Data: `userInfo`).
    public internal(set) var userInfo: [String: String]
    /// Whether the store keeps an index on the property's column (Core Data: `isIndexed`, Xcode's
    /// `indexed="YES"`); Core Data creates `<TABLE>_<COLUMN>_INDEX` and the fetch index
    /// `Z_<Entity>_<name>` for it. Not part of the version hash.
    public internal(set) var isIndexed: Bool = false
    /// The entity that declares the property (for an inherited one, the ancestor); nil once the
    /// model has gone away.
    public internal(set) var entity: EntityDescription? {
        get { modelReference?.owner == nil ? nil : linkedEntity }
        set { linkedEntity = newValue }
    }
    /// How the property reaches its model (`EntityDescription.belong(to:)`).
    var modelReference: ModelReference?
    /// The declaring entity, kept alive by the model (read through `entity`).
    private unowned(unsafe) var linkedEntity: EntityDescription?
    /// Apple's version hash of the property (see `VersionHash`), or the explicit hash the model file wrote.
    public internal(set) var versionHash: [UInt8] = []
    var explicitVersionHash: [UInt8]?

    init(
        name: String, isOptional: Bool, isTransient: Bool, renamingIdentifier: String?, versionHashModifier: String?,
        userInfo: [String: String]
    ) {
        self.name = name
        self.isOptional = isOptional
        self.isTransient = isTransient
        self.renamingIdentifier = renamingIdentifier
        self.versionHashModifier = versionHashModifier
        self.userInfo = userInfo
    }
}

/// NSAttributeDescription.
public final class AttributeDescription: PropertyDescription {
    /// The attribute's type (Core Data: `attributeType`).
    public internal(set) var attributeType: AttributeType
    /// `.null` when there is none.
    public internal(set) var defaultValue: Value
    /// Optional bounds (Core Data's min/max value validation); integer types are always bounded by their size.
    public internal(set) var minValue: Double?
    /// The upper bound, nil for none (Core Data: the attribute's maximum value predicate).
    public internal(set) var maxValue: Double?
    /// Whether large values may live outside the store (NSAttributeDescription.allowsExternalBinaryDataStorage);
    /// part of the version hash.
    public internal(set) var allowsExternalBinaryDataStorage: Bool = false
    /// Whether persistent history keeps the value of a deleted object (preservesValueInHistoryOnDeletion);
    /// part of the version hash.
    public internal(set) var preservesValueInHistoryOnDeletion: Bool = false
    /// NSAttributeDescription.valueTransformerName (for transformable attributes); not part of the hash.
    public internal(set) var valueTransformerName: String?
    /// For a derived attribute (NSDerivedAttributeDescription), the derivation expression as written in
    /// the model, and its filtering predicate. cdmigrate does not recompute derived values.
    public internal(set) var derivationExpression: String?
    /// The derived attribute's filtering predicate as written, if any.
    public internal(set) var filteringPredicate: String?
    /// Position in `entity.attributes` of every entity that has it (inherited attributes come first,
    /// so the index is the same in the declaring entity and in all its subentities).
    public internal(set) var index: Int = 0

    /// An attribute made in code, for `EntityDescription.init`.
    ///
    /// - parameter name: The attribute's name.
    /// - parameter type: Its type.
    /// - parameter isOptional: Whether it may be nil.
    /// - parameter isTransient: Whether it is not stored.
    /// - parameter defaultValue: Its default value, `.null` for none.
    /// - parameter minValue: Its lower bound, if any.
    /// - parameter maxValue: Its upper bound, if any.
    /// - parameter renamingIdentifier: The name it had in the previous version (Xcode's
    ///   renaming identifier), for inferred mappings.
    /// - parameter versionHashModifier: Text that changes its version hash without another change.
    /// - parameter userInfo: The model's user info for it.
    ///
    /// Core Data: `NSAttributeDescription()` with these properties set.
    public init(
        name: String, type: AttributeType, isOptional: Bool = true, isTransient: Bool = false,
        defaultValue: Value = .null,
        minValue: Double? = nil, maxValue: Double? = nil,
        renamingIdentifier: String? = nil, versionHashModifier: String? = nil, userInfo: [String: String] = [:]
    ) {
        self.attributeType = type
        self.defaultValue = defaultValue
        self.minValue = minValue
        self.maxValue = maxValue
        super.init(
            name: name, isOptional: isOptional, isTransient: isTransient, renamingIdentifier: renamingIdentifier,
            versionHashModifier: versionHashModifier, userInfo: userInfo)
    }
}

/// NSDeleteRule.
public enum DeleteRule: String, CaseIterable {
    case noAction, nullify, cascade, deny
}

/// NSRelationshipDescription.
public final class RelationshipDescription: PropertyDescription {
    /// The destination entity's name.
    public let destinationEntityName: String
    /// The inverse relationship's name, nil when there is none.
    public let inverseName: String?
    /// The destination entity (Core Data: `destinationEntity`); nil once the model has gone away.
    public internal(set) var destinationEntity: EntityDescription? {
        get { modelReference?.owner == nil ? nil : linkedDestination }
        set { linkedDestination = newValue }
    }
    /// The inverse relationship (Core Data: `inverseRelationship`); nil once the model has gone away.
    public internal(set) var inverseRelationship: RelationshipDescription? {
        get { modelReference?.owner == nil ? nil : linkedInverse }
        set { linkedInverse = newValue }
    }
    /// The destination and the inverse, kept alive by the model (read through the two above).
    private unowned(unsafe) var linkedDestination: EntityDescription?
    private unowned(unsafe) var linkedInverse: RelationshipDescription?
    /// Whether the relationship holds several instances (Core Data: `isToMany`).
    public internal(set) var isToMany: Bool
    /// Whether a to-many relationship keeps an order (Core Data: `isOrdered`).
    public internal(set) var isOrdered: Bool
    /// What deleting the source does to the destinations (Core Data: `deleteRule`).
    public internal(set) var deleteRule: DeleteRule
    /// 0 means no minimum.
    public internal(set) var minCount: Int
    /// 0 means no maximum (Core Data's convention); a to-one has 1.
    public internal(set) var maxCount: Int
    /// Position in `entity.relationships` (inherited first, as for attributes).
    public internal(set) var index: Int = 0

    /// A relationship made in code, for `EntityDescription.init`.
    ///
    /// - parameter name: The relationship's name.
    /// - parameter destination: The destination entity's name.
    /// - parameter inverse: The inverse relationship's name (Core Data wants one).
    /// - parameter isToMany: Whether it holds several instances.
    /// - parameter isOrdered: Whether a to-many keeps an order.
    /// - parameter deleteRule: What deleting the source does to the destinations.
    /// - parameter minCount: The fewest instances allowed.
    /// - parameter maxCount: The most instances allowed (nil: 1 for a to-one, no maximum for a to-many).
    /// - parameter isOptional: Whether it may be empty.
    /// - parameter isTransient: Whether it is not stored.
    /// - parameter renamingIdentifier: The name it had in the previous version (Xcode's
    ///   renaming identifier), for inferred mappings.
    /// - parameter versionHashModifier: Text that changes its version hash without another change.
    /// - parameter userInfo: The model's user info for it.
    ///
    /// Core Data: `NSRelationshipDescription()` with these properties set.
    public init(
        name: String, destination: String, inverse: String?, isToMany: Bool, isOrdered: Bool = false,
        deleteRule: DeleteRule = .nullify, minCount: Int = 0, maxCount: Int? = nil, isOptional: Bool = true,
        isTransient: Bool = false, renamingIdentifier: String? = nil, versionHashModifier: String? = nil,
        userInfo: [String: String] = [:]
    ) {
        self.destinationEntityName = destination
        self.inverseName = inverse
        self.isToMany = isToMany
        self.isOrdered = isOrdered
        self.deleteRule = deleteRule
        self.minCount = minCount
        self.maxCount = maxCount ?? (isToMany ? 0 : 1)
        super.init(
            name: name, isOptional: isOptional, isTransient: isTransient, renamingIdentifier: renamingIdentifier,
            versionHashModifier: versionHashModifier, userInfo: userInfo)
    }

    /// Whether the relationship and its inverse are both to-many (stored in a join table).
    public var isManyToMany: Bool { isToMany && (inverseRelationship?.isToMany ?? false) }
}
