/// NSManagedObjectID: which store, which entity, which row.
public struct ObjectID: Hashable, CustomStringConvertible {
    /// The store's UUID (`Z_METADATA.Z_UUID`); empty for an instance that belongs to no store.
    public let storeIdentifier: String
    /// The instance's entity.
    public let entityName: String
    /// Its row's `Z_PK`.
    public internal(set) var primaryKey: Int64

    /// The ID of row `primaryKey` of `entityName` in the store with UUID `storeIdentifier`.
    public init(storeIdentifier: String, entityName: String, primaryKey: Int64) {
        self.storeIdentifier = storeIdentifier
        self.entityName = entityName
        self.primaryKey = primaryKey
    }

    /// Core Data's URI form: `x-coredata://<store UUID>/<Entity>/p<Z_PK>`.
    public var uriRepresentation: String { "x-coredata://\(storeIdentifier)/\(entityName)/p\(primaryKey)" }

    /// Parses the URI form; nil when it is not one.
    public init?(uri: String) {
        let prefix = "x-coredata://"
        guard uri.hasPrefix(prefix) else { return nil }
        let parts = uri.dropFirst(prefix.count).split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[2].first == "p", let pk = Int64(parts[2].dropFirst()), !parts[1].isEmpty else {
            return nil
        }
        self.init(storeIdentifier: String(parts[0]), entityName: String(parts[1]), primaryKey: pk)
    }

    /// `uriRepresentation`.
    public var description: String { uriRepresentation }
}
