/// NSEntityMapping: how instances of one source entity become instances of a destination entity.
public final class EntityMapping {
    /// The entity mapping's name, unique in its mapping model (`SourceToDestination` by default; Core Data: `name`).
    public let name: String
    /// Add, remove, copy, transform, custom or undefined (Core Data: `mappingType`).
    public let mappingType: EntityMappingType
    /// The source entity, nil for an add mapping (Core Data: `sourceEntityName`).
    public let sourceEntityName: String?
    /// The destination entity, nil for a remove mapping (Core Data: `destinationEntityName`).
    public let destinationEntityName: String?
    /// The source expression as written (Xcode's FETCH form or a plain predicate); nil means no source instances.
    public let sourceExpressionText: String?
    /// The source expression parsed: entity and predicate (Core Data: `sourceExpression`).
    public let sourceExpression: SourceExpression?
    /// How each destination attribute gets its value (Core Data: `attributeMappings`); a policy may
    /// change their value expressions while the mapping runs (see `PropertyMapping`).
    public let attributeMappings: [PropertyMapping]
    /// How each destination relationship gets its instances (Core Data: `relationshipMappings`).
    public let relationshipMappings: [PropertyMapping]
    /// The custom policy's name (Core Data's entityMigrationPolicyClassName).
    public let entityMigrationPolicyClassName: String?
    /// The entity mapping's user info (Core Data: `userInfo`): values for policies and value expressions (`$entityMapping.userInfo.key`), each of the type it was written as.
    public let userInfo: [String: Value]
    /// The version hashes of the entities the mapping was written for, when recorded.
    public let sourceEntityVersionHash: [UInt8]?
    /// The destination entity's version hash when the mapping was written (Core Data: `destinationEntityVersionHash`).
    public let destinationEntityVersionHash: [UInt8]?
    /// The entities' properties when the mapping was written (name → type, or "→Entity" / "→*Entity"
    /// for relationships), so a hash mismatch can say what changed.
    public let sourceEntitySnapshot: [String: String]?
    /// The destination entity's properties when the mapping was written.
    public let destinationEntitySnapshot: [String: String]?
    /// Where the mapping stands in the mapping JSON.
    public let path: String

    /// The entities of the models the mapping was checked against: set only on the bound copy
    /// `MappingModel.validate(sourceModel:destinationModel:)` returns, nil on a mapping as read.
    public let sourceEntity: EntityDescription?
    /// The destination entity of the model the mapping was checked against (bound copies only).
    public let destinationEntity: EntityDescription?

    init(
        name: String, mappingType: EntityMappingType, sourceEntityName: String?, destinationEntityName: String?,
        sourceExpressionText: String?, sourceExpression: SourceExpression?, attributeMappings: [PropertyMapping],
        relationshipMappings: [PropertyMapping], entityMigrationPolicyClassName: String?, userInfo: [String: Value],
        sourceEntityVersionHash: [UInt8]?, destinationEntityVersionHash: [UInt8]?,
        sourceEntitySnapshot: [String: String]?, destinationEntitySnapshot: [String: String]?, path: String,
        sourceEntity: EntityDescription? = nil, destinationEntity: EntityDescription? = nil
    ) {
        self.name = name
        self.mappingType = mappingType
        self.sourceEntityName = sourceEntityName
        self.destinationEntityName = destinationEntityName
        self.sourceExpressionText = sourceExpressionText
        self.sourceExpression = sourceExpression
        self.attributeMappings = attributeMappings
        self.relationshipMappings = relationshipMappings
        self.entityMigrationPolicyClassName = entityMigrationPolicyClassName
        self.userInfo = userInfo
        self.sourceEntityVersionHash = sourceEntityVersionHash
        self.destinationEntityVersionHash = destinationEntityVersionHash
        self.sourceEntitySnapshot = sourceEntitySnapshot
        self.destinationEntitySnapshot = destinationEntitySnapshot
        self.path = path
        self.sourceEntity = sourceEntity
        self.destinationEntity = destinationEntity
    }

    /// A copy bound to the given entities of a source and a destination model (the original stays
    /// as it is), with its own property mappings, whose expressions a policy may change.
    func binding(sourceEntity: EntityDescription?, destinationEntity: EntityDescription?) -> EntityMapping {
        copy(userInfo: userInfo, sourceEntity: sourceEntity, destinationEntity: destinationEntity)
    }

    /// A copy with its own property mappings, the given user info and bound entities.
    func copy(userInfo: [String: Value], sourceEntity: EntityDescription?, destinationEntity: EntityDescription?)
        -> EntityMapping
    {
        EntityMapping(
            name: name, mappingType: mappingType, sourceEntityName: sourceEntityName,
            destinationEntityName: destinationEntityName,
            sourceExpressionText: sourceExpressionText, sourceExpression: sourceExpression,
            attributeMappings: attributeMappings.map { $0.copy() },
            relationshipMappings: relationshipMappings.map { $0.copy() },
            entityMigrationPolicyClassName: entityMigrationPolicyClassName, userInfo: userInfo,
            sourceEntityVersionHash: sourceEntityVersionHash,
            destinationEntityVersionHash: destinationEntityVersionHash,
            sourceEntitySnapshot: sourceEntitySnapshot, destinationEntitySnapshot: destinationEntitySnapshot,
            path: path,
            sourceEntity: sourceEntity, destinationEntity: destinationEntity)
    }

    /// The attribute mapping for destination attribute `name`, or nil.
    public func attributeMapping(named name: String) -> PropertyMapping? { attributeMappings.first { $0.name == name } }
    /// The relationship mapping for destination relationship `name`, or nil.
    public func relationshipMapping(named name: String) -> PropertyMapping? {
        relationshipMappings.first { $0.name == name }
    }

    /// The property snapshot format written into mappings: attribute → type name, relationship → "→Dest" or "→*Dest".
    package static func snapshot(of entity: EntityDescription) -> [String: String] {
        var snapshot: [String: String] = [:]
        for a in entity.attributes { snapshot[a.name] = a.attributeType.rawValue }
        for r in entity.relationships { snapshot[r.name] = (r.isToMany ? "→*" : "→") + r.destinationEntityName }
        return snapshot
    }
}
