/// Version hashes: cdmigrate's own recipe over the ingredients Apple documents.
///
/// Apple does not publish the bytes of its hashes, so these never equal Apple's; a model can carry
/// explicit hashes (from a store's metadata or a compiled model) to be recognised as that version.
///
/// Recipe (all strings UTF-8, each field followed by a 0 byte, booleans as "1"/"0"):
/// - attribute: SHA-256 of `"attribute", name, optional, transient, type code, modifier`
/// - relationship: SHA-256 of `"relationship", name, optional, transient, destination entity name,
///   inverse name, to-many, ordered, min count, max count, modifier`
/// - entity: SHA-256 of `"entity", name, abstract, parent's hash (hex) or "", modifier`, then each
///   own property's hash (hex) in name order
/// - model: SHA-256 of each entity's `name, hash (hex)` in name order.
/// Renaming identifiers, user info, default values and delete rules are not ingredients (as in
/// Core Data: changing them needs no migration).
public enum VersionHash {
    static func computeHashes(of model: ManagedObjectModel) {
        func fields(_ parts: [String]) -> [UInt8] {
            var bytes: [UInt8] = []
            for part in parts { bytes += Array(part.utf8); bytes.append(0) }
            return bytes
        }
        func flag(_ b: Bool) -> String { b ? "1" : "0" }
        func hashEntity(_ entity: EntityDescription) {
            for a in entity.ownAttributes {
                a.versionHash = a.explicitVersionHash ?? SHA256.hash(fields(["attribute", a.name, flag(a.isOptional), flag(a.isTransient), String(a.attributeType.coreDataCode), a.versionHashModifier ?? ""]))
            }
            for r in entity.ownRelationships {
                r.versionHash = r.explicitVersionHash ?? SHA256.hash(fields(["relationship", r.name, flag(r.isOptional), flag(r.isTransient), r.destinationEntityName, r.inverseName ?? "", flag(r.isToMany), flag(r.isOrdered), String(r.minCount), String(r.maxCount), r.versionHashModifier ?? ""]))
            }
            var bytes = fields(["entity", entity.name, flag(entity.isAbstract), entity.parent.map { hex($0.versionHash) } ?? "", entity.versionHashModifier ?? ""])
            let properties: [PropertyDescription] = entity.ownAttributes + entity.ownRelationships
            for p in properties.sorted(by: { $0.name < $1.name }) { bytes += fields([hex(p.versionHash)]) }
            entity.versionHash = entity.explicitVersionHash ?? SHA256.hash(bytes)
            for sub in entity.subentities { hashEntity(sub) }
        }
        for root in model.entities where root.parent == nil { hashEntity(root) }
        var bytes: [UInt8] = []
        for entity in model.entities.sorted(by: { $0.name < $1.name }) { bytes += fields([entity.name, hex(entity.versionHash)]) }
        model.setVersionHash(SHA256.hash(bytes))
    }

    public static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef")
        var s = ""
        for b in bytes { s.append(digits[Int(b >> 4)]); s.append(digits[Int(b & 15)]) }
        return s
    }
}

extension ManagedObjectModel {
    func setVersionHash(_ hash: [UInt8]) { versionHash = hash }
}
