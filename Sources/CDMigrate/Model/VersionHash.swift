/// Version hashes exactly as Apple's Core Data computes them (docs/apple-version-hash.md), so that
/// a store written here carries the `NSStoreModelVersionHashes` an iOS or macOS app expects.
///
/// `H` is SHA-256; integers are little-endian; strings are their UTF-8 bytes with no terminator.
/// - property base `P = H(name || u16(flags) || modifier)`, flags = 1·optional + 2·transient + 4·readOnly
/// - attribute `A = H(P || i32(type code) || [01 external storage] || [01 preserve after deletion])`
/// - relationship `R = H(P || destination name || inverse name || u32(maxCount) || u32(minCount) || [01 00 ordered])`
/// - entity `E = H(name || u8(abstract) || E(superentity) || X(p)… || modifier || constraints…)`,
///   over all properties including inherited ones, in UTF-16 name order, transient ones skipped
/// - model checksum (`versionHash`) = SHA-256 over every `E` in entity-name order; digest = SHA-512
///   over every `name || E` in entity-name order.
///
/// A hash written in the model file (`versionHash` in the JSON) replaces the computed one (and
/// feeds the hashes built on it); when it differs from the computed one the model gets a warning.
package enum VersionHash {
    /// Ascending by UTF-16 code units, case-sensitive (`-[NSString compare:]` on identifiers):
    /// the order of properties in an entity hash and of entities in the model digest.
    package static func nameOrder(_ a: String, _ b: String) -> Bool {
        a.utf16.lexicographicallyPrecedes(b.utf16)
    }

    /// `P`: the part every property hash starts from.
    static func propertyBaseHash(_ property: PropertyDescription, readOnly: Bool = false) -> [UInt8] {
        var bytes = Array(property.name.utf8)
        let flags: UInt16 = (property.isOptional ? 1 : 0) + (property.isTransient ? 2 : 0) + (readOnly ? 4 : 0)
        appendLittleEndian(&bytes, UInt64(flags), count: 2)
        if let modifier = property.versionHashModifier, !modifier.isEmpty { bytes += Array(modifier.utf8) }
        return SHA256.hash(bytes)
    }

    /// `A` for an attribute (or the derived-attribute hash).
    static func attributeHash(_ attribute: AttributeDescription) -> [UInt8] {
        if let derivation = attribute.derivationExpression {
            // Derived attributes: A is not fed in; the hash covers the expression text and the
            // filtering predicate. (not verified: no real hash exercised it, and Core Data hashes
            // NSExpression's own formatting, which may differ from the text the model file holds)
            // Core Data hashes the expression's `predicateFormat` in the form it keeps it
            // (`items.@count` held as `count:(items)`: DerivationForm).
            var bytes = Array(DerivationForm.keptText(derivation).utf8)
            if let filter = attribute.filteringPredicate, !filter.isEmpty { bytes += Array(filter.utf8) }
            return SHA256.hash(bytes)
        }
        // Composite attributes hash their elements instead (not verified); cdmigrate accepts only
        // transient composite attributes, which entity hashes skip, so A stands in for them here.
        var bytes = propertyBaseHash(attribute)
        appendLittleEndian(&bytes, UInt64(UInt32(bitPattern: Int32(attribute.attributeType.coreDataCode))), count: 4)
        // The two flag bytes: not verified by any real hash.
        if attribute.allowsExternalBinaryDataStorage { bytes.append(1) }
        if attribute.preservesValueInHistoryOnDeletion { bytes.append(1) }
        return SHA256.hash(bytes)
    }

    /// `R` for a relationship.
    static func relationshipHash(_ relationship: RelationshipDescription) -> [UInt8] {
        var bytes = propertyBaseHash(relationship)
        bytes += Array(relationship.destinationEntityName.utf8)
        // The inverse name is left out when the relationship is its own inverse (not verified).
        // Inherited relationships are the declaring ancestor's objects here, so comparing with
        // the inverse judges it on the top-most entity that declares the relationship, as Core Data does.
        if let inverse = relationship.inverseName, relationship.inverseRelationship !== relationship {
            bytes += Array(inverse.utf8)
        }
        appendLittleEndian(&bytes, UInt64(UInt32(truncatingIfNeeded: relationship.maxCount)), count: 4)
        appendLittleEndian(&bytes, UInt64(UInt32(truncatingIfNeeded: relationship.minCount)), count: 4)
        if relationship.isOrdered && relationship.isToMany { bytes += [1, 0] }
        return SHA256.hash(bytes)
    }

    /// `E` for an entity whose superentity and properties already carry their hashes.
    static func entityHash(_ entity: EntityDescription) -> [UInt8] {
        var bytes = Array(entity.name.utf8)
        bytes.append(entity.isAbstract ? 1 : 0)  // abstract = 1: not verified
        if let parent = entity.parent { bytes += parent.versionHash }
        let properties: [PropertyDescription] = entity.attributes + entity.relationships
        for property in properties.filter({ !$0.isTransient }).sorted(by: { nameOrder($0.name, $1.name) }) {
            bytes += property.versionHash
        }
        if let modifier = entity.versionHashModifier, !modifier.isEmpty { bytes += Array(modifier.utf8) }
        // Uniqueness constraints (not verified): each joined with ".", sorted, non-empty ones appended.
        let constraints = entity.uniquenessConstraints.map { $0.joined(separator: ".") }.filter { !$0.isEmpty }
        for constraint in constraints.sorted(by: nameOrder) { bytes += Array(constraint.utf8) }
        return SHA256.hash(bytes)
    }

    /// Computes every property, entity and model hash; returns a warning for every explicit hash
    /// that differs from the computed one. `entitiesInStoreOrder` puts parents before children.
    static func computeHashes(of model: ManagedObjectModel) -> [String] {
        var warnings: [String] = []
        func settle(_ computed: [UInt8], explicit: [UInt8]?, what: String) -> [UInt8] {
            guard let explicit = explicit else { return computed }
            if explicit != computed {
                warnings.append(
                    "\(what): the versionHash written in the model (\(Base64.encode(explicit))) differs from Core Data's (\(Base64.encode(computed))); the written one is used"
                )
            }
            return explicit
        }
        for entity in model.entitiesInStoreOrder {
            for attribute in entity.ownAttributes {
                attribute.versionHash = settle(
                    attributeHash(attribute), explicit: attribute.explicitVersionHash,
                    what: "attribute '\(entity.name).\(attribute.name)'")
            }
            for relationship in entity.ownRelationships {
                relationship.versionHash = settle(
                    relationshipHash(relationship), explicit: relationship.explicitVersionHash,
                    what: "relationship '\(entity.name).\(relationship.name)'")
            }
        }
        for entity in model.entitiesInStoreOrder {
            entity.versionHash = settle(
                entityHash(entity), explicit: entity.explicitVersionHash, what: "entity '\(entity.name)'")
        }
        let sorted = model.entities.sorted { nameOrder($0.name, $1.name) }
        var checksum: [UInt8] = []
        var digest: [UInt8] = []
        for entity in sorted {
            checksum += entity.versionHash
            digest += Array(entity.name.utf8) + entity.versionHash
        }
        model.setHashes(versionHash: SHA256.hash(checksum), digest: SHA512.hash(digest))
        return warnings
    }

    /// The model checksum and digest of a set of entity hashes (what `ManagedObjectModel` computes
    /// from its entities): for checking store metadata against hashes alone.
    package static func modelHashes(of entityHashes: [String: [UInt8]]) -> (checksum: [UInt8], digest: [UInt8]) {
        var checksum: [UInt8] = []
        var digest: [UInt8] = []
        for name in entityHashes.keys.sorted(by: nameOrder) {
            let hash = entityHashes[name] ?? []
            checksum += hash
            digest += Array(name.utf8) + hash
        }
        return (SHA256.hash(checksum), SHA512.hash(digest))
    }

    package static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef")
        var s = ""
        for b in bytes {
            s.append(digits[Int(b >> 4)])
            s.append(digits[Int(b & 15)])
        }
        return s
    }

    private static func appendLittleEndian(_ bytes: inout [UInt8], _ value: UInt64, count: Int) {
        for i in 0..<count { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(8 * i))) }
    }
}

extension ManagedObjectModel {
    func setHashes(versionHash: [UInt8], digest: [UInt8]) {
        self.versionHash = versionHash
        self.versionHashesDigest = digest
    }
}
