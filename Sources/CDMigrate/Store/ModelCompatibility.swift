/// Whether a store was written with a model: its metadata's entity version hashes against the
/// model's, as Core Data compares them when it opens a store.
extension ManagedObjectModel {
    /// One entity whose version differs between a store and a model.
    public struct VersionDifference: Equatable, CustomStringConvertible {
        /// The entity.
        public var entityName: String
        /// The hash the store records (nil: the entity is not in the store).
        public var storeHash: [UInt8]?
        /// The hash the model computes (nil: the entity is not in the model).
        public var modelHash: [UInt8]?

        /// The entity with the store's hash and the model's in base64 (as Core Data's store
        /// metadata holds them, and as `cdmigrate inspect` prints them), or which side lacks it.
        public var description: String {
            switch (storeHash, modelHash) {
            case (let s?, let m?):
                return "\(entityName): store hash \(Base64.encode(s)), model hash \(Base64.encode(m))"
            case (nil, _?): return "\(entityName) is not in the store"
            case (_?, nil): return "\(entityName) is only in the store"
            case (nil, nil): return entityName
            }
        }
    }

    /// The entities whose version hashes differ between `metadata` and this model, in name order;
    /// empty when the store was written with this model (or one with the same hashes).
    public func versionDifferences(fromStoreMetadata metadata: StoreMetadata) -> [VersionDifference] {
        let modelHashes = entityVersionHashes
        var differences: [VersionDifference] = []
        for name in Set(modelHashes.keys).union(metadata.versionHashes.keys).sorted(by: VersionHash.nameOrder) {
            let model = modelHashes[name]
            let store = metadata.versionHashes[name]
            if model != store {
                differences.append(VersionDifference(entityName: name, storeHash: store, modelHash: model))
            }
        }
        return differences
    }

    /// Whether a store with this metadata can be opened with this model without a migration.
    ///
    /// Core Data counterpart: `isConfiguration(withName: nil, compatibleWithStoreMetadata:)`:
    /// the hashes' version is at most 3, and the store has exactly the model's entities, each
    /// with the model's hash. A store without version metadata (an empty `Z_PLIST`) is compatible
    /// with no model.
    public func isCompatible(withStoreMetadata metadata: StoreMetadata) -> Bool {
        guard !metadata.isEmpty, (metadata.hashesVersion ?? 3) <= 3 else { return false }
        return versionDifferences(fromStoreMetadata: metadata).isEmpty
    }
}

extension StoreMetadata {
    /// `NSStoreModelVersionHashesVersion` (3 for every store written since 2009), when present.
    public var hashesVersion: Int64? {
        for entry in otherEntries where entry.key == "NSStoreModelVersionHashesVersion" {
            if case .integer(let version) = entry.value { return version }
        }
        return nil
    }
}

extension ModelVersionSet {
    /// The version a store was written with: the one whose entity version hashes equal the
    /// store's (the first by name when several do); nil when none does.
    ///
    /// Core Data counterpart: `NSManagedObjectModel.mergedModel(from:forStoreMetadata:)`.
    public func versionName(forStoreMetadata metadata: StoreMetadata) -> String? {
        versionNames.first { models[$0]?.isCompatible(withStoreMetadata: metadata) == true }
    }
}
