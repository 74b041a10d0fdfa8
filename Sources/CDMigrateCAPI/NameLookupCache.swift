import CDMigrate

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The names C calls looked up last (kept by a handle scope) — a property by its entity and key, an entity by
/// its model and name: a policy's hook names the same few on every row
/// (`cdm_context_create_instance(ctx, "Nota", …)`, `cdm_object_get_text(source, "categoria", …)`,
/// `cdm_object_add_object(nota, "categorias", …)`), and comparing the name's bytes with a kept
/// copy costs less than making a Swift string of it and hashing that. A miss looks the name up
/// as before; only names found are kept.
struct NameLookupCache {
    private struct Entry {
        /// The entity or model the name was looked up in, kept strongly so that no other object
        /// can come to have its identity.
        let owner: AnyObject
        /// A copy of the name, NUL-terminated (malloc'd; freed when the entry is replaced).
        let name: UnsafeMutablePointer<CChar>
        let found: AnyObject
    }

    /// Few: a hook names a handful of things.
    private static let capacity = 8
    private var entries: [Entry] = []
    private var next = 0

    /// What `name` named in `owner` lately, or nil.
    func find(in owner: AnyObject, _ name: UnsafePointer<CChar>) -> AnyObject? {
        for entry in entries where entry.owner === owner && strcmp(entry.name, name) == 0 {
            return entry.found
        }
        return nil
    }

    /// Keeps `found` as what `name` names in `owner` (replacing the oldest entry when full).
    mutating func remember(_ found: AnyObject, in owner: AnyObject, _ name: UnsafePointer<CChar>) {
        guard let copy = strdup(name) else { return }
        let entry = Entry(owner: owner, name: copy, found: found)
        if entries.count < Self.capacity {
            entries.append(entry)
            return
        }
        free(entries[next].name)
        entries[next] = entry
        next = (next + 1) % Self.capacity
    }

    /// Frees the kept names (the thread's state is going away).
    mutating func removeAll() {
        for entry in entries { free(entry.name) }
        entries.removeAll()
        next = 0
    }
}

extension Scope {
    /// The attribute that `key`, a plain name (no key path), names in `entity`; nil when it names
    /// none (or is a key path), for the caller's general look-up and its errors.
    /// - throws: `CDM_MISUSE` when the key is not UTF-8.
    func attribute(of entity: EntityDescription, key: UnsafePointer<CChar>) throws -> AttributeDescription? {
        if let known = names.find(in: entity, key) { return cast(known, to: AttributeDescription.self) }
        guard strchr(key, 0x2E) == nil, let found = entity.attribute(named: try CString.argument(key, "the key"))
        else { return nil }
        names.remember(found, in: entity, key)
        return found
    }

    /// The relationship that `key` names in `entity`; nil when it names none.
    /// - throws: `CDM_MISUSE` when the key is not UTF-8.
    func relationship(of entity: EntityDescription, key: UnsafePointer<CChar>) throws -> RelationshipDescription? {
        if let known = names.find(in: entity, key) { return cast(known, to: RelationshipDescription.self) }
        guard let found = entity.relationship(named: try CString.argument(key, "the key")) else { return nil }
        names.remember(found, in: entity, key)
        return found
    }

    /// The entity of `model` called `name`; nil when it has none.
    /// - throws: `CDM_MISUSE` when the name is NULL or not UTF-8.
    func entity(of model: ManagedObjectModel, name: UnsafePointer<CChar>?) throws -> EntityDescription? {
        guard let name = name else { return model.entity(named: try CString.argument(name, "the entity name")) }
        if let known = names.find(in: model, name) { return cast(known, to: EntityDescription.self) }
        guard let found = model.entity(named: try CString.argument(name, "the entity name")) else { return nil }
        names.remember(found, in: model, name)
        return found
    }
}
