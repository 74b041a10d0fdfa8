/// The side file of an Xcode or compiled mapping model that declares intended losses (and what a
/// custom policy carries) without editing the mapping model: `<mapping model file>.cdmigrate.json`
/// beside it — `Model_v2_to_v3.xcmappingmodel.cdmigrate.json` beside `Model_v2_to_v3.xcmappingmodel`,
/// `Model_v2_to_v3.cdm.cdmigrate.json` beside a `.cdm` — named after the file the way
/// `migration-passes.json` names mapping models, and read wherever the mapping model is read
/// (alone, in a `ModelSet`, through the C API and the command line). docs/loss-report.md.
///
/// ```json
/// {"entityMappings": {"PostToPost": {"cdmigrate.intendedLosses": "color", "cdmigrate.carriedByPolicy": "tags"}}}
/// ```
///
/// Each entity mapping named gets the keys in its user info, as if they were typed into Xcode's
/// mapping model editor (text joined to what the user info already says, so both count). An entity
/// mapping the mapping model does not have, another key, or a value that is not text makes the
/// mapping model invalid (`.invalidMapping`, naming the side file and the JSON path).
package enum IntendedLossesFile {
    /// The suffix added to the mapping model's file name.
    package static let suffix = ".cdmigrate.json"

    /// The side file's path for the mapping model at `mappingPath` (an `.xcmappingmodel` folder,
    /// its `xcmapping.xml`, or a `.cdm`).
    package static func path(forMappingModelAt mappingPath: String) -> String {
        var path = mappingPath
        while path.count > 1 && path.hasSuffix("/") { path.removeLast() }
        // `…/Name.xcmappingmodel/xcmapping.xml`: the side file belongs to the bundle.
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        if parts.count >= 2, parts[parts.count - 2].hasSuffix(".xcmappingmodel") {
            path = parts.dropLast().joined(separator: "/")
        }
        return path + suffix
    }

    /// `mapping` with the declarations of the side file of `mappingPath` merged into its entity
    /// mappings' user info; `mapping` itself when there is no side file.
    package static func applying(to mapping: MappingModel, mappingPath: String) throws -> MappingModel {
        let file = path(forMappingModelAt: mappingPath)
        guard FileIO.exists(file) else { return mapping }
        let json = try JSON.load(path: file)
        var root = JSONReader(json, path: "$", code: .invalidMapping, what: "a cdmigrate side file")
        var declarations: [String: [String: String]] = [:]
        var problems: [MigrationError] = []
        if let entries = root.value("entityMappings") {
            if let members = entries.objectValue {
                for (name, value) in members {
                    let path = "$.entityMappings.\(name)"
                    guard mapping.entityMapping(named: name) != nil else {
                        problems.append(
                            MigrationError(
                                .invalidMapping,
                                "'\(file)': entity mapping '\(name)' is not in the mapping model '\(mapping.name ?? mappingPath)'\(SpellingSuggestion.hint(name, among: mapping.entityMappings.map { $0.name }))",
                                path: path))
                        continue
                    }
                    guard let keys = value.objectValue else {
                        problems.append(
                            MigrationError(
                                .invalidMapping,
                                "'\(file)': entity mapping '\(name)' needs an object of user info keys", path: path))
                        continue
                    }
                    for (key, text) in keys {
                        guard key == IntendedLosses.userInfoKey || key == IntendedLosses.carriedByPolicyKey else {
                            problems.append(
                                MigrationError(
                                    .invalidMapping,
                                    "'\(file)': '\(key)' is not a key of the side file (expected '\(IntendedLosses.userInfoKey)' or '\(IntendedLosses.carriedByPolicyKey)')",
                                    path: path + "." + key))
                            continue
                        }
                        guard let string = text.stringValue else {
                            problems.append(
                                MigrationError(
                                    .invalidMapping,
                                    "'\(file)': '\(key)' must be text listing source property names separated by commas",
                                    path: path + "." + key))
                            continue
                        }
                        declarations[name, default: [:]][key] = string
                    }
                }
            } else {
                root.fail("entityMappings", "must be an object of entity mapping names")
            }
        } else {
            root.fail("entityMappings", "a cdmigrate side file needs an 'entityMappings' object")
        }
        _ = root.value("comment")
        root.rejectUnknownKeys(what: "the side file '\(file)'")
        problems = root.problems + problems
        if let error = MigrationError.collecting(
            problems, code: .invalidMapping, summary: "the side file '\(file)' is not valid")
        {
            throw error
        }
        let mappings = mapping.entityMappings.map { entityMapping -> EntityMapping in
            guard let keys = declarations[entityMapping.name] else { return entityMapping }
            var userInfo = entityMapping.userInfo
            for (key, text) in keys {
                if case .string(let existing)? = userInfo[key], !existing.isEmpty {
                    userInfo[key] = .string(existing + ", " + text)
                } else {
                    userInfo[key] = .string(text)
                }
            }
            return entityMapping.withUserInfo(userInfo)
        }
        let merged = MappingModel(name: mapping.name, entityMappings: mappings, warnings: mapping.warnings)
        merged.isInferred = mapping.isInferred
        return merged
    }
}

extension EntityMapping {
    /// A copy with another user info.
    fileprivate func withUserInfo(_ userInfo: [String: Value]) -> EntityMapping {
        copy(userInfo: userInfo, sourceEntity: sourceEntity, destinationEntity: destinationEntity)
    }
}
