import CDMigrate

// An entity's attributes and relationships (inherited ones first), for hosts that work
// generically over a model. Names handed out are interned: valid for the life of the process.
// Like the other model lookups, errors go only to the thread's last error (models are shared).

/// `cdm_attribute_info` of cdmigrate.h.
struct AttributeInfo {
    var name: UnsafePointer<CChar>?
    var entity: UnsafePointer<CChar>?
    var index: Int32
    var type: Int32
    var isOptional: Int32
    var isTransient: Int32
}

/// `cdm_relationship_info` of cdmigrate.h.
struct RelationshipInfo {
    var name: UnsafePointer<CChar>?
    var entity: UnsafePointer<CChar>?
    var destinationEntity: UnsafePointer<CChar>?
    var inverse: UnsafePointer<CChar>?
    var index: Int32
    var isToMany: Int32
    var isOrdered: Int32
    var isOptional: Int32
    var minCount: Int32
    var maxCount: Int32
}

private func entity(_ model: OpaquePointer?, _ name: UnsafePointer<CChar>?) throws -> EntityDescription {
    let loaded = try ModelHandle.loaded(model)
    let entityName = try CString.argument(name, "the entity name")
    guard let found = loaded.entity(named: entityName) else {
        throw MigrationError.notFound("the model has no entity named '\(entityName)'")
    }
    return found
}

private func info(_ attribute: AttributeDescription) -> AttributeInfo {
    AttributeInfo(
        name: CString.interned(attribute.name), entity: attribute.entity.map { CString.interned($0.name) },
        index: Int32(attribute.index),
        type: Int32(attribute.attributeType.coreDataCode), isOptional: attribute.isOptional ? 1 : 0,
        isTransient: attribute.isTransient ? 1 : 0)
}

private func info(_ relationship: RelationshipDescription) -> RelationshipInfo {
    RelationshipInfo(
        name: CString.interned(relationship.name), entity: relationship.entity.map { CString.interned($0.name) },
        destinationEntity: CString.interned(relationship.destinationEntityName),
        inverse: relationship.inverseName.map { CString.interned($0) }, index: Int32(relationship.index),
        isToMany: relationship.isToMany ? 1 : 0, isOrdered: relationship.isOrdered ? 1 : 0,
        isOptional: relationship.isOptional ? 1 : 0,
        minCount: Int32(clamping: relationship.minCount), maxCount: Int32(clamping: relationship.maxCount))
}

private func out<T>(_ pointer: UnsafeMutableRawPointer?, _ value: T) throws {
    guard let pointer = pointer else { throw MigrationError.misuse("the info pointer is NULL") }
    pointer.assumingMemoryBound(to: T.self).pointee = value
}

@_cdecl("cdm_model_entity_parent")
public func cdm_model_entity_parent(
    _ model: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ parent: UnsafeMutablePointer<UnsafePointer<CChar>?>?
) -> Int32 {
    guarded(nil) {
        _ = try ModelHandle.loaded(model)
        let out = try required(parent, "parent")
        out.pointee = try entity(model, name).parent.map { CString.interned($0.name) }
    }
}

/// How many attributes or relationships an entity has.
private func propertyCount(
    _ model: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ count: UnsafeMutablePointer<Int>?,
    _ properties: (EntityDescription) -> Int
) -> Int32 {
    guarded(nil) {
        _ = try ModelHandle.loaded(model)
        let out = try required(count, "count")
        out.pointee = properties(try entity(model, name))
    }
}

/// Writes the info of the attribute or relationship `pick` chooses from the entity.
private func propertyInfo<Info>(
    _ model: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ result: UnsafeMutableRawPointer?,
    _ pick: (EntityDescription) throws -> Info
) -> Int32 {
    guarded(nil) {
        _ = try ModelHandle.loaded(model)
        guard result != nil else { throw MigrationError.misuse("the info pointer is NULL") }
        try out(result, try pick(try entity(model, name)))
    }
}

/// The i-th of an entity's attributes or relationships (`kind`: "attribute", "relationship").
private func property<Property>(_ properties: [Property], _ i: Int, _ kind: String, of entity: EntityDescription) throws
    -> Property
{
    guard i >= 0, i < properties.count else {
        throw MigrationError.notFound(
            "\(kind) index \(i) is out of range: entity '\(entity.name)' has \(properties.count) \(kind)s")
    }
    return properties[i]
}

/// The attribute or relationship of an entity a C name names.
private func property<Property>(
    named key: UnsafePointer<CChar>?, _ kind: String, of entity: EntityDescription,
    _ lookup: (String) -> Property?
) throws -> Property {
    let name = try CString.argument(key, "the \(kind) name")
    guard let found = lookup(name) else {
        throw MigrationError.notFound("entity '\(entity.name)' has no \(kind) '\(name)'")
    }
    return found
}

@_cdecl("cdm_model_attribute_count")
public func cdm_model_attribute_count(
    _ model: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ count: UnsafeMutablePointer<Int>?
) -> Int32 {
    propertyCount(model, name, count) { $0.attributes.count }
}

@_cdecl("cdm_model_attribute_at")
public func cdm_model_attribute_at(
    _ model: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ i: Int, _ result: UnsafeMutableRawPointer?
) -> Int32 {
    propertyInfo(model, name, result) { e in info(try property(e.attributes, i, "attribute", of: e)) }
}

@_cdecl("cdm_model_attribute_info")
public func cdm_model_attribute_info(
    _ model: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ attribute: UnsafePointer<CChar>?,
    _ result: UnsafeMutableRawPointer?
) -> Int32 {
    propertyInfo(model, name, result) { e in
        info(try property(named: attribute, "attribute", of: e) { e.attribute(named: $0) })
    }
}

@_cdecl("cdm_model_relationship_count")
public func cdm_model_relationship_count(
    _ model: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ count: UnsafeMutablePointer<Int>?
) -> Int32 {
    propertyCount(model, name, count) { $0.relationships.count }
}

@_cdecl("cdm_model_relationship_at")
public func cdm_model_relationship_at(
    _ model: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ i: Int, _ result: UnsafeMutableRawPointer?
) -> Int32 {
    propertyInfo(model, name, result) { e in info(try property(e.relationships, i, "relationship", of: e)) }
}

@_cdecl("cdm_model_relationship_info")
public func cdm_model_relationship_info(
    _ model: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ relationship: UnsafePointer<CChar>?,
    _ result: UnsafeMutableRawPointer?
) -> Int32 {
    propertyInfo(model, name, result) { e in
        info(try property(named: relationship, "relationship", of: e) { e.relationship(named: $0) })
    }
}
