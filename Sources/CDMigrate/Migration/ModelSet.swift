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
    /// Version names, oldest first: natural order ("v2" before "v10"), the current version last,
    /// and the steps mapping models record before either.
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
        public init(_ source: String, _ destination: String) {
            sourceVersionName = source
            destinationVersionName = destination
        }
        /// "source → destination".
        public var description: String { "\(sourceVersionName) → \(destinationVersionName)" }
    }

    /// Reads the versions and the mapping models at `path`, and those kept in `mappingFolders`.
    ///
    /// Versions are ordered oldest first: natural order of their names, the current version last,
    /// and where mapping models record their source and destination versions, those steps
    /// decide (a mapping model from "Initial" to "Tags" puts "Initial" first whatever the names).
    ///
    /// - Parameters:
    ///   - path: an `.xcdatamodeld`, a folder of JSON models or a `.momd`.
    ///   - mappingFolders: more folders holding mapping models (`.xcmappingmodel`,
    ///     `*.mapping.json`, `.cdm`), searched with their subfolders, as projects keep them apart
    ///     from the model (`Migrations/`, `Mappings/`); a `migration-passes.json` there counts
    ///     when the model's own folders have none.
    /// - Throws: `MigrationError` as `ModelVersionSet(contentsOf:)` or `CompiledModelBundle(contentsOf:)`;
    ///   `.io` for a mapping folder that cannot be read; `.invalidMapping` for a mapping model file
    ///   that cannot be read (naming it) or a passes manifest that does not parse or names a
    ///   mapping model that is not there.
    public init(contentsOf path: String, mappingFolders: [String] = []) throws {
        var trimmed = path
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed.removeLast() }
        self.path = trimmed
        var warnings: [String] = []
        var folders: [String]
        var names: [String]
        var current: String
        var currentIsNamed = true
        if CompiledModelBundle.isBundle(trimmed) && ModelReader.trimmedExtension(trimmed) != "xcdatamodeld" {
            let bundle = try CompiledModelBundle(contentsOf: trimmed)
            names = bundle.versionNames.sorted(by: ModelVersionSet.versionOrder)
            if let index = names.firstIndex(of: bundle.currentVersionName) { names.append(names.remove(at: index)) }
            current = bundle.currentVersionName
            models = bundle.versions
            folders = [trimmed, FileIO.directory(of: trimmed)]
        } else {
            let set = try ModelVersionSet(contentsOf: trimmed)
            names = set.versionNames
            current = set.currentVersionName
            currentIsNamed = set.namesCurrentVersion
            models = set.models
            warnings += set.warnings
            folders =
                ModelReader.trimmedExtension(trimmed) == "xcdatamodeld"
                ? [trimmed, FileIO.directory(of: trimmed)] : [trimmed]
        }
        if folders.count == 2 && folders[0] == folders[1] { folders.removeLast() }
        var files: [MappingModelFile] = []
        var seenNames = Set<String>()
        var manifest: String?
        func take(_ folder: String, _ entry: String) throws -> Bool {
            let file = folder + "/" + entry
            if entry == ModelSet.manifestName {
                manifest = manifest ?? file
                return true
            }
            guard let kind = MappingModelFile.Kind(fileName: entry) else { return false }
            do {
                guard let mapping = try MappingModelFile.read(path: file, kind: kind, warnings: &warnings) else {
                    return true
                }
                if !seenNames.insert(mapping.name).inserted {
                    warnings.append(
                        "'\(file)': a mapping model named '\(mapping.name)' was already found; this one is ignored")
                    return true
                }
                files.append(mapping)
            } catch var error as MigrationError {
                if !error.message.contains(file) { error.message = "'\(file)': " + error.message }
                throw error
            }
            return true
        }
        for folder in folders {
            for entry in try FileIO.directoryEntries(path: folder) { _ = try take(folder, entry) }
        }
        var searched = folders
        for folder in mappingFolders {
            var root = folder
            while root.count > 1 && root.hasSuffix("/") { root.removeLast() }
            guard FileIO.isDirectory(root) else {
                throw MigrationError(.io, "the mapping models folder '\(root)' is not a folder")
            }
            searched.append(root)
            // Depth-first, bounded: a folder is searched with its subfolders (hidden ones and
            // model bundles left out), never deeper than `maximumFolderDepth`.
            var pending: [(String, Int)] = [(root, 0)]
            while let (current, depth) = pending.popLast() {
                var subfolders: [String] = []
                for entry in try FileIO.directoryEntries(path: current) where !entry.hasPrefix(".") {
                    if try take(current, entry) { continue }
                    let child = current + "/" + entry
                    if depth < ModelSet.maximumFolderDepth, FileIO.isDirectory(child),
                        !entry.hasSuffix(".xcdatamodeld"), !entry.hasSuffix(".xcdatamodel")
                    {
                        subfolders.append(child)
                    }
                }
                pending += subfolders.reversed().map { ($0, depth + 1) }
            }
        }
        mappingSearchPaths = searched
        let loaded = models
        // Xcode mapping models: the embedded models' hashes decide, where they match versions of
        // the set; where they match none, the version names of the model paths stand in.
        for index in files.indices
        where files[index].kind == .xcode
            && !(files[index].sourceHashes.isEmpty && files[index].destinationHashes.isEmpty)
        {
            let file = files[index]
            let sources = names.filter {
                loaded[$0].map { MappingModelFile.fits(file.sourceHashes, $0, whole: true) } ?? false
            }
            let destinations = names.filter {
                loaded[$0].map { MappingModelFile.fits(file.destinationHashes, $0, whole: true) } ?? false
            }
            if sources.isEmpty || destinations.isEmpty {
                files[index].namesStandIn = true
                let side = sources.isEmpty ? "source" : "destination"
                warnings.append(
                    "'\(file.path)': its embedded \(side) model matches no version of the set by entity hashes; the version names of its model paths are used"
                )
                continue
            }
            for (recorded, matched, side) in [
                (file.sourceVersionName, sources, "source"), (file.destinationVersionName, destinations, "destination"),
            ] {
                if let recorded, !matched.contains(recorded) {
                    warnings.append(
                        "'\(file.path)': its \(side) model path names version '\(recorded)', but the model it embeds is version \(matched.map { "'\($0)'" }.joined(separator: " or ")) by entity hashes, which is used"
                    )
                }
            }
        }
        let versionSet = Set(names)
        for file in files
        where file.kind != .xcode || file.namesStandIn || (file.sourceHashes.isEmpty && file.destinationHashes.isEmpty)
        {
            for name in [file.sourceVersionName, file.destinationVersionName].compactMap({ $0 })
            where !versionSet.contains(name) {
                warnings.append(
                    "'\(file.path)' records version '\(name)', which is not in the set (\(names.joined(separator: ", "))): no step can use it"
                )
            }
        }
        mappingModels = files.sorted { $0.fileName < $1.fileName }
        versionNames = ModelSet.order(names, models: loaded, mappings: mappingModels, warnings: &warnings)
        // A current version no file names is the newest: the last once mapping models have spoken.
        if !currentIsNamed, let last = versionNames.last, last != current {
            warnings = warnings.map {
                $0.contains("is taken as the current one")
                    ? "'\(trimmed)' names no current version: '\(last)', the last in the order of its mapping models, is taken as the current one"
                    : $0
            }
            current = last
        }
        if let index = versionNames.firstIndex(of: current), index < versionNames.count - 1 {
            // Mapping models lead on from the current version: say so instead of "the newest".
            let later = versionNames[(index + 1)...].map { "'\($0)'" }.joined(separator: ", ")
            warnings.removeAll { $0.contains("the current version '\(current)' is taken as the newest") }
            warnings.append(
                "'\(trimmed)': the current version '\(current)' is not the newest: mapping models record steps from it to \(later)"
            )
        }
        currentVersionName = current
        let known = Set(files.map { $0.name })
        var order: [Step: [String]] = [:]
        if let manifest = manifest {
            order = try ModelSet.readManifest(manifest, versions: Set(versionNames), mappings: known)
        }
        passOrder = order
        warnings += ModelSet.unorderedPassWarnings(
            versionNames: versionNames, models: models, mappingModels: mappingModels, passOrder: order)
        self.warnings = warnings
    }

    /// How deep `ModelSet(contentsOf:mappingFolders:)` searches a mapping models folder.
    public static let maximumFolderDepth = 16

    /// The folders the set's mapping models were looked for in: the model's own (and, for an
    /// `.xcdatamodeld` or `.momd`, the folder holding it), then the mapping folders given.
    public let mappingSearchPaths: [String]

    /// Where mapping models were looked for and how many were found, for messages: "looked in
    /// 'A' and 'B', found 2 mapping models".
    public var mappingSearchDescription: String {
        let places = mappingSearchPaths.map { "'\($0)'" }
        let list =
            places.count <= 1
            ? places.joined() : places.dropLast().joined(separator: ", ") + " and " + (places.last ?? "")
        let count = mappingModels.count
        return "looked in \(list), found \(count) mapping model\(count == 1 ? "" : "s")"
    }

    /// The versions in `names` order, moved where mapping models record steps between them: a
    /// version a mapping model starts from comes before the one it ends at (a stable topological
    /// order; steps that contradict each other are ignored with a warning).
    static func order(
        _ names: [String], models: [String: ManagedObjectModel], mappings: [MappingModelFile], warnings: inout [String]
    ) -> [String] {
        let index = Dictionary(names.enumerated().map { ($1, $0) }, uniquingKeysWith: { a, _ in a })
        var edges: [Int: Set<Int>] = [:]
        for file in mappings {
            func versions(_ hashes: [String: [UInt8]], _ name: String?) -> [String] {
                if !hashes.isEmpty && !file.namesStandIn {
                    return names.filter {
                        models[$0].map { MappingModelFile.fits(hashes, $0, whole: file.hashesAreWhole) } ?? false
                    }
                }
                return name.map { index[$0] != nil ? [$0] : [] } ?? []
            }
            let from = versions(file.sourceHashes, file.sourceVersionName)
            let to = versions(file.destinationHashes, file.destinationVersionName)
            guard from.count == 1, to.count == 1, let a = index[from[0]], let b = index[to[0]], a != b else { continue }
            edges[a, default: []].insert(b)
        }
        guard !edges.isEmpty else { return names }
        var incoming = [Int](repeating: 0, count: names.count)
        for (_, targets) in edges { for b in targets { incoming[b] += 1 } }
        var placed = [Bool](repeating: false, count: names.count)
        var result: [String] = []
        var ignoredCycle = false
        while result.count < names.count {
            var next = (0..<names.count).first { !placed[$0] && incoming[$0] == 0 }
            if next == nil {
                next = (0..<names.count).first { !placed[$0] }
                ignoredCycle = true
            }
            guard let n = next else { break }
            placed[n] = true
            result.append(names[n])
            for b in edges[n] ?? [] { incoming[b] -= 1 }
        }
        if ignoredCycle {
            warnings.append(
                "the steps mapping models record form a cycle between versions; where they contradict each other, the versions keep the order of their names"
            )
        }
        if result != names {
            warnings.append(
                "versions ordered by the steps their mapping models record: \(result.joined(separator: ", ")) (by name: \(names.joined(separator: ", ")))"
            )
        }
        return result
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
    static func unorderedPassWarnings(
        versionNames: [String], models: [String: ManagedObjectModel],
        mappingModels: [MappingModelFile], passOrder: [Step: [String]]
    ) -> [String] {
        var warnings: [String] = []
        for (from, to) in zip(versionNames, versionNames.dropFirst()) {
            let step = Step(from, to)
            guard passOrder[step] == nil, let source = models[from], let destination = models[to] else { continue }
            let matching = mappingModels.filter {
                $0.matches(
                    source: source, sourceVersionName: from, destination: destination, destinationVersionName: to)
            }
            guard matching.count > 1 else { continue }
            let order = matching.enumerated().map { "\($0.offset + 1). '\($0.element.name)' (\($0.element.path))" }
                .joined(separator: ", ")
            let listed = matching.map { "\"\($0.name)\"" }.joined(separator: ", ")
            warnings.append(
                """
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
                    throw MigrationError(
                        .invalidMapping, "'\(file)': passes must be mapping model names", path: r.path + ".passes[\(j)]"
                    )
                }
                guard mappings.contains(name) else {
                    throw MigrationError(
                        .invalidMapping,
                        "'\(file)' names mapping model '\(name)', which is not in the model set (it holds \(mappings.sorted().joined(separator: ", ")))",
                        path: r.path + ".passes[\(j)]")
                }
                passes.append(name)
            }
            _ = r.value("comment")
            r.rejectUnknownKeys(what: "the step")
            if let problem = r.problems.first {
                throw MigrationError(problem.code, "'\(file)': " + problem.message, path: problem.path)
            }
            for version in [from, to] where !versions.contains(version) {
                throw MigrationError(
                    .invalidMapping,
                    "'\(file)' names version '\(version)', which is not in the model set (it holds \(versions.sorted(by: ModelVersionSet.versionOrder).joined(separator: ", ")))",
                    path: r.path)
            }
            order[Step(from, to)] = passes
        }
        _ = root.value("comment")
        root.rejectUnknownKeys(what: "the passes manifest")
        if let problem = root.problems.first {
            throw MigrationError(problem.code, "'\(file)': " + problem.message, path: problem.path)
        }
        return order
    }
}
