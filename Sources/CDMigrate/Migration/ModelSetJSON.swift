/// A model set (an `.xcdatamodeld` with its `.xcmappingmodel`s, a `.momd` with its `.cdm`s) as
/// the files of a folder of JSON models that `ModelSet(contentsOf:)` reads back as the same set:
/// what `cdmigrate import` writes and `cdm_model_set_json` returns.
///
/// - `<version>.json` per version (`ManagedObjectModel.jsonText()`, with Apple's entity hashes);
/// - `current-version`, naming the current version;
/// - `<name>.mapping.json` per mapping model of the set, bound to the two versions it records
///   (an Xcode mapping compiled against them) and written with the entity version hashes of
///   those versions, so that the folder's plan takes it for the same step;
/// - `migration-passes.json` when the set has one (the names stay the mapping models' names).
///
/// A mapping model that records no pair of the set's versions is left out, with a warning.
///
/// Core Data counterpart: none (Xcode compiles the same files into a `.momd` and `.cdm`s).
package struct ModelSetJSON {
    /// The versions, in the set's order.
    package let versionNames: [String]
    /// The current version's name.
    package let currentVersionName: String
    /// Each version's model JSON text, in `versionNames` order.
    package let models: [(version: String, text: String)]
    /// Each written mapping model: its name, the step it is for and its mapping JSON text, in file-name order.
    package let mappingModels: [(name: String, step: ModelSet.Step, text: String)]
    /// The passes manifest's text, when the set has one.
    package let passesManifest: String?
    /// What reading the set noticed (a version's own warnings prefixed with its name), and the
    /// mapping models left out.
    package let warnings: [String]
    /// Where mapping models were looked for and how many were found (`ModelSet.mappingSearchDescription`).
    package let mappingSearchDescription: String

    /// Reads the set at `path` and binds every mapping model to its versions.
    ///
    /// - Parameters:
    ///   - path: an `.xcdatamodeld`, a `.momd` or a folder of JSON models.
    ///   - mappingFolders: more folders of mapping models (see `ModelSet(contentsOf:mappingFolders:)`).
    /// - Throws: `MigrationError` as `ModelSet(contentsOf:)`; `.invalidMapping` naming the file
    ///   of a mapping model that does not fit the versions it records.
    package init(contentsOf path: String, mappingFolders: [String] = []) throws {
        let set = try ModelSet(contentsOf: path, mappingFolders: mappingFolders)
        mappingSearchDescription = set.mappingSearchDescription
        versionNames = set.versionNames
        currentVersionName = set.currentVersionName
        models = set.versionNames.compactMap { name in set.models[name].map { (name, $0.jsonText() + "\n") } }
        var warnings = set.warnings
        if set.mappingModels.isEmpty && set.versionNames.count > 1 {
            warnings.append(
                "no mapping model found (\(set.mappingSearchDescription)): every step is Core Data's inferred mapping; mapping models kept in another folder are found when it is given (cdmigrate --mappings DIR)"
            )
        }
        for name in set.versionNames { warnings += (set.models[name]?.warnings ?? []).map { "\(name): \($0)" } }
        var mappings: [(name: String, step: ModelSet.Step, text: String)] = []
        for file in set.mappingModels {
            guard let step = ModelSetJSON.step(of: file, in: set) else {
                warnings.append("'\(file.path)' records no pair of the set's versions: not written")
                continue
            }
            guard let source = set.models[step.sourceVersionName],
                let destination = set.models[step.destinationVersionName]
            else { continue }
            do {
                let mapping = try file.mappingModel(source: source, destination: destination)
                mappings.append((file.name, step, mapping.jsonText() + "\n"))
            } catch var error as MigrationError {
                if !error.message.contains(file.path) { error.message = "'\(file.path)' (\(step)): " + error.message }
                throw error
            }
        }
        mappingModels = mappings
        if set.passOrder.isEmpty {
            passesManifest = nil
        } else {
            let steps = set.passOrder.sorted { a, b in
                a.key.sourceVersionName != b.key.sourceVersionName
                    ? ModelVersionSet.versionOrder(a.key.sourceVersionName, b.key.sourceVersionName)
                    : ModelVersionSet.versionOrder(a.key.destinationVersionName, b.key.destinationVersionName)
            }
            let json = JSON.object([
                (
                    "steps",
                    .array(
                        steps.map { step in
                            .object([
                                ("from", .string(step.key.sourceVersionName)),
                                ("to", .string(step.key.destinationVersionName)),
                                ("passes", .array(step.value.map { .string($0) })),
                            ])
                        })
                )
            ])
            passesManifest = json.serialized(indent: 2) + "\n"
        }
        self.warnings = warnings
    }

    /// The step a mapping model is for: the versions it names, else the first pair of versions
    /// (in the set's order, consecutive pairs first) whose entity hashes it records.
    static func step(of file: MappingModelFile, in set: ModelSet) -> ModelSet.Step? {
        let names = set.versionNames
        var pairs: [(String, String)] = zip(names, names.dropFirst()).map { ($0, $1) }
        for a in names {
            for b in names where a != b && !pairs.contains(where: { $0 == (a, b) }) { pairs.append((a, b)) }
        }
        for (a, b) in pairs {
            guard let source = set.models[a], let destination = set.models[b] else { continue }
            if file.matches(source: source, sourceVersionName: a, destination: destination, destinationVersionName: b) {
                return ModelSet.Step(a, b)
            }
        }
        return nil
    }

    /// The files to write, as (file name, text) in the order `cdmigrate import` writes them.
    package var files: [(name: String, text: String)] {
        var files = models.map { ($0.version + ".json", $0.text) }
        files += mappingModels.map { ($0.name + ".mapping.json", $0.text) }
        if let manifest = passesManifest { files.append((ModelSet.manifestName, manifest)) }
        files.append(("current-version", currentVersionName + "\n"))
        return files
    }
}
