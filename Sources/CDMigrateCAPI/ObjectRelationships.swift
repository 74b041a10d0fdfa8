import CDMigrate

// The relationship edits of an instance (cdm_object_set_object, _add_object, _remove_object,
// _insert_object): Core Data's setValue(_:forKey:) for a to-one and the mutable set or ordered set
// of a to-many (mutableSetValue(forKey:) / mutableOrderedSetValue(forKey:)).

/// Runs `edit` on the relationship `key` names when it is of the kind the edit takes (to-many or
/// to-one); for the other kind CDM_MISMATCH says which function takes it.
private func editRelationship(
    _ o: OpaquePointer?, _ key: UnsafePointer<CChar>?, toMany: Bool, otherwise: String,
    _ edit: (ObjectEntry, RelationshipDescription, HandleTable) throws -> Void
) -> Int32 {
    withEntry(o, ObjectEntry.self, "object") { entry, table in
        let relationship: RelationshipDescription
        if let key = key, let scope = entry.scope,
            let known = try scope.relationship(of: entry.object.entity, key: key)
        {
            relationship = known
        } else {
            relationship = try ObjectAccess.relationship(entry, key: try CString.argument(key, "the key"))
        }
        if relationship.isToMany != toMany {
            throw MigrationError.mismatch(
                "'\(entry.entityName).\(relationship.name)' is \(toMany ? "to-one" : "to-many"): \(otherwise)")
        }
        try edit(entry, relationship, table)
    }
}

/// The instance a target handle stands for, looked up in the calling thread's table (at hand).
private func targetObject(_ handle: OpaquePointer?, in table: HandleTable) throws -> ManagedObject {
    try ThreadState.entry(in: table, handle, as: ObjectEntry.self, "target object").object
}

@_cdecl("cdm_object_set_object")
public func cdm_object_set_object(_ o: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ target: OpaquePointer?) -> Int32
{
    editRelationship(o, key, toMany: false, otherwise: "add to it with cdm_object_add_object") {
        entry, relationship, table in
        let value: Value = try target.map { .object(try targetObject($0, in: table)) } ?? .null
        try entry.object.setValue(value, for: relationship)
    }
}

@_cdecl("cdm_object_add_object")
public func cdm_object_add_object(_ o: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ target: OpaquePointer?) -> Int32
{
    editRelationship(o, key, toMany: true, otherwise: "set it with cdm_object_set_object") {
        entry, relationship, table in
        try table.withOne(try targetObject(target, in: table)) { try entry.object.add($0, to: relationship) }
    }
}

@_cdecl("cdm_object_remove_object")
public func cdm_object_remove_object(_ o: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ target: OpaquePointer?)
    -> Int32
{
    editRelationship(o, key, toMany: true, otherwise: "empty it with cdm_object_set_object(…, NULL)") {
        entry, relationship, table in
        try table.withOne(try targetObject(target, in: table)) { try entry.object.remove($0, from: relationship) }
    }
}

@_cdecl("cdm_object_insert_object")
public func cdm_object_insert_object(
    _ o: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ target: OpaquePointer?, _ index: Int
) -> Int32 {
    editRelationship(o, key, toMany: true, otherwise: "set it with cdm_object_set_object") {
        entry, relationship, table in
        let object = try targetObject(target, in: table)
        guard relationship.isOrdered else { return try entry.object.add([object], to: relationship) }
        // The engine has no positional insert: rewrite the ordered set with the target in place.
        var members = try entry.object.value(for: relationship).elements.compactMap { $0.object }
        members.removeAll { $0 === object || $0.objectID == object.objectID }
        members.insert(object, at: min(max(index, 0), members.count))
        try entry.object.setValue(.collection(members.map { .object($0) }), for: relationship)
    }
}
