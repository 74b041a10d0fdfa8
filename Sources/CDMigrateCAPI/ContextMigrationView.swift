import CDMigrate

// What a policy sees of its migration beyond the current entity mapping (NSMigrationManager's
// mappingModel, NSManagedObjectModel's versionIdentifiers, NSEntityMapping's mappingType,
// NSPropertyMapping's userInfo), and changing a property mapping's value expression as Core Data
// lets a policy do: for the rest of the pass.

private func propertyMapping(_ context: CallbackContext, _ kind: Int32, _ name: UnsafePointer<CChar>?) throws
    -> PropertyMapping
{
    let wanted = try CString.argument(name, "the property name")
    let mapping = try context.currentMapping()
    let mappings: [PropertyMapping]
    switch kind {
    case PropertyKind.attribute: mappings = mapping.attributeMappings
    case PropertyKind.relationship: mappings = mapping.relationshipMappings
    default:
        throw MigrationError(
            .invalidArgument, "kind \(kind) is neither CDM_PROPERTY_ATTRIBUTE (1) nor CDM_PROPERTY_RELATIONSHIP (2)")
    }
    guard let found = mappings.first(where: { $0.name == wanted }) else {
        throw MigrationError.notFound(
            "entity mapping '\(mapping.name)' has no \(kind == PropertyKind.attribute ? "attribute" : "relationship") mapping for '\(wanted)'"
        )
    }
    return found
}

@_cdecl("cdm_model_version_identifier")
public func cdm_model_version_identifier(
    _ model: OpaquePointer?, _ identifier: UnsafeMutablePointer<UnsafePointer<CChar>?>?
) -> Int32 {
    guarded(nil) {
        let out = try required(identifier, "identifier")
        out.pointee = try ModelHandle.loaded(model).versionIdentifier.map { CString.interned($0) }
    }
}

@_cdecl("cdm_context_mapping_model_name")
public func cdm_context_mapping_model_name(_ ctx: OpaquePointer?, _ name: UnsafeMutablePointer<UnsafePointer<CChar>?>?)
    -> Int32
{
    withContext(ctx) { context, _ in
        try required(name, "name").pointee = context.string(context.manager.mappingModel.name)
    }
}

@_cdecl("cdm_context_entity_mapping_count")
public func cdm_context_entity_mapping_count(_ ctx: OpaquePointer?, _ count: UnsafeMutablePointer<Int>?) -> Int32 {
    withContext(ctx) { context, _ in
        try required(count, "count").pointee = context.manager.mappingModel.entityMappings.count
    }
}

@_cdecl("cdm_context_entity_mapping_at")
public func cdm_context_entity_mapping_at(
    _ ctx: OpaquePointer?, _ i: Int, _ name: UnsafeMutablePointer<UnsafePointer<CChar>?>?
) -> Int32 {
    withContext(ctx) { context, _ in
        let out = try required(name, "name")
        let mappings = context.manager.mappingModel.entityMappings
        guard i >= 0, i < mappings.count else {
            throw MigrationError.notFound(
                "entity mapping \(i) is out of range: the mapping model of pass \(context.manager.currentPass) has \(mappings.count)"
            )
        }
        out.pointee = context.string(mappings[i].name)
    }
}

@_cdecl("cdm_context_entity_mapping_entities_at")
public func cdm_context_entity_mapping_entities_at(
    _ ctx: OpaquePointer?, _ i: Int, _ source: UnsafeMutablePointer<UnsafePointer<CChar>?>?,
    _ destination: UnsafeMutablePointer<UnsafePointer<CChar>?>?
) -> Int32 {
    withContext(ctx) { context, _ in
        let sourceOut = try required(source, "source")
        let destinationOut = try required(destination, "destination")
        let mappings = context.manager.mappingModel.entityMappings
        guard i >= 0, i < mappings.count else {
            throw MigrationError.notFound(
                "entity mapping \(i) is out of range: the mapping model of pass \(context.manager.currentPass) has \(mappings.count)"
            )
        }
        sourceOut.pointee = mappings[i].sourceEntityName.flatMap { context.string($0) }
        destinationOut.pointee = mappings[i].destinationEntityName.flatMap { context.string($0) }
    }
}

@_cdecl("cdm_context_entity_mapping_type")
public func cdm_context_entity_mapping_type(_ ctx: OpaquePointer?, _ type: UnsafeMutablePointer<UnsafePointer<CChar>?>?)
    -> Int32
{
    withContext(ctx) { context, _ in
        try required(type, "type").pointee = CString.interned(try context.currentMapping().mappingType.rawValue)
    }
}

@_cdecl("cdm_context_property_mapping_user_info_value")
public func cdm_context_property_mapping_user_info_value(
    _ ctx: OpaquePointer?, _ kind: Int32, _ name: UnsafePointer<CChar>?, _ key: UnsafePointer<CChar>?,
    _ out: UnsafeMutablePointer<OpaquePointer?>?
) -> Int32 {
    withContext(ctx) { context, scope in
        let out = try required(out, "value")
        out.pointee = nil
        let wanted = try CString.argument(key, "the key")
        guard let value = try propertyMapping(context, kind, name).userInfo[wanted] else { return }
        out.pointee = scope.handle(ValueEntry(value, writable: false))
    }
}

@_cdecl("cdm_context_property_mapping_user_info_count")
public func cdm_context_property_mapping_user_info_count(
    _ ctx: OpaquePointer?, _ kind: Int32, _ name: UnsafePointer<CChar>?,
    _ count: UnsafeMutablePointer<Int>?
) -> Int32 {
    withContext(ctx) { context, _ in
        let out = try required(count, "count")
        out.pointee = try propertyMapping(context, kind, name).userInfo.count
    }
}

@_cdecl("cdm_context_property_mapping_user_info_value_at")
public func cdm_context_property_mapping_user_info_value_at(
    _ ctx: OpaquePointer?, _ kind: Int32, _ name: UnsafePointer<CChar>?, _ i: Int,
    _ key: UnsafeMutablePointer<UnsafePointer<CChar>?>?,
    _ out: UnsafeMutablePointer<OpaquePointer?>?
) -> Int32 {
    withContext(ctx) { context, scope in
        let key = try required(key, "key")
        let out = try required(out, "value")
        let property = try propertyMapping(context, kind, name)
        let entries = property.userInfo.sorted { $0.key < $1.key }
        guard i >= 0, i < entries.count else {
            throw MigrationError.notFound(
                "user info entry \(i) is out of range: property mapping '\(property.name)' has \(entries.count)")
        }
        key.pointee = context.string(entries[i].key)
        out.pointee = scope.handle(ValueEntry(entries[i].value, writable: false))
    }
}

@_cdecl("cdm_context_set_property_mapping_expression")
public func cdm_context_set_property_mapping_expression(
    _ ctx: OpaquePointer?, _ kind: Int32, _ name: UnsafePointer<CChar>?,
    _ expression: UnsafePointer<CChar>?
) -> Int32 {
    withContext(ctx) { context, _ in
        let property = try propertyMapping(context, kind, name)
        try property.setValueExpression(try expression.map { try CString.argument($0, "the expression") })
    }
}
