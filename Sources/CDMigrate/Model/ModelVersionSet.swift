/// The versions of one data model, by name, with the current one: what an app ships to open any
/// store its users may have.
///
/// Read from an Xcode `.xcdatamodeld` (every `.xcdatamodel` in it; the current one from
/// `.xccurrentversion`) or from a folder of JSON models (`*.json` files that are models; the version
/// name is the file name without `.model.json` or `.json`; the current version is the last by name
/// unless the folder has a `current-version` file naming it).
///
/// Core Data counterpart: the compiled `.momd` bundle, with
/// `NSManagedObjectModel.mergedModel(from:forStoreMetadata:)` to find a store's version.
public struct ModelVersionSet {
    /// The path the versions were read from.
    public let path: String
    /// Version names, oldest first: natural order of the names ("Model_9" before "Model_10"),
    /// with the current version last even where its name sorts earlier.
    public let versionNames: [String]
    /// The current version (the `.xcdatamodeld`'s `.xccurrentversion`, else the last).
    public let currentVersionName: String
    /// The models, by version name.
    public let models: [String: ManagedObjectModel]
    /// What loading noticed (a folder without a current-version file, files that are not models).
    public let warnings: [String]
    /// Whether the files name the current version (`.xccurrentversion`, `current-version`); when
    /// they do not, it is the last version in order.
    public let namesCurrentVersion: Bool

    /// The versions a reader found, by name: `currentVersionName` when the files name one (the
    /// reader has checked it is among `models`), else the last by `order`, with a warning when
    /// there are several and none is named. The current version is the newest: it is placed last,
    /// with a warning naming the versions whose names sort after it.
    /// - Parameters:
    ///   - path: the path the versions were read from.
    ///   - models: the models, by version name (not empty).
    ///   - order: how version names sort.
    ///   - currentVersionName: the current version the files name, if they name one.
    ///   - marker: what would have named the current version, for the warning.
    ///   - warnings: what the reader noticed (versions it skipped), kept first.
    package init(
        path: String, models: [String: ManagedObjectModel], order: (String, String) -> Bool,
        currentVersionName: String?, marker: String, warnings readerWarnings: [String] = []
    ) {
        var names = models.keys.sorted(by: order)
        var warnings = readerWarnings
        if let currentVersionName {
            self.currentVersionName = currentVersionName
            if let index = names.firstIndex(of: currentVersionName), index < names.count - 1 {
                let later = names[(index + 1)...]
                names.remove(at: index)
                names.append(currentVersionName)
                warnings.append(
                    "'\(path)': the current version '\(currentVersionName)' is taken as the newest, after \(later.map { "'\($0)'" }.joined(separator: ", ")), whose name\(later.count == 1 ? "" : "s") sort\(later.count == 1 ? "s" : "") after it"
                )
            }
        } else {
            self.currentVersionName = names.last ?? ""
            if names.count > 1 {
                warnings.append(
                    "'\(path)' has no \(marker): the last version by name, '\(self.currentVersionName)', is taken as the current one"
                )
            }
        }
        self.path = path
        self.namesCurrentVersion = currentVersionName != nil
        self.versionNames = names
        self.models = models
        self.warnings = warnings
    }

    /// Reads a folder of JSON models (`ModelVersionSet(contentsOf:)` reads `.xcdatamodeld` bundles too).
    /// - Parameter path: a folder holding `*.json` models (and possibly a `current-version` file).
    /// - Throws: `MigrationError` `.io` when the folder cannot be read, `.invalidModel` for a
    ///   version that is not a valid model (naming its file) or a folder with no model.
    package init(folderOfModels path: String) throws {
        guard FileIO.isDirectory(path) else {
            throw MigrationError(.invalidModel, "'\(path)' is neither an .xcdatamodeld bundle nor a folder of models")
        }
        var models: [String: ManagedObjectModel] = [:]
        for entry in try FileIO.directoryEntries(path: path) where entry.hasSuffix(".json") {
            let file = path + "/" + entry
            let json = try JSON.load(path: file)
            // Mapping models may sit beside the models: a model has "entities".
            guard json["entities"] != nil else { continue }
            let name =
                entry.hasSuffix(".model.json")
                ? String(entry.dropLast(".model.json".count)) : String(entry.dropLast(".json".count))
            do {
                models[name] = try ModelReader.model(from: json)
            } catch var error as MigrationError {
                error.message = "'\(file)': " + error.message
                throw error
            }
        }
        guard !models.isEmpty else {
            throw MigrationError(.invalidModel, "'\(path)' holds no model (no JSON file with \"entities\")")
        }
        let marker = path + "/current-version"
        var current: String?
        if FileIO.exists(marker) {
            let name = try FileIO.readText(path: marker).trimmingWhitespace
            guard models[name] != nil else {
                let names = models.keys.sorted(by: ModelVersionSet.versionOrder)
                throw MigrationError(
                    .invalidModel,
                    "'\(marker)' names version '\(name)', which is not in the folder (it holds \(names.joined(separator: ", ")))"
                )
            }
            current = name
        }
        self.init(
            path: path, models: models, order: ModelVersionSet.versionOrder, currentVersionName: current,
            marker: "current-version file")
    }

    /// The model of the current version.
    public var currentModel: ManagedObjectModel? { models[currentVersionName] }

    /// The model of the version named `name`, or nil.
    package func model(named name: String) -> ManagedObjectModel? { models[name] }

    /// Version names in natural order: digit runs compare as numbers ("v2" before "v10").
    static func versionOrder(_ a: String, _ b: String) -> Bool {
        var i = a.unicodeScalars.makeIterator()
        var j = b.unicodeScalars.makeIterator()
        var x = i.next()
        var y = j.next()
        while let p = x, let q = y {
            if p.properties.numericType != nil, q.properties.numericType != nil, p.isASCII, q.isASCII {
                var m = ""
                var n = ""
                while let c = x, c.isASCII, c.properties.numericType != nil {
                    m.unicodeScalars.append(c)
                    x = i.next()
                }
                while let c = y, c.isASCII, c.properties.numericType != nil {
                    n.unicodeScalars.append(c)
                    y = j.next()
                }
                let u = m.drop { $0 == "0" }
                let v = n.drop { $0 == "0" }
                if u.count != v.count { return u.count < v.count }
                if u != v { return u < v }
                continue
            }
            if p != q { return p.value < q.value }
            x = i.next()
            y = j.next()
        }
        return x == nil && y != nil
    }
}
