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
    guard let found = loaded.entity(named: entityName) else { throw MigrationError.notFound("the model has no entity named '\(entityName)'") }
    return found
}

private func info(_ attribute: AttributeDescription) -> AttributeInfo {
    AttributeInfo(name: CString.interned(attribute.name), entity: attribute.entity.map { CString.interned($0.name) }, index: Int32(attribute.index),
                  type: Int32(attribute.attributeType.coreDataCode), isOptional: attribute.isOptional ? 1 : 0, isTransient: attribute.isTransient ? 1 : 0)
}

private func info(_ relationship: RelationshipDescription) -> RelationshipInfo {
    RelationshipInfo(name: CString.interned(relationship.name), entity: relationship.entity.map { CString.interned($0.name) },
                     destinationEntity: CString.interned(relationship.destinationEntityName),
                     inverse: relationship.inverseName.map { CString.interned($0) }, index: Int32(relationship.index),
                     isToMany: relationship.isToMany ? 1 : 0, isOrdered: relationship.isOrdered ? 1 : 0, isOptional: relationship.isOptional ? 1 : 0,
                     minCount: Int32(clamping: relationship.minCount), maxCount: Int32(clamping: relationship.maxCount))
}

private func out<T>(_ pointer: UnsafeMutableRawPointer?, _ value: T) throws {
    guard let pointer = pointer else { throw MigrationError.misuse("the info pointer is NULL") }
    pointer.assumingMemoryBound(to: T.self).pointee = value
}

@_cdecl("cdm_model_entity_parent")
public func cdm_model_entity_parent(_ model: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ parent: UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> Int32 {
    guarded(nil) {
        _ = try ModelHandle.loaded(model)
        let out = try required(parent, "parent")
        out.pointee = try entity(model, name).parent.map { CString.interned($0.name) }
    }
}

@_cdecl("cdm_model_attribute_count")
public func cdm_model_attribute_count(_ model: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ count: UnsafeMutablePointer<Int>?) -> Int32 {
    guarded(nil) {
        _ = try ModelHandle.loaded(model)
        let out = try required(count, "count")
        out.pointee = try entity(model, name).attributes.count
    }
}

@_cdecl("cdm_model_attribute_at")
public func cdm_model_attribute_at(_ model: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ i: Int, _ result: UnsafeMutableRawPointer?) -> Int32 {
    guarded(nil) {
        _ = try ModelHandle.loaded(model)
        guard result != nil else { throw MigrationError.misuse("the info pointer is NULL") }
        let e = try entity(model, name)
        guard i >= 0, i < e.attributes.count else { throw MigrationError.notFound("attribute index \(i) is out of range: entity '\(e.name)' has \(e.attributes.count) attributes") }
        try out(result, info(e.attributes[i]))
    }
}

@_cdecl("cdm_model_attribute_info")
public func cdm_model_attribute_info(_ model: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ attribute: UnsafePointer<CChar>?, _ result: UnsafeMutableRawPointer?) -> Int32 {
    guarded(nil) {
        _ = try ModelHandle.loaded(model)
        guard result != nil else { throw MigrationError.misuse("the info pointer is NULL") }
        let e = try entity(model, name)
        let key = try CString.argument(attribute, "the attribute name")
        guard let found = e.attribute(named: key) else { throw MigrationError.notFound("entity '\(e.name)' has no attribute '\(key)'") }
        try out(result, info(found))
    }
}

@_cdecl("cdm_model_relationship_count")
public func cdm_model_relationship_count(_ model: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ count: UnsafeMutablePointer<Int>?) -> Int32 {
    guarded(nil) {
        _ = try ModelHandle.loaded(model)
        let out = try required(count, "count")
        out.pointee = try entity(model, name).relationships.count
    }
}

@_cdecl("cdm_model_relationship_at")
public func cdm_model_relationship_at(_ model: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ i: Int, _ result: UnsafeMutableRawPointer?) -> Int32 {
    guarded(nil) {
        _ = try ModelHandle.loaded(model)
        guard result != nil else { throw MigrationError.misuse("the info pointer is NULL") }
        let e = try entity(model, name)
        guard i >= 0, i < e.relationships.count else { throw MigrationError.notFound("relationship index \(i) is out of range: entity '\(e.name)' has \(e.relationships.count) relationships") }
        try out(result, info(e.relationships[i]))
    }
}

@_cdecl("cdm_model_relationship_info")
public func cdm_model_relationship_info(_ model: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ relationship: UnsafePointer<CChar>?, _ result: UnsafeMutableRawPointer?) -> Int32 {
    guarded(nil) {
        _ = try ModelHandle.loaded(model)
        guard result != nil else { throw MigrationError.misuse("the info pointer is NULL") }
        let e = try entity(model, name)
        let key = try CString.argument(relationship, "the relationship name")
        guard let found = e.relationship(named: key) else { throw MigrationError.notFound("entity '\(e.name)' has no relationship '\(key)'") }
        try out(result, info(found))
    }
}

@_cdecl("cdm_internal_struct_size")
public func cdm_internal_struct_size(_ name: UnsafePointer<CChar>?) -> Int {
    switch name.map({ String(cString: $0) }) {
    case "cdm_field": return MemoryLayout<CField>.size
    case "cdm_attribute_info": return MemoryLayout<AttributeInfo>.size
    case "cdm_relationship_info": return MemoryLayout<RelationshipInfo>.size
    case "cdm_sort_descriptor": return MemoryLayout<CSortDescriptor>.stride
    case "cdm_store_entity_info": return MemoryLayout<StoreEntityInfo>.size
    case "cdm_version_difference": return MemoryLayout<VersionDifferenceInfo>.size
    default: return 0
    }
}
