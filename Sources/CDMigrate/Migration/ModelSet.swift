/// Every version of a data model together with the mapping models written between them: what an
/// app ships so that a store of any released version can be brought up to date, one version at a
/// time (see `MigrationPlan`).
///
/// Read from:
/// - an Xcode `.xcdatamodeld`: its versions, and the `.xcmappingmodel` bundles (and
///   `*.mapping.json` files) beside it in its folder or inside it;
/// - a folder of JSON models (see `ModelVersionSet`): the `*.mapping.json` files (and
///   `.xcmappingmodel` bundles) in the same folder;
/// - a compiled `.momd`: its versions, and the `.cdm` mapping models inside it or beside it.
///
/// A `migration-passes.json` file in the folder (or beside the `.xcdatamodeld` / `.momd`) may
/// name the mapping models of a step and their order (docs/cli.md, "Progressive migration").
///
/// Core Data counterpart: the app bundle `NSMappingModel(from:forSourceModel:destinationModel:)`
/// searches, with the versions of the `.momd`.
public struct ModelSet {
    /// The path the set was read from.
    public let path: String
    /// Version names, oldest first (natural order: "v2" before "v10").
    public let versionNames: [String]
    /// The current version (the `.xcdatamodeld`'s `.xccurrentversion`, else the last version).
    public let currentVersionName: String
    /// The models, by version name.
    public let models: [String: ManagedObjectModel]
    /// The mapping model files found, in file-name order.
    public let mappingModels: [MappingModelFile]
    /// Per step ("source → destination" version names), the mapping model names the passes
    /// manifest lists, in pass order.
    public let passOrder: [Step: [String]]
    /// What loading noticed: files skipped, mapping models that record no versions.
    public let warnings: [String]

    /// A pair of versions, source and destination.
    public struct Step: Hashable, CustomStringConvertible {
        /// The version migrated from.
        public var sourceVersionName: String
        /// The version migrated to.
        public var destinationVersionName: String
        /// The step from `source` to `destination` (version names).
        public init(_ source: String, _ destination: String) { sourceVersionName = source; destinationVersionName = destination }
        /// "source → destination".
        public var description: String { "\(sourceVersionName) → \(destinationVersionName)" }
    }

    /// Reads the versions and the mapping models at `path`.
    ///
    /// - Parameter path: an `.xcdatamodeld`, a folder of JSON models or a `.momd`.
    /// - Throws: `MigrationError` as `ModelVersionSet(contentsOf:)` or `CompiledModelBundle(contentsOf:)`;
    ///   `.invalidMapping` for a mapping model file that cannot be read (naming it) or a passes
    ///   manifest that does not parse or names a mapping model that is not there.
    public init(contentsOf path: String) throws {
        var trimmed = path
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed.removeLast() }
        self.path = trimmed
        var warnings: [String] = []
        var folders: [String]
        if CompiledModelBundle.isBundle(trimmed) && ModelReader.trimmedExtension(trimmed) != "xcdatamodeld" {
            let bundle = try CompiledModelBundle(contentsOf: trimmed)
            versionNames = bundle.versionNames.sorted(by: ModelVersionSet.versionOrder)
            currentVersionName = bundle.currentVersionName
            models = bundle.versions
            folders = [trimmed, FileIO.directory(of: trimmed)]
        } else {
            let set = try ModelVersionSet(contentsOf: trimmed)
            versionNames = set.versionNames
            currentVersionName = set.currentVersionName
            models = set.models
            warnings += set.warnings
            folders = ModelReader.trimmedExtension(trimmed) == "xcdatamodeld" ? [trimmed, FileIO.directory(of: trimmed)] : [trimmed]
        }
        if folders.count == 2 && folders[0] == folders[1] { folders.removeLast() }
        var files: [MappingModelFile] = []
        var seenNames = Set<String>()
        var manifest: String?
        for folder in folders {
            for entry in try FileIO.directoryEntries(path: folder) {
                let file = folder + "/" + entry
                if entry == ModelSet.manifestName { manifest = manifest ?? file; continue }
                guard let kind = MappingModelFile.Kind(fileName: entry) else { continue }
                do {
                    guard let mapping = try MappingModelFile.read(path: file, kind: kind, warnings: &warnings) else { continue }
                    if !seenNames.insert(mapping.name).inserted {
                        warnings.append("'\(file)': a mapping model named '\(mapping.name)' was already found; this one is ignored")
                        continue
                    }
                    files.append(mapping)
                } catch var error as MigrationError {
                    if !error.message.contains(file) { error.message = "'\(file)': " + error.message }
                    throw error
                }
            }
        }
        let versionSet = Set(versionNames)
        for file in files {
            for name in [file.sourceVersionName, file.destinationVersionName].compactMap({ $0 }) where !versionSet.contains(name) {
                warnings.append("'\(file.path)' records version '\(name)', which is not in the set (\(versionNames.joined(separator: ", "))): no step can use it")
            }
        }
        mappingModels = files.sorted { $0.fileName < $1.fileName }
        let known = Set(files.map { $0.name })
        var order: [Step: [String]] = [:]
        if let manifest = manifest {
            order = try ModelSet.readManifest(manifest, versions: Set(versionNames), mappings: known)
        }
        passOrder = order
        warnings += ModelSet.unorderedPassWarnings(versionNames: versionNames, models: models, mappingModels: mappingModels, passOrder: order)
        self.warnings = warnings
    }

    /// The model of the current version, nil when the set has none of that name.
    public var currentModel: ManagedObjectModel? { models[currentVersionName] }

    /// The name of the passes manifest.
    public static let manifestName = "migration-passes.json"

    /// The version a store was written with (the first in version order whose entity hashes equal
    /// the store's), nil when none.
    ///
    /// Core Data counterpart: `NSManagedObjectModel.mergedModel(from:forStoreMetadata:)`.
    public func versionName(forStoreMetadata metadata: StoreMetadata) -> String? {
        versionNames.first { models[$0]?.isCompatible(withStoreMetadata: metadata) == true }
    }

    /// For each step (two versions in a row) that several mapping models match and the passes
    /// manifest does not list: a warning naming them in the order they run (file-name order),
    /// since the order can change what a pass finds.
    static func unorderedPassWarnings(versionNames: [String], models: [String: ManagedObjectModel],
                                      mappingModels: [MappingModelFile], passOrder: [Step: [String]]) -> [String] {
        var warnings: [String] = []
        for (from, to) in zip(versionNames, versionNames.dropFirst()) {
            let step = Step(from, to)
            guard passOrder[step] == nil, let source = models[from], let destination = models[to] else { continue }
            let matching = mappingModels.filter { $0.matches(source: source, sourceVersionName: from, destination: destination, destinationVersionName: to) }
            guard matching.count > 1 else { continue }
            let order = matching.enumerated().map { "\($0.offset + 1). '\($0.element.name)' (\($0.element.path))" }.joined(separator: ", ")
            let listed = matching.map { "\"\($0.name)\"" }.joined(separator: ", ")
            warnings.append("""
                \(step): \(matching.count) mapping models match and no '\(manifestName)' orders them, so they run as passes \
                in file-name order: \(order); the order decides what a pass finds of another's work (a policy fetching \
                what an earlier pass made, a look-up across passes): to set it, list them in '\(manifestName)' \
                ({"steps": [{"from": "\(from)", "to": "\(to)", "passes": [\(listed)]}]})
                """)
        }
        return warnings
    }

    /// `{"steps": [{"from": "v2", "to": "v3", "passes": ["A", "B"]}]}`.
    static func readManifest(_ file: String, versions: Set<String>, mappings: Set<String>) throws -> [Step: [String]] {
        let json = try JSON.load(path: file)
        var root = JSONReader(json, path: "$", code: .invalidMapping, what: "a passes manifest")
        var order: [Step: [String]] = [:]
        for (i, item) in root.array("steps").enumerated() {
            var r = JSONReader(item, path: "$.steps[\(i)]", code: .invalidMapping, what: "a step")
            let from = r.string("from", required: true, what: "step") ?? ""
            let to = r.string("to", required: true, what: "step") ?? ""
            var passes: [String] = []
            for (j, pass) in (r.value("passes")?.arrayValue ?? []).enumerated() {
                guard let name = pass.stringValue else {
                    throw MigrationError(.invalidMapping, "'\(file)': passes must be mapping model names", path: r.path + ".passes[\(j)]")
                }
                guard mappings.contains(name) else {
                    throw MigrationError(.invalidMapping, "'\(file)' names mapping model '\(name)', which is not in the model set (it holds \(mappings.sorted().joined(separator: ", ")))", path: r.path + ".passes[\(j)]")
                }
                passes.append(name)
            }
            _ = r.value("comment")
            r.rejectUnknownKeys(what: "the step")
            if let problem = r.problems.first { throw MigrationError(problem.code, "'\(file)': " + problem.message, path: problem.path) }
            for version in [from, to] where !versions.contains(version) {
                throw MigrationError(.invalidMapping, "'\(file)' names version '\(version)', which is not in the model set (it holds \(versions.sorted(by: ModelVersionSet.versionOrder).joined(separator: ", ")))", path: r.path)
            }
            order[Step(from, to)] = passes
        }
        _ = root.value("comment")
        root.rejectUnknownKeys(what: "the passes manifest")
        if let problem = root.problems.first { throw MigrationError(problem.code, "'\(file)': " + problem.message, path: problem.path) }
        return order
    }
}
