/// Writes a data model as the JSON `ModelReader` reads (docs/model-format.md), so that a model read
/// from Xcode's files (`.xcdatamodel`, `.xcdatamodeld`, `.mom`, `.momd`) can be kept, edited and
/// read back as JSON.
extension ManagedObjectModel {
    /// The model as a JSON value: entities in the model's order, each with its own attributes and
    /// relationships in declaration order, every key `ModelReader` reads that differs from its
    /// default, and each entity's version hash (base64, as stores record it), so that the JSON
    /// carries Apple's hashes even where the JSON form cannot say everything the source said.
    ///
    /// Not written: what `ModelReader` does not read — configurations, fetch request templates.
    ///
    /// Core Data counterpart: none (Xcode writes `.xcdatamodel` XML).
    package func jsonValue() -> JSON {
        var members: [(key: String, value: JSON)] = []
        if let name = name { members.append(("name", .string(name))) }
        if let identifier = versionIdentifier { members.append(("versionIdentifier", .string(identifier))) }
        members.append(("entities", .array(entities.map(ManagedObjectModel.jsonValue(of:)))))
        return .object(members)
    }

    /// The model as JSON text, indented by `indent` spaces (0: compact).
    ///
    /// - Parameter indent: spaces per level; 0 writes everything on one line.
    /// - Returns: text that `ManagedObjectModel(json:)` reads back into a model with the same
    ///   entities, properties and version hashes.
    public func jsonText(indent: Int = 2) -> String { jsonValue().serialized(indent: indent) }

    static func jsonValue(of entity: EntityDescription) -> JSON {
        var members: [(key: String, value: JSON)] = [("name", .string(entity.name))]
        if let parent = entity.parentName { members.append(("parent", .string(parent))) }
        if entity.isAbstract { members.append(("abstract", .bool(true))) }
        if let className = entity.managedObjectClassName { members.append(("className", .string(className))) }
        if let identifier = entity.renamingIdentifier { members.append(("renamingIdentifier", .string(identifier))) }
        if let modifier = entity.versionHashModifier { members.append(("versionHashModifier", .string(modifier))) }
        if !entity.userInfo.isEmpty { members.append(("userInfo", stringObject(entity.userInfo))) }
        if !entity.uniquenessConstraints.isEmpty {
            members.append(
                ("uniquenessConstraints", .array(entity.uniquenessConstraints.map { .array($0.map(JSON.string)) })))
        }
        if !entity.fetchIndexes.isEmpty {
            members.append(("fetchIndexes", .array(entity.fetchIndexes.map(jsonValue(of:)))))
        }
        if !entity.ownAttributes.isEmpty {
            members.append(("attributes", .array(entity.ownAttributes.map(jsonValue(of:)))))
        }
        if !entity.ownRelationships.isEmpty {
            members.append(("relationships", .array(entity.ownRelationships.map(jsonValue(of:)))))
        }
        if !entity.versionHash.isEmpty { members.append(("versionHash", .string(Base64.encode(entity.versionHash)))) }
        return .object(members)
    }

    static func jsonValue(of index: FetchIndexDescription) -> JSON {
        let elements = index.elements.map { element -> JSON in
            var members: [(key: String, value: JSON)] = []
            if let property = element.propertyName { members.append(("property", .string(property))) }
            if let expression = element.expression { members.append(("expression", .string(expression))) }
            if element.type != .binary { members.append(("type", .string(element.type.rawValue))) }
            if !element.isAscending { members.append(("ascending", .bool(false))) }
            return .object(members)
        }
        var members: [(key: String, value: JSON)] = [("name", .string(index.name)), ("elements", .array(elements))]
        if let predicate = index.partialIndexPredicate { members.append(("partialIndexPredicate", .string(predicate))) }
        return .object(members)
    }

    static func jsonValue(of attribute: AttributeDescription) -> JSON {
        var members: [(key: String, value: JSON)] = [
            ("name", .string(attribute.name)), ("type", .string(attribute.attributeType.rawValue)),
        ]
        if !attribute.isOptional { members.append(("optional", .bool(false))) }
        if attribute.isTransient { members.append(("transient", .bool(true))) }
        if let value = defaultJSON(attribute.defaultValue) { members.append(("default", value)) }
        if let min = attribute.minValue { members.append(("minValue", number(min))) }
        if let max = attribute.maxValue { members.append(("maxValue", number(max))) }
        if attribute.allowsExternalBinaryDataStorage {
            members.append(("allowsExternalBinaryDataStorage", .bool(true)))
        }
        if attribute.preservesValueInHistoryOnDeletion {
            members.append(("preservesValueInHistoryOnDeletion", .bool(true)))
        }
        if let transformer = attribute.valueTransformerName {
            members.append(("valueTransformerName", .string(transformer)))
        }
        if let derivation = attribute.derivationExpression {
            members.append(("derivationExpression", .string(derivation)))
        }
        if let filter = attribute.filteringPredicate { members.append(("filteringPredicate", .string(filter))) }
        appendCommon(attribute, to: &members)
        return .object(members)
    }

    static func jsonValue(of relationship: RelationshipDescription) -> JSON {
        var members: [(key: String, value: JSON)] = [
            ("name", .string(relationship.name)), ("destination", .string(relationship.destinationEntityName)),
        ]
        if let inverse = relationship.inverseName { members.append(("inverse", .string(inverse))) }
        if relationship.isToMany { members.append(("toMany", .bool(true))) }
        if relationship.isOrdered { members.append(("ordered", .bool(true))) }
        if relationship.deleteRule != .nullify {
            members.append(("deleteRule", .string(relationship.deleteRule.rawValue)))
        }
        if relationship.minCount != 0 { members.append(("minCount", .integer(Int64(relationship.minCount)))) }
        if relationship.isToMany && relationship.maxCount != 0 {
            members.append(("maxCount", .integer(Int64(relationship.maxCount))))
        }
        if !relationship.isOptional { members.append(("optional", .bool(false))) }
        if relationship.isTransient { members.append(("transient", .bool(true))) }
        appendCommon(relationship, to: &members)
        return .object(members)
    }

    private static func appendCommon(_ property: PropertyDescription, to members: inout [(key: String, value: JSON)]) {
        if property.isIndexed { members.append(("indexed", .bool(true))) }
        if let identifier = property.renamingIdentifier { members.append(("renamingIdentifier", .string(identifier))) }
        if let modifier = property.versionHashModifier { members.append(("versionHashModifier", .string(modifier))) }
        if !property.userInfo.isEmpty { members.append(("userInfo", stringObject(property.userInfo))) }
    }

    /// A default value in the JSON form `ModelReader.convertDefault` reads for the attribute's type.
    static func defaultJSON(_ value: Value) -> JSON? {
        switch value {
        case .null, .object, .collection, .dictionary, .migrationManager: return nil
        case .bool(let b): return .bool(b)
        case .integer(let i): return .integer(i)
        case .double(let d): return d.isFinite ? .double(d) : nil
        case .decimal(let s): return .string(s)
        case .string(let s): return .string(s)
        case .date(let d): return d.isFinite ? .double(d) : nil
        case .binary(let bytes): return .string(Base64.encode(bytes))
        case .uuid(let bytes): return .string(Value.uuidString(bytes))
        case .uri(let s): return .string(s)
        }
    }

    /// Integral numbers as JSON integers, others as reals.
    private static func number(_ d: Double) -> JSON {
        if d.isFinite, d == d.rounded(), abs(d) < 9e15 { return .integer(Int64(d)) }
        return .double(d)
    }

    private static func stringObject(_ values: [String: String]) -> JSON {
        .object(values.sorted { $0.key < $1.key }.map { (key: $0.key, value: JSON.string($0.value)) })
    }
}
