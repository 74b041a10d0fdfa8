#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The steps that bring a store from the version it was written with to a target version, one
/// version at a time in the model set's order, each with the mapping models written for it or
/// else Core Data's inferred mapping.
///
/// Core Data counterpart: the stages of an `NSStagedMigrationManager`, and what
/// `NSPersistentStoreCoordinator` does on opening an old store: find the store's model by its
/// metadata (`mergedModel(from:forStoreMetadata:)`), then a mapping model per step
/// (`NSMappingModel(from:forSourceModel:destinationModel:)`, else
/// `inferredMappingModel(forSourceModel:destinationModel:)`).
public struct MigrationPlan {
    /// The store the plan starts from.
    public let storePath: String
    /// The version the store was written with.
    public let storeVersionName: String
    /// The version the plan ends at.
    public let targetVersionName: String
    /// Empty when the store is already at the target version.
    public let stages: [MigrationStage]
    /// The model set's warnings and the planner's (mapping models ignored, and why).
    public let warnings: [String]

    /// Whether the store is already at the target version (no stages).
    public var isAtTarget: Bool { stages.isEmpty }

    /// Plans the migration of the store at `storePath` to `targetVersion` (default: the set's
    /// current version).
    ///
    /// - Parameters:
    ///   - storePath: the store (read-only: only its metadata is read).
    ///   - models: the versions and mapping models.
    ///   - targetVersion: a version name of the set; nil for the current one.
    /// - Throws: `MigrationError` — `.migrationMissingSourceModel` (134130) when no version of the
    ///   set matches the store's entity hashes (the message lists the store's hashes and each
    ///   version's differences); `.invalidArgument` for an unknown target or a target older than
    ///   the store; `.inferredMappingModel` (134190) for a step with no mapping model whose
    ///   changes cannot be inferred (naming entity, property and rule); `.invalidMapping` for a
    ///   matching mapping model that does not fit its models; the store's read errors.
    public init(storeAt storePath: String, models: ModelSet, targetVersion: String? = nil) throws {
        let info = try StoreInfo.readSource(at: storePath, countingRows: false)
        guard let storeVersion = models.versionName(forStoreMetadata: info.metadata) else {
            throw MigrationPlan.unmatchedStore(storePath, metadata: info.metadata, models: models)
        }
        try self.init(storePath: storePath, storeVersion: storeVersion, models: models, targetVersion: targetVersion)
    }

    /// Plans from a known store version (the store is not read).
    public init(storePath: String, storeVersion: String, models: ModelSet, targetVersion: String? = nil) throws {
        let target = targetVersion ?? models.currentVersionName
        guard let targetIndex = models.versionNames.firstIndex(of: target) else {
            throw MigrationError(.invalidArgument, "the model set '\(models.path)' has no version '\(target)' (it holds \(models.versionNames.joined(separator: ", ")))")
        }
        guard let storeIndex = models.versionNames.firstIndex(of: storeVersion) else {
            throw MigrationError(.invalidArgument, "the model set '\(models.path)' has no version '\(storeVersion)'")
        }
        if storeIndex > targetIndex {
            throw MigrationError(.invalidArgument, "the store '\(storePath)' is at version '\(storeVersion)', newer than the target '\(target)': cdmigrate migrates forward only")
        }
        var warnings = models.warnings
        var stages: [MigrationStage] = []
        // One version at a time, except where no mapping model records the next step and one
        // records a step from this version to a later one up to the target: that step is taken,
        // as the mapping model was written for it.
        let names = models.versionNames
        var i = storeIndex
        while i < targetIndex {
            var next = i + 1
            if !MigrationPlan.hasMappingModel(from: names[i], to: names[next], in: models), next < targetIndex,
               let later = (next + 1...targetIndex).first(where: { MigrationPlan.hasMappingModel(from: names[i], to: names[$0], in: models) }) {
                next = later
            }
            let stage = try MigrationPlan.stage(from: names[i], to: names[next], in: models, warnings: &warnings,
                                                skipping: Array(names[(i + 1)..<next]))
            stages.append(stage)
            i = next
        }
        self.storePath = storePath
        self.storeVersionName = storeVersion
        self.targetVersionName = target
        self.stages = stages
        self.warnings = warnings
    }

    /// Whether a mapping model (or the passes manifest) records the step.
    static func hasMappingModel(from source: String, to destination: String, in models: ModelSet) -> Bool {
        if models.passOrder[ModelSet.Step(source, destination)] != nil { return true }
        guard let sourceModel = models.models[source], let destinationModel = models.models[destination] else { return false }
        return models.mappingModels.contains {
            $0.matches(source: sourceModel, sourceVersionName: source, destination: destinationModel, destinationVersionName: destination)
        }
    }

    /// One step: the mapping models recorded for the pair (manifest order, else file-name
    /// order), else the inferred mapping. `skipping`: the versions the step passes over.
    static func stage(from source: String, to destination: String, in models: ModelSet, warnings: inout [String],
                      skipping: [String] = []) throws -> MigrationStage {
        guard let sourceModel = models.models[source], let destinationModel = models.models[destination] else {
            throw MigrationError(.invalidArgument, "the model set '\(models.path)' lacks version '\(source)' or '\(destination)'")
        }
        let step = ModelSet.Step(source, destination)
        let matching = models.mappingModels.filter {
            $0.matches(source: sourceModel, sourceVersionName: source, destination: destinationModel, destinationVersionName: destination)
        }
        var chosen = matching
        var reason: String
        if let listed = models.passOrder[step] {
            chosen = listed.compactMap { name in models.mappingModels.first { $0.name == name } }
            for file in chosen where !matching.contains(where: { $0.name == file.name }) {
                throw MigrationError(.invalidMapping, "'\(ModelSet.manifestName)' lists mapping model '\(file.name)' for \(step), but '\(file.path)' records other versions")
            }
            for file in matching where !listed.contains(file.name) {
                warnings.append("\(step): mapping model '\(file.name)' matches but '\(ModelSet.manifestName)' does not list it; it is not run")
            }
            reason = chosen.isEmpty ? "" : "passes in the order '\(ModelSet.manifestName)' lists"
        } else {
            reason = chosen.count > 1 ? "passes in file-name order" : ""
        }
        if !chosen.isEmpty {
            // A look-up by name of another pass's entity mapping (JSON and compiled files, read already): said as such.
            let unbound = chosen.compactMap { file in file.mapping.map { PassDependencies.Pass(name: file.name, model: $0) } }
            if unbound.count == chosen.count, let error = MigrationError.collecting(
                PassDependencies.lookUpsAcrossPasses(unbound).map { MigrationError($0.code, "\(step): " + $0.message, path: $0.path) },
                code: .invalidMapping, summary: "\(step): passes look up entity mappings of other passes") {
                throw error
            }
            var bound: [MappingModel] = []
            for file in chosen {
                do {
                    bound.append(try file.mappingModel(source: sourceModel, destination: destinationModel))
                } catch let error as MigrationError {
                    throw MigrationError(error.code, "mapping model '\(file.name)' (\(file.path)) records \(step) but does not fit those models: \(error.message)", path: error.path, offset: error.offset, byteOffset: error.byteOffset, underlying: error.underlying)
                }
            }
            // A pass that needs instances only another pass makes: said before the run.
            let passes = zip(chosen, bound).map { PassDependencies.Pass(name: $0.name, model: $1) }
            for warning in PassDependencies.warnings(passes) where !warnings.contains("\(step): " + warning) {
                warnings.append("\(step): " + warning)
            }
            let how = chosen.map { "'\($0.name)' (\(describeMatch($0)))" }.joined(separator: ", ")
            reason = "mapping model\(chosen.count == 1 ? "" : "s") \(how)" + (reason.isEmpty ? "" : "; " + reason)
            if !skipping.isEmpty {
                reason += "; it passes over \(skipping.map { "'\($0)'" }.joined(separator: ", ")), as the mapping model records this step"
            }
            return MigrationStage(sourceVersionName: source, destinationVersionName: destination, kind: .custom,
                                  mappingModelNames: chosen.map { $0.name }, mappingModels: bound, reason: reason,
                                  sourceModel: sourceModel, destinationModel: destinationModel)
        }
        let inferred: MappingModel
        do {
            inferred = try MappingModel.inferred(from: sourceModel, to: destinationModel)
        } catch let error as MigrationError {
            let problems = error.underlying.isEmpty ? [error.message] : error.underlying.map { $0.message }
            throw MigrationError(error.code, "\(step): no mapping model records these versions (\(models.mappingSearchDescription)) and Core Data's inferred mapping cannot be used: \(problems.joined(separator: "; "))", path: error.path, underlying: error.underlying)
        }
        return MigrationStage(sourceVersionName: source, destinationVersionName: destination, kind: .lightweight,
                              mappingModelNames: ["inferred"], mappingModels: [inferred],
                              reason: "no mapping model records these versions (\(models.mappingSearchDescription)), so Core Data's inferred mapping is used",
                              sourceModel: sourceModel, destinationModel: destinationModel)
    }

    static func describeMatch(_ file: MappingModelFile) -> String { file.matchDescription }

    /// Core Data's 134130 for a store no version matches, with the store's hashes and, per
    /// version, the entities that differ.
    static func unmatchedStore(_ path: String, metadata: StoreMetadata, models: ModelSet) -> MigrationError {
        let hashes = metadata.versionHashes.keys.sorted(by: VersionHash.nameOrder).map { "\($0) \(Base64.encode(metadata.versionHashes[$0] ?? []))" }
        var underlying: [MigrationError] = []
        for name in models.versionNames {
            guard let model = models.models[name] else { continue }
            let differences = model.versionDifferences(fromStoreMetadata: metadata)
            let shown = differences.prefix(5).map { $0.description }.joined(separator: "; ")
            underlying.append(MigrationError(.migrationMissingSourceModel, "version '\(name)' differs in \(differences.count) entit\(differences.count == 1 ? "y" : "ies"): \(shown)\(differences.count > 5 ? "; …" : "")"))
        }
        let what = metadata.isEmpty ? "records no entity version hashes" : "has entity version hashes \(hashes.joined(separator: ", "))"
        return MigrationError(.migrationMissingSourceModel, "no version of '\(models.path)' matches the store '\(path)', which \(what) (versions: \(models.versionNames.joined(separator: ", ")))", underlying: underlying)
    }
}
