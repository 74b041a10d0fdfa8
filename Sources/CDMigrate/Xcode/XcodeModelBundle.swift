/// An Xcode versioned model (`.xcdatamodeld`): every model version it holds, by name, and the
/// current one.
///
/// Core Data counterpart: the `.momd` Xcode compiles from it, opened with
/// `NSManagedObjectModel(contentsOf:)` (which gives the current version) and `Bundle`'s
/// `VersionInfo.plist` (which lists the versions).
package struct XcodeModelBundle {
    /// The bundle's path as given.
    package let path: String
    /// Version names (the `.xcdatamodel` folder names without the extension), sorted.
    package let versionNames: [String]
    /// The current version's name: `.xccurrentversion`'s `_XCCurrentVersionName`, or the only version.
    package let currentVersionName: String
    /// Every version's model, by version name.
    package let models: [String: ManagedObjectModel]
    /// What loading noticed about the bundle itself (the versions' own warnings are on each model).
    package let warnings: [String]

    /// Reads every version of the bundle at `path`.
    /// - Parameter path: a `.xcdatamodeld` folder.
    /// - Throws: `MigrationError` `.io` when the folder or a version cannot be read, `.invalidModel`
    ///   naming the file, element and line when a version or `.xccurrentversion` is not valid.
    package init(contentsOf path: String) throws {
        var trimmed = Substring(path)
        while trimmed.count > 1, trimmed.last == "/" { trimmed = trimmed.dropLast() }
        let folder = String(trimmed)
        self.path = path
        let entries = try FileIO.directoryEntries(path: folder)
        let versionFolders = entries.filter { $0.hasSuffix(".xcdatamodel") }
        guard !versionFolders.isEmpty else {
            throw MigrationError(.invalidModel, "'\(path)' holds no model version (no .xcdatamodel folder)")
        }
        var models: [String: ManagedObjectModel] = [:]
        var names: [String] = []
        for entry in versionFolders {
            let name = String(entry.dropLast(".xcdatamodel".count))
            names.append(name)
            models[name] = try XcodeModelReader.model(xcdatamodel: folder + "/" + entry)
        }
        self.versionNames = names.sorted(by: VersionHash.nameOrder)
        self.models = models
        var warnings: [String] = []
        let marker = folder + "/.xccurrentversion"
        if FileIO.exists(marker) {
            let current = try XcodeModelBundle.currentVersion(file: marker)
            let name = current.hasSuffix(".xcdatamodel") ? String(current.dropLast(".xcdatamodel".count)) : current
            guard models[name] != nil else {
                throw MigrationError(.invalidModel, "'\(marker)': the current version '\(current)' is not in the bundle (it holds \(versionNames.joined(separator: ", ")))")
            }
            currentVersionName = name
        } else {
            currentVersionName = versionNames[versionNames.count - 1]
            if versionNames.count > 1 {
                warnings.append("'\(path)' has no .xccurrentversion: the last version by name, '\(currentVersionName)', is taken as the current one")
            }
        }
        self.warnings = warnings
    }

    /// The model of the current version.
    package var currentModel: ManagedObjectModel? { models[currentVersionName] }

    /// The model of the version named `name` (without `.xcdatamodel`).
    package func model(named name: String) -> ManagedObjectModel? { models[name] }

    /// `_XCCurrentVersionName` of a `.xccurrentversion` property list (XML).
    static func currentVersion(file: String) throws -> String {
        let root = try XMLElement.parse(file: file)
        guard root.name == "plist", let dict = root.child(named: "dict") else {
            throw MigrationError(.invalidModel, "'\(file)' line \(root.line): not a property list with a <dict>", path: "\(file):\(root.line)")
        }
        let children = dict.children
        for (i, child) in children.enumerated() where child.name == "key" && child.text == "_XCCurrentVersionName" {
            guard i + 1 < children.count, children[i + 1].name == "string", !children[i + 1].text.isEmpty else {
                throw MigrationError(.invalidModel, "'\(file)' line \(child.line): _XCCurrentVersionName has no <string> value", path: "\(file):\(child.line)")
            }
            return children[i + 1].text
        }
        throw MigrationError(.invalidModel, "'\(file)' line \(dict.line): the <dict> has no _XCCurrentVersionName", path: "\(file):\(dict.line)")
    }
}
