/// Writes a mapping model as the JSON `MappingModel(json: _:)` reads (docs/mapping-format.md),
/// so that a mapping made in code — an inferred one, say — can be saved, edited and read back.
extension MappingModel {
    /// The mapping model as a JSON value: entity mappings in order, property mappings as arrays of
    /// `{"name", "valueExpression"}` (no `valueExpression` where the destination default stays),
    /// expressions as written, version hashes as hex, recorded properties with their keys sorted.
    ///
    /// Core Data counterpart: none (Xcode writes `.xcmappingmodel` files).
    package func jsonValue() -> JSON {
        var members: [(key: String, value: JSON)] = []
        if let name = name { members.append(("name", .string(name))) }
        members.append(("entityMappings", .array(entityMappings.map { MappingModel.jsonValue(of: $0) })))
        return .object(members)
    }

    /// The mapping model as JSON text, indented by `indent` spaces (0: compact).
    ///
    /// - Parameter indent: spaces per level; 0 writes everything on one line.
    /// - Returns: text that `MappingModel(json: _:)` reads back into an equal mapping model.
    public func jsonText(indent: Int = 2) -> String { jsonValue().serialized(indent: indent) }

    static func jsonValue(of mapping: EntityMapping) -> JSON {
        var members: [(key: String, value: JSON)] = [
            ("name", .string(mapping.name)), ("type", .string(mapping.mappingType.rawValue)),
        ]
        if let s = mapping.sourceEntityName { members.append(("sourceEntity", .string(s))) }
        if let d = mapping.destinationEntityName { members.append(("destinationEntity", .string(d))) }
        if let text = mapping.sourceExpressionText { members.append(("sourceExpression", .string(text))) }
        if let policy = mapping.entityMigrationPolicyClassName { members.append(("policy", .string(policy))) }
        if !mapping.userInfo.isEmpty { members.append(("userInfo", MappingUserInfo.json(mapping.userInfo))) }
        members.append(("attributeMappings", .array(mapping.attributeMappings.map(jsonValue(of:)))))
        members.append(("relationshipMappings", .array(mapping.relationshipMappings.map(jsonValue(of:)))))
        if let hash = mapping.sourceEntityVersionHash {
            members.append(("sourceEntityVersionHash", .string(VersionHash.hex(hash))))
        }
        if let hash = mapping.destinationEntityVersionHash {
            members.append(("destinationEntityVersionHash", .string(VersionHash.hex(hash))))
        }
        if let snapshot = mapping.sourceEntitySnapshot {
            members.append(("sourceEntityProperties", stringObject(snapshot)))
        }
        if let snapshot = mapping.destinationEntitySnapshot {
            members.append(("destinationEntityProperties", stringObject(snapshot)))
        }
        return .object(members)
    }

    static func jsonValue(of property: PropertyMapping) -> JSON {
        var members: [(key: String, value: JSON)] = [("name", .string(property.name))]
        if let text = property.valueExpressionText { members.append(("valueExpression", .string(text))) }
        if !property.userInfo.isEmpty { members.append(("userInfo", MappingUserInfo.json(property.userInfo))) }
        return .object(members)
    }

    private static func stringObject(_ values: [String: String]) -> JSON {
        .object(values.sorted { $0.key < $1.key }.map { (key: $0.key, value: JSON.string($0.value)) })
    }
}
