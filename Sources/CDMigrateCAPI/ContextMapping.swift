import CDMigrate

// The current entity mapping as a policy sees it (NSEntityMapping: userInfo, attribute and
// relationship mappings), Core Data's default hooks callable as `super`, and instance creation
// filled in one call.

/// enum cdm_property_kind.
enum PropertyKind {
    static let attribute: Int32 = 1
    static let relationship: Int32 = 2
}

private func propertyMappings(_ context: CallbackContext, _ kind: Int32) throws -> [PropertyMapping] {
    let mapping = try context.currentMapping()
    switch kind {
    case PropertyKind.attribute: return mapping.attributeMappings
    case PropertyKind.relationship: return mapping.relationshipMappings
    default:
        throw MigrationError(
            .invalidArgument, "kind \(kind) is neither CDM_PROPERTY_ATTRIBUTE (1) nor CDM_PROPERTY_RELATIONSHIP (2)")
    }
}

/// Entry `i` of the current entity mapping's user info, in key order; CDM_NOTFOUND out of range.
private func mappingUserInfoEntry(_ context: CallbackContext, _ i: Int) throws -> (key: String, value: Value) {
    let entries = try context.currentMapping().userInfo.sorted { $0.key < $1.key }
    guard i >= 0, i < entries.count else {
        throw MigrationError.notFound("user info entry \(i) is out of range: the mapping has \(entries.count)")
    }
    return entries[i]
}

@_cdecl("cdm_context_mapping_user_info")
public func cdm_context_mapping_user_info(
    _ ctx: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ value: UnsafeMutablePointer<UnsafePointer<CChar>?>?
) -> Int32 {
    withContext(ctx) { context, _ in
        guard let value = value else { throw MigrationError.misuse("the value pointer is NULL") }
        let name = try CString.argument(key, "the key")
        value.pointee = context.string(try context.currentMapping().userInfo[name].map(MappingUserInfo.text))
    }
}

@_cdecl("cdm_context_mapping_user_info_count")
public func cdm_context_mapping_user_info_count(_ ctx: OpaquePointer?, _ count: UnsafeMutablePointer<Int>?) -> Int32 {
    withContext(ctx) { context, _ in
        guard let count = count else { throw MigrationError.misuse("the count pointer is NULL") }
        count.pointee = try context.currentMapping().userInfo.count
    }
}

@_cdecl("cdm_context_mapping_user_info_at")
public func cdm_context_mapping_user_info_at(
    _ ctx: OpaquePointer?, _ i: Int, _ key: UnsafeMutablePointer<UnsafePointer<CChar>?>?,
    _ value: UnsafeMutablePointer<UnsafePointer<CChar>?>?
) -> Int32 {
    withContext(ctx) { context, _ in
        let key = try required(key, "key")
        let value = try required(value, "value")
        let entry = try mappingUserInfoEntry(context, i)
        key.pointee = context.string(entry.key)
        value.pointee = context.string(MappingUserInfo.text(entry.value))
    }
}

@_cdecl("cdm_context_mapping_user_info_value")
public func cdm_context_mapping_user_info_value(
    _ ctx: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<OpaquePointer?>?
) -> Int32 {
    withContext(ctx) { context, scope in
        let out = try required(out, "value")
        out.pointee = nil
        let name = try CString.argument(key, "the key")
        guard let value = try context.currentMapping().userInfo[name] else { return }
        out.pointee = scope.handle(ValueEntry(value, writable: false))
    }
}

@_cdecl("cdm_context_mapping_user_info_value_at")
public func cdm_context_mapping_user_info_value_at(
    _ ctx: OpaquePointer?, _ i: Int, _ key: UnsafeMutablePointer<UnsafePointer<CChar>?>?,
    _ out: UnsafeMutablePointer<OpaquePointer?>?
) -> Int32 {
    withContext(ctx) { context, scope in
        let key = try required(key, "key")
        let out = try required(out, "value")
        let entry = try mappingUserInfoEntry(context, i)
        key.pointee = context.string(entry.key)
        out.pointee = scope.handle(ValueEntry(entry.value, writable: false))
    }
}

@_cdecl("cdm_context_property_mapping_count")
public func cdm_context_property_mapping_count(
    _ ctx: OpaquePointer?, _ kind: Int32, _ count: UnsafeMutablePointer<Int>?
) -> Int32 {
    withContext(ctx) { context, _ in
        guard let count = count else { throw MigrationError.misuse("the count pointer is NULL") }
        count.pointee = try propertyMappings(context, kind).count
    }
}

@_cdecl("cdm_context_property_mapping_at")
public func cdm_context_property_mapping_at(
    _ ctx: OpaquePointer?, _ kind: Int32, _ i: Int, _ name: UnsafeMutablePointer<UnsafePointer<CChar>?>?,
    _ expression: UnsafeMutablePointer<UnsafePointer<CChar>?>?
) -> Int32 {
    withContext(ctx) { context, _ in
        let name = try required(name, "name")
        let expression = try required(expression, "expression")
        let mappings = try propertyMappings(context, kind)
        guard i >= 0, i < mappings.count else {
            throw MigrationError.notFound(
                "property mapping \(i) is out of range: entity mapping '\(try context.currentMapping().name)' has \(mappings.count)"
            )
        }
        name.pointee = context.string(mappings[i].name)
        expression.pointee = context.string(mappings[i].valueExpressionText)
    }
}

@_cdecl("cdm_context_property_mapping")
public func cdm_context_property_mapping(
    _ ctx: OpaquePointer?, _ kind: Int32, _ name: UnsafePointer<CChar>?,
    _ expression: UnsafeMutablePointer<UnsafePointer<CChar>?>?
) -> Int32 {
    withContext(ctx) { context, _ in
        let expression = try required(expression, "expression")
        let wanted = try CString.argument(name, "the property name")
        guard let found = try propertyMappings(context, kind).first(where: { $0.name == wanted }) else {
            throw MigrationError.notFound(
                "entity mapping '\(try context.currentMapping().name)' has no \(kind == PropertyKind.attribute ? "attribute" : "relationship") mapping for '\(wanted)'"
            )
        }
        expression.pointee = context.string(found.valueExpressionText)
    }
}

@_cdecl("cdm_context_default_create_destination_instances")
public func cdm_context_default_create_destination_instances(
    _ ctx: OpaquePointer?, _ source: OpaquePointer?, _ out: UnsafeMutablePointer<OpaquePointer?>?
) -> Int32 {
    withContext(ctx) { context, scope in
        out?.pointee = nil
        let sInstance = try ThreadState.current.entry(source, as: ObjectEntry.self, "source object").object
        let made = try EntityMigrationPolicy().defaultCreateDestinationInstances(
            forSource: sInstance, in: try context.currentMapping(), manager: context.manager)
        out?.pointee = made.map { scope.handle(for: $0) }
    }
}

@_cdecl("cdm_context_default_create_relationships")
public func cdm_context_default_create_relationships(_ ctx: OpaquePointer?, _ destination: OpaquePointer?) -> Int32 {
    withContext(ctx) { context, _ in
        let dInstance = try ThreadState.current.entry(destination, as: ObjectEntry.self, "destination object").object
        try EntityMigrationPolicy().defaultCreateRelationships(
            forDestination: dInstance, in: try context.currentMapping(), manager: context.manager)
    }
}

@_cdecl("cdm_context_create_instance_with_fields")
public func cdm_context_create_instance_with_fields(
    _ ctx: OpaquePointer?, _ entity: UnsafePointer<CChar>?, _ fields: UnsafeRawPointer?, _ count: Int,
    _ flags: Int32, _ source: OpaquePointer?, _ out: UnsafeMutablePointer<OpaquePointer?>?
) -> Int32 {
    withContext(ctx) { context, scope in
        out?.pointee = nil
        let name: String
        if let entity = entity {
            name = try CString.argument(entity, "the entity name")
        } else {
            let mapping = try context.currentMapping()
            guard let destination = mapping.destinationEntityName else {
                throw MigrationError(
                    .invalidArgument,
                    "entity mapping '\(mapping.name)' has no destination entity: name the entity to create")
            }
            name = destination
        }
        guard context.manager.destinationModel.entity(named: name) != nil else {
            throw MigrationError.notFound("the destination model has no entity named '\(name)'")
        }
        let sInstance = try source.map {
            try ThreadState.current.entry($0, as: ObjectEntry.self, "source object").object
        }
        let made = try context.manager.createDestinationInstance(entityName: name)
        try setFields(made, fields?.assumingMemoryBound(to: CField.self), count, flags)
        if let sInstance = sInstance {
            try context.manager.associate(
                sourceInstance: sInstance, withDestinationInstance: made, for: try context.currentMapping())
        }
        out?.pointee = scope.handle(for: made)
    }
}

@_cdecl("cdm_context_model")
public func cdm_context_model(_ ctx: OpaquePointer?, _ store: Int32, _ out: UnsafeMutablePointer<OpaquePointer?>?)
    -> Int32
{
    withContext(ctx) { context, _ in
        guard let out = out else { throw MigrationError.misuse("the model pointer is NULL") }
        out.pointee = context.migration.modelHandle(destination: try isDestination(store))
    }
}
