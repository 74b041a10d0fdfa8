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

    public static func == (lhs: StoreMetadata, rhs: StoreMetadata) -> Bool {
        lhs.storeUUID == rhs.storeUUID && lhs.storeType == rhs.storeType && lhs.versionHashes == rhs.versionHashes
            && lhs.versionIdentifiers == rhs.versionIdentifiers && lhs.isEmpty == rhs.isEmpty
            && PropertyListValue.dictionary(lhs.otherEntries) == PropertyListValue.dictionary(rhs.otherEntries)
    }

    /// Metadata for a new store written for `model`.
    public init(storeUUID: String, model: ManagedObjectModel) {
        self.storeUUID = storeUUID
        self.storeType = "SQLite"
        self.versionHashes = model.entityVersionHashes
        self.versionIdentifiers = [model.versionIdentifier ?? ""]
        self.otherEntries = [
            ("NSStoreModelVersionHashesVersion", .integer(3)),
            ("NSPersistenceFrameworkVersion", .integer(847)),
            ("_NSAutoVacuumLevel", .string("2")),
        ]
        self.isEmpty = false
    }

    /// Reads the metadata from `Z_UUID` and the bytes of `Z_PLIST` (empty bytes give `isEmpty`).
    public init(storeUUID: String, plist: [UInt8]) throws {
        throw MigrationError(.migrationManagerSourceStore, "store metadata is not readable yet")
    }

    /// The `Z_PLIST` bytes.
    public func plistBytes() -> [UInt8] {
        return []
    }
}
