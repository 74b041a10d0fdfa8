/// What attributes and relationships share (NSPropertyDescription).
public class PropertyDescription {
    public let name: String
    public internal(set) var isOptional: Bool
    public internal(set) var isTransient: Bool
    public internal(set) var renamingIdentifier: String?
    public internal(set) var versionHashModifier: String?
    public internal(set) var userInfo: [String: String]
    /// The entity that declares the property (for an inherited one, the ancestor).
    public internal(set) weak var entity: EntityDescription?
    /// SHA-256 of the property's structure (see `VersionHash`), or the explicit hash from the JSON.
    public internal(set) var versionHash: [UInt8] = []
    var explicitVersionHash: [UInt8]?

    init(name: String, isOptional: Bool, isTransient: Bool, renamingIdentifier: String?, versionHashModifier: String?, userInfo: [String: String]) {
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
    public internal(set) var attributeType: AttributeType
    /// `.null` when there is none.
    public internal(set) var defaultValue: Value
    /// Optional bounds (Core Data's min/max value validation); integer types are always bounded by their size.
    public internal(set) var minValue: Double?
    public internal(set) var maxValue: Double?
    /// For a transformable attribute: the NSValueTransformer's name (kept, never applied).
    public internal(set) var valueTransformerName: String? = nil
    /// Whether Core Data may keep large values in files beside the store (NSAttributeDescription.allowsExternalBinaryDataStorage).
    public internal(set) var allowsExternalBinaryDataStorage = false
    /// Position in `entity.attributes` of every entity that has it (inherited attributes come first,
    /// so the index is the same in the declaring entity and in all its subentities).
    public internal(set) var index: Int = 0

    public init(name: String, type: AttributeType, isOptional: Bool = true, isTransient: Bool = false, defaultValue: Value = .null,
                minValue: Double? = nil, maxValue: Double? = nil,
                renamingIdentifier: String? = nil, versionHashModifier: String? = nil, userInfo: [String: String] = [:]) {
        self.attributeType = type
        self.defaultValue = defaultValue
        self.minValue = minValue
        self.maxValue = maxValue
        super.init(name: name, isOptional: isOptional, isTransient: isTransient, renamingIdentifier: renamingIdentifier,
                   versionHashModifier: versionHashModifier, userInfo: userInfo)
    }
}

/// NSDeleteRule.
public enum DeleteRule: String, CaseIterable {
    case noAction, nullify, cascade, deny
}

/// NSRelationshipDescription.
public final class RelationshipDescription: PropertyDescription {
    public let destinationEntityName: String
    public let inverseName: String?
    public internal(set) weak var destinationEntity: EntityDescription?
    public internal(set) weak var inverseRelationship: RelationshipDescription?
    public internal(set) var isToMany: Bool
    public internal(set) var isOrdered: Bool
    public internal(set) var deleteRule: DeleteRule
    /// 0 means no minimum.
    public internal(set) var minCount: Int
    /// 0 means no maximum (Core Data's convention); a to-one has 1.
    public internal(set) var maxCount: Int
    /// Position in `entity.relationships` (inherited first, as for attributes).
    public internal(set) var index: Int = 0

    public init(name: String, destination: String, inverse: String?, isToMany: Bool, isOrdered: Bool = false,
                deleteRule: DeleteRule = .nullify, minCount: Int = 0, maxCount: Int? = nil, isOptional: Bool = true,
                isTransient: Bool = false, renamingIdentifier: String? = nil, versionHashModifier: String? = nil,
                userInfo: [String: String] = [:]) {
        self.destinationEntityName = destination
        self.inverseName = inverse
        self.isToMany = isToMany
        self.isOrdered = isOrdered
        self.deleteRule = deleteRule
        self.minCount = minCount
        self.maxCount = maxCount ?? (isToMany ? 0 : 1)
        super.init(name: name, isOptional: isOptional, isTransient: isTransient, renamingIdentifier: renamingIdentifier,
                   versionHashModifier: versionHashModifier, userInfo: userInfo)
    }

    public var isManyToMany: Bool { isToMany && (inverseRelationship?.isToMany ?? false) }
}
