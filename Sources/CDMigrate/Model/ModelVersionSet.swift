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
    /// Version names in name order.
    public let versionNames: [String]
    /// The current version (the `.xcdatamodeld`'s `.xccurrentversion`, else the last).
    public let currentVersionName: String
    /// The models, by version name.
    public let models: [String: ManagedObjectModel]
    /// What loading noticed (a folder without a current-version file, files that are not models).
    public let warnings: [String]

    /// Reads every version at `path`.
    /// - Parameter path: an `.xcdatamodeld` bundle or a folder of JSON models.
    /// - Throws: `MigrationError` `.io` when the folder cannot be read, `.invalidModel` for a
    ///   version that is not a valid model (naming its file) or a set with no version.
    public init(contentsOf path: String) throws {
        self.path = path
        if ModelReader.trimmedExtension(path) == "xcdatamodeld" {
            let bundle = try XcodeModelBundle(contentsOf: path)
            versionNames = bundle.versionNames
            currentVersionName = bundle.currentVersionName
            models = bundle.models
            warnings = bundle.warnings
            return
        }
        guard FileIO.isDirectory(path) else {
            throw MigrationError(.invalidModel, "'\(path)' is neither an .xcdatamodeld bundle nor a folder of models")
        }
        var models: [String: ManagedObjectModel] = [:]
        var warnings: [String] = []
        for entry in try FileIO.directoryEntries(path: path) where entry.hasSuffix(".json") {
            let file = path + "/" + entry
            let json = try JSON.load(path: file)
            // Mapping models may sit beside the models: a model has "entities".
            guard json["entities"] != nil else { continue }
            let name = entry.hasSuffix(".model.json") ? String(entry.dropLast(".model.json".count)) : String(entry.dropLast(".json".count))
            do {
                models[name] = try ModelReader.model(from: json)
            } catch var error as MigrationError {
                error.message = "'\(file)': " + error.message
                throw error
            }
        }
        guard !models.isEmpty else { throw MigrationError(.invalidModel, "'\(path)' holds no model (no JSON file with \"entities\")") }
        let names = models.keys.sorted(by: ModelVersionSet.versionOrder)
        let marker = path + "/current-version"
        if FileIO.exists(marker) {
            let name = try FileIO.readText(path: marker).trimmingWhitespace
            guard models[name] != nil else {
                throw MigrationError(.invalidModel, "'\(marker)' names version '\(name)', which is not in the folder (it holds \(names.joined(separator: ", ")))")
            }
            currentVersionName = name
        } else {
            currentVersionName = names[names.count - 1]
            if names.count > 1 { warnings.append("'\(path)' has no current-version file: the last version by name, '\(currentVersionName)', is taken as the current one") }
        }
        self.versionNames = names
        self.models = models
        self.warnings = warnings
    }

    /// The model of the current version.
    public var currentModel: ManagedObjectModel? { models[currentVersionName] }

    /// The version a store was written with: the one whose entity version hashes equal the
    /// store's (the first by name when several do); nil when none does.
    ///
    /// Core Data counterpart: `NSManagedObjectModel.mergedModel(from:forStoreMetadata:)`.
    public func versionName(forStoreMetadata metadata: StoreMetadata) -> String? {
        versionNames.first { models[$0]?.isCompatible(withStoreMetadata: metadata) == true }
    }

    /// Version names in natural order: digit runs compare as numbers ("v2" before "v10").
    static func versionOrder(_ a: String, _ b: String) -> Bool {
        var i = a.unicodeScalars.makeIterator(), j = b.unicodeScalars.makeIterator()
        var x = i.next(), y = j.next()
        while let p = x, let q = y {
            if p.properties.numericType != nil, q.properties.numericType != nil, p.isASCII, q.isASCII {
                var m = "", n = ""
                while let c = x, c.isASCII, c.properties.numericType != nil { m.unicodeScalars.append(c); x = i.next() }
                while let c = y, c.isASCII, c.properties.numericType != nil { n.unicodeScalars.append(c); y = j.next() }
                let u = m.drop { $0 == "0" }, v = n.drop { $0 == "0" }
                if u.count != v.count { return u.count < v.count }
                if u != v { return u < v }
                continue
            }
            if p != q { return p.value < q.value }
            x = i.next(); y = j.next()
        }
        return x == nil && y != nil
    }
}
