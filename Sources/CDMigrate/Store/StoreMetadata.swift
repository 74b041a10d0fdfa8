/// A store's metadata (`Z_METADATA`): its UUID and the property list Core Data keeps beside it.
public struct StoreMetadata: Equatable {
    /// `Z_METADATA.Z_UUID`.
    public var storeUUID: String
    /// `NSStoreType`, "SQLite".
    public var storeType: String
    /// `NSStoreModelVersionHashes`: entity name → 32-byte version hash.
    public var versionHashes: [String: [UInt8]]
    /// `NSStoreModelVersionIdentifiers`.
    public var versionIdentifiers: [String]
    /// Every other key of the plist, kept so that writing back loses nothing.
    public var otherEntries: [(key: String, value: PropertyListValue)]
    /// True when `Z_PLIST` was empty (macOS Notes does this): the version cannot be checked.
    public var isEmpty: Bool

    /// Equal UUID, type, version hashes, identifiers and other entries.
    public static func == (lhs: StoreMetadata, rhs: StoreMetadata) -> Bool {
        lhs.storeUUID == rhs.storeUUID && lhs.storeType == rhs.storeType && lhs.versionHashes == rhs.versionHashes
            && lhs.versionIdentifiers == rhs.versionIdentifiers && lhs.isEmpty == rhs.isEmpty
            && PropertyListValue.dictionary(lhs.otherEntries) == PropertyListValue.dictionary(rhs.otherEntries)
    }

    /// Metadata for a new store written for `model`: Apple's entity version hashes
    /// (`NSStoreModelVersionHashes`, version 3), the model digest and checksum, and the model's
    /// version identifiers (`[""]` when it has none), as Core Data writes them.
    public init(storeUUID: String, model: ManagedObjectModel) {
        self.storeUUID = storeUUID
        self.storeType = "SQLite"
        self.versionHashes = model.entityVersionHashes
        self.versionIdentifiers = [model.versionIdentifier ?? ""]
        self.otherEntries = [
            ("NSStoreModelVersionHashesVersion", .integer(3)),
            (StoreMetadata.digestKey, .string(model.versionHashesDigestBase64)),
            (StoreMetadata.checksumKey, .string(model.versionChecksum)),
            ("NSPersistenceFrameworkVersion", .integer(847)),
            ("_NSAutoVacuumLevel", .string("2")),
        ]
        self.isEmpty = false
    }

    /// Metadata for the store a migration writes from a store with `source` metadata, as Core
    /// Data's migrations write it: the source's UUID (object URIs stay valid) and every entry the
    /// source carries (the app's own keys, `NSPersistenceFrameworkVersion`, `_NSAutoVacuumLevel`),
    /// with the entries that describe the model replaced by `model`'s: `NSStoreModelVersionHashes`,
    /// `NSStoreModelVersionIdentifiers`, `NSStoreModelVersionHashesVersion`,
    /// `NSStoreModelVersionHashesDigest`, `NSStoreModelVersionChecksumKey`, and `NSStoreType`
    /// ("SQLite"). A source without metadata (empty `Z_PLIST`) gives `model`'s with its UUID.
    /// - Parameters:
    ///   - source: the source store's metadata.
    ///   - model: the destination model.
    /// - Core Data: the metadata `NSMigrationManager` gives the destination store.
    public init(carrying source: StoreMetadata, model: ManagedObjectModel) {
        self.init(storeUUID: source.storeUUID.isEmpty ? PersistentStore.randomUUID() : source.storeUUID, model: model)
        guard !source.isEmpty else { return }
        var entries = otherEntries.filter { StoreMetadata.modelKeys.contains($0.key) }
        for entry in source.otherEntries where !StoreMetadata.modelKeys.contains(entry.key) {
            entries.append(entry)
        }
        for entry in StoreMetadata.defaultEntries where !entries.contains(where: { $0.key == entry.key }) {
            entries.append(entry)
        }
        otherEntries = entries
    }

    /// The entries a migration replaces by the destination model's (besides hashes, identifiers, type).
    static let modelKeys: Set<String> = ["NSStoreModelVersionHashesVersion", digestKey, checksumKey]

    /// SQLite's `auto_vacuum` for the store, from `_NSAutoVacuumLevel` ("0", "1" or "2"; 2,
    /// incremental, Core Data's default, when absent or anything else).
    public var autoVacuumLevel: Int {
        switch stringEntry("_NSAutoVacuumLevel") {
        case "0": return 0
        case "1": return 1
        default: return 2
        }
    }

    /// `NSStoreModelVersionHashesDigest`: base64 of the model's SHA-512 digest (see `VersionHash`), if the store has one.
    public var versionHashesDigest: String? { stringEntry(StoreMetadata.digestKey) }
    /// `NSStoreModelVersionChecksumKey`: base64 of the model's version hash, if the store has one
    /// (Core Data writes it from framework versions of about 2020 on).
    public var versionChecksum: String? { stringEntry(StoreMetadata.checksumKey) }

    private func stringEntry(_ key: String) -> String? {
        guard let entry = otherEntries.first(where: { $0.key == key }), case .string(let text) = entry.value else {
            return nil
        }
        return text
    }

    static let digestKey = "NSStoreModelVersionHashesDigest"
    static let checksumKey = "NSStoreModelVersionChecksumKey"
    /// Keys this struct keeps in its own fields.
    static let storeTypeKey = "NSStoreType"
    static let versionHashesKey = "NSStoreModelVersionHashes"
    static let versionIdentifiersKey = "NSStoreModelVersionIdentifiers"
    /// Entries Core Data always writes, with the values it writes when the store has none.
    static let defaultEntries: [(key: String, value: PropertyListValue)] = [
        ("NSPersistenceFrameworkVersion", .integer(847)),
        ("NSStoreModelVersionHashesVersion", .integer(3)),
        ("_NSAutoVacuumLevel", .string("2")),
    ]

    /// Reads the metadata from `Z_UUID` and the bytes of `Z_PLIST` (empty bytes give `isEmpty`).
    package init(storeUUID: String, plist: [UInt8]) throws {
        self.storeUUID = storeUUID
        self.storeType = "SQLite"
        self.versionHashes = [:]
        self.versionIdentifiers = []
        self.otherEntries = []
        self.isEmpty = plist.isEmpty
        if plist.isEmpty { return }

        func malformed(_ reason: String) -> MigrationError {
            MigrationError(.migrationManagerSourceStore, "the metadata (Z_PLIST) of store \(storeUUID) \(reason)")
        }
        let root: PropertyListValue
        do {
            root = try BinaryPropertyList.decode(plist)
        } catch let error as MigrationError {
            throw malformed("is unreadable: \(error.message)")
        }
        guard case .dictionary(let members) = root else { throw malformed("is not a dictionary") }
        for (key, value) in members {
            switch key {
            case StoreMetadata.storeTypeKey:
                guard case .string(let type) = value else { throw malformed("has a \(key) that is not a string") }
                storeType = type
            case StoreMetadata.versionHashesKey:
                guard case .dictionary(let hashes) = value else {
                    throw malformed("has a \(key) that is not a dictionary")
                }
                for (entity, hash) in hashes {
                    guard case .data(let bytes) = hash, bytes.count == 32 else {
                        throw malformed("has a version hash for entity \(entity) that is not 32 bytes of data")
                    }
                    versionHashes[entity] = bytes
                }
            case StoreMetadata.versionIdentifiersKey:
                guard case .array(let identifiers) = value else { throw malformed("has a \(key) that is not an array") }
                for identifier in identifiers {
                    guard case .string(let text) = identifier else {
                        throw malformed("has a \(key) entry that is not a string")
                    }
                    versionIdentifiers.append(text)
                }
            default:
                otherEntries.append((key, value))
            }
        }
    }

    /// The `Z_PLIST` bytes: the fields of this struct, Core Data's usual entries where missing,
    /// then every other entry in order (so reading them back gives equal metadata).
    /// Empty metadata stays empty.
    package func plistBytes() -> [UInt8] {
        if isEmpty { return [] }
        let hashes = versionHashes.keys.sorted().map {
            (key: $0, value: PropertyListValue.data(versionHashes[$0] ?? []))
        }
        var members: [(key: String, value: PropertyListValue)] = [
            (StoreMetadata.versionHashesKey, .dictionary(hashes)),
            (StoreMetadata.versionIdentifiersKey, .array(versionIdentifiers.map { .string($0) })),
            (StoreMetadata.storeTypeKey, .string(storeType)),
        ]
        for entry in StoreMetadata.defaultEntries where !otherEntries.contains(where: { $0.key == entry.key }) {
            members.append(entry)
        }
        let reserved = [
            StoreMetadata.versionHashesKey, StoreMetadata.versionIdentifiersKey, StoreMetadata.storeTypeKey,
        ]
        members += otherEntries.filter { !reserved.contains($0.key) }
        return BinaryPropertyList.encode(.dictionary(members))
    }
}
