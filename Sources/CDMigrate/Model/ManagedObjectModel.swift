/// NSManagedObjectModel: a set of entities, linked and validated.
///
/// Creating a model resolves parents, relationship destinations and inverses, checks the whole
/// structure (every problem is reported, each with its path in the model's JSON), numbers the
/// entities as Core Data's stores do and computes the version hashes (see `VersionHash`).
public final class ManagedObjectModel {
    /// The model's name (its file name or version name when read from a file).
    public let name: String?
    /// Free text naming the version, like NSManagedObjectModel.versionIdentifiers.
    public let versionIdentifier: String?
    /// Core Data's `versionIdentifiers`: the model's version identifier as a set (empty without
    /// one), so a policy ported from an app can test `manager.sourceModel.versionIdentifiers.contains("2")`.
    public var versionIdentifiers: Set<String> { versionIdentifier.map { [$0] } ?? [] }
    /// The entities, in the order the model lists them (Core Data: `entities`).
    public let entities: [EntityDescription]
    /// The entities by name (Core Data: `entitiesByName`).
    public let entitiesByName: [String: EntityDescription]
    /// Entities in store numbering order (`entityNumber` 1, 2, …).
    public private(set) var entitiesInStoreOrder: [EntityDescription] = []
    /// The model's version hash (`-[NSManagedObjectModel versionHash]`): SHA-256 over the entity
    /// hashes in entity-name order. Its base64 form is the store metadata's `NSStoreModelVersionChecksumKey`.
    public internal(set) var versionHash: [UInt8] = []
    /// SHA-512 over each entity's name and hash in entity-name order; its base64 form is the store
    /// metadata's `NSStoreModelVersionHashesDigest`.
    public internal(set) var versionHashesDigest: [UInt8] = []
    /// What loading noticed but did not refuse: explicit version hashes that differ from Core Data's,
    /// and parts of a model file cdmigrate does not keep (fetch indexes, fetch requests, configurations).
    public internal(set) var warnings: [String] = []
    /// NSManagedObjectModel.configurations: configuration name → the names of its entities
    /// (read from Xcode models; cdmigrate stores every entity whatever its configuration).
    public internal(set) var configurations: [String: [String]] = [:]
    /// NSManagedObjectModel.fetchRequestTemplatesByName, as the model file writes them.
    public internal(set) var fetchRequestTemplates: [String: FetchRequestTemplate] = [:]

    /// `NSStoreModelVersionChecksumKey`: the model's version hash in base64.
    public var versionChecksum: String { Base64.encode(versionHash) }
    /// `NSStoreModelVersionHashesDigest`: the digest in base64 (88 characters).
    public var versionHashesDigestBase64: String { Base64.encode(versionHashesDigest) }
    /// Set when the model was rebuilt from a store's schema rather than read (see
    /// `StoreModelRecovery`): what the schema could not tell, so a reader knows the model is a guess.
    public internal(set) var recoveryNotes: [String]? = nil
    /// Whether the model was rebuilt from a store's schema.
    public var isRecovered: Bool { recoveryNotes != nil }
    /// What the model's entities and properties hold to reach it (`OwnerReference`).
    let reference = ModelReference()

    deinit { reference.point(to: nil) }

    /// A model made in code; links the entities (parents, inverses, inherited properties), checks
    /// them and computes Apple's version hashes.
    ///
    /// - parameter name: The model's name, for messages.
    /// - parameter versionIdentifier: Core Data's `versionIdentifiers` entry, if any.
    /// - parameter entities: The entities.
    /// - throws: `MigrationError` `.invalidModel` collecting every problem found, each with its JSON path.
    ///
    /// Core Data: `NSManagedObjectModel()` with `entities` set.
    public init(name: String? = nil, versionIdentifier: String? = nil, entities: [EntityDescription]) throws {
        self.name = name
        self.versionIdentifier = versionIdentifier
        self.entities = entities
        var byName: [String: EntityDescription] = [:]
        var problems: [MigrationError] = []
        for (i, entity) in entities.enumerated() {
            if byName[entity.name] != nil {
                problems.append(
                    MigrationError(
                        .invalidModel, "duplicate entity name '\(entity.name)'", path: "$.entities[\(i)].name"))
            } else {
                byName[entity.name] = entity
            }
        }
        self.entitiesByName = byName
        reference.point(to: self)
        problems += link()
        if let error = MigrationError.collecting(
            problems, code: .invalidModel, summary: "the model \(name.map { "'\($0)' " } ?? "")is not valid")
        {
            throw error
        }
        number()
        warnings += VersionHash.computeHashes(of: self)
    }

    /// Takes over a model a reader made: the readers build models through `init(name:versionIdentifier:entities:)`
    /// and annotate them, and the public `init(contentsOf:)` and `init(json:)` hand that model's
    /// parts to the new instance, which its entities then point at.
    package init(adopting read: ManagedObjectModel) {
        name = read.name
        versionIdentifier = read.versionIdentifier
        entities = read.entities
        entitiesByName = read.entitiesByName
        entitiesInStoreOrder = read.entitiesInStoreOrder
        versionHash = read.versionHash
        versionHashesDigest = read.versionHashesDigest
        warnings = read.warnings
        configurations = read.configurations
        fetchRequestTemplates = read.fetchRequestTemplates
        recoveryNotes = read.recoveryNotes
        reference.point(to: self)
        for entity in entities { entity.belong(to: reference) }
    }

    /// The entity called `name`, or nil.
    public func entity(named name: String) -> EntityDescription? { entitiesByName[name] }

    /// Each entity's version hash by entity name (Core Data: `entityVersionHashesByName`).
    public var entityVersionHashes: [String: [UInt8]] {
        var hashes: [String: [UInt8]] = [:]
        for entity in entities { hashes[entity.name] = entity.versionHash }
        return hashes
    }

    private func number() {
        var ordered: [EntityDescription] = []
        for root in entities.filter({ $0.parent == nil }).sorted(by: { $0.name < $1.name }) {
            ordered += root.selfAndDescendants
        }
        for (i, entity) in ordered.enumerated() { entity.entityNumber = i + 1 }
        entitiesInStoreOrder = ordered
    }
}

/// How a model's entities and properties reach it.
typealias ModelReference = OwnerReference<ManagedObjectModel>
