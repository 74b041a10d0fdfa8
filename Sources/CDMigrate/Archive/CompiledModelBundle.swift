/// A compiled versioned model (`.momd` folder): one `.mom` per model version, and
/// `VersionInfo.plist` naming the current version (`NSManagedObjectModel_CurrentVersionName`)
/// and, per version, the entity version hashes Xcode's compiler computed
/// (`NSManagedObjectModel_VersionHashes`).
///
/// Core Data counterpart: the bundle `NSManagedObjectModel(contentsOf:)` opens for a `.momd` URL,
/// which loads the current version.
package final class CompiledModelBundle {
    /// The folder.
    package let path: String
    /// The version `NSManagedObjectModel(contentsOf:)` would load.
    package let currentVersionName: String
    /// Every version listed in `VersionInfo.plist`, by name (the `.mom` file name without extension).
    package let versions: [String: ManagedObjectModel]
    /// Per version name, the entity version hashes recorded in `VersionInfo.plist`.
    package let versionHashes: [String: [String: [UInt8]]]

    /// The current version's model.
    package let currentModel: ManagedObjectModel

    /// Version names, sorted.
    package var versionNames: [String] { versions.keys.sorted() }

    /// Reads `VersionInfo.plist` and every version's `.mom`.
    ///
    /// - Parameter path: the `.momd` folder (any folder holding a `VersionInfo.plist`).
    /// - Throws: `MigrationError` `.io` when a file cannot be read, `.invalidModel` when
    ///   `VersionInfo.plist` lacks the current version or its hashes, or a version's model is not valid.
    package init(contentsOf path: String) throws {
        var folder = path
        while folder.count > 1 && folder.hasSuffix("/") { folder.removeLast() }
        self.path = folder
        let infoPath = folder + "/VersionInfo.plist"
        let what = "the version information '\(infoPath)'"
        let info: PropertyListValue
        do {
            info = try BinaryPropertyList.decode(try FileIO.readBytes(path: infoPath))
        } catch let error as MigrationError where error.code != .io {
            throw MigrationError(.invalidModel, "\(what) is not a readable binary property list: \(error.message)")
        }
        guard case .string(let current)? = info["NSManagedObjectModel_CurrentVersionName"] else {
            throw MigrationError(.invalidModel, "\(what) has no NSManagedObjectModel_CurrentVersionName")
        }
        guard case .dictionary(let versionList)? = info["NSManagedObjectModel_VersionHashes"] else {
            throw MigrationError(.invalidModel, "\(what) has no NSManagedObjectModel_VersionHashes dictionary")
        }
        var hashes: [String: [String: [UInt8]]] = [:]
        var models: [String: ManagedObjectModel] = [:]
        for (version, entry) in versionList {
            guard case .dictionary(let entities) = entry, !version.contains("/") else {
                throw MigrationError(.invalidModel, "\(what): version '\(version)' has no dictionary of entity hashes")
            }
            var entityHashes: [String: [UInt8]] = [:]
            for (entity, hash) in entities {
                guard case .data(let bytes) = hash else {
                    throw MigrationError(
                        .invalidModel, "\(what): the hash of entity '\(entity)' in version '\(version)' is not data")
                }
                entityHashes[entity] = bytes
            }
            hashes[version] = entityHashes
            let momPath = folder + "/" + version + ".mom"
            models[version] = try CompiledModelReader.model(
                fromArchive: try FileIO.readBytes(path: momPath), name: version,
                what: "the compiled model '\(momPath)'")
        }
        guard let currentModel = models[current] else {
            throw MigrationError(
                .invalidModel,
                "\(what) names current version '\(current)', which is not among its versions (\(models.keys.sorted().joined(separator: ", ")))"
            )
        }
        currentVersionName = current
        self.currentModel = currentModel
        versions = models
        versionHashes = hashes
    }

    /// Whether a path is a compiled model bundle: a `.momd`, or any folder with a `VersionInfo.plist`.
    static func isBundle(_ path: String) -> Bool {
        var trimmed = path
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed.removeLast() }
        return trimmed.hasSuffix(".momd") || FileIO.exists(trimmed + "/VersionInfo.plist")
    }
}
