/// An Xcode versioned model (`.xcdatamodeld`): every model version it holds, by name, and the
/// current one.
///
/// Core Data counterpart: the `.momd` Xcode compiles from it, opened with
/// `NSManagedObjectModel(contentsOf:)` (which gives the current version) and `Bundle`'s
/// `VersionInfo.plist` (which lists the versions).
///
/// Its versions are a `ModelVersionSet`, names sorted in `VersionHash.nameOrder`.
package enum XcodeModelBundle {
    /// Reads every version of the bundle at `path`.
    /// - Parameter path: a `.xcdatamodeld` folder.
    /// - Returns: the versions; `warnings` holds what loading noticed about the bundle itself (the
    ///   versions' own warnings are on each model).
    /// - Throws: `MigrationError` `.io` when the folder or a version cannot be read, `.invalidModel`
    ///   naming the file, element and line when a version or `.xccurrentversion` is not valid.
    package static func versions(contentsOf path: String) throws -> ModelVersionSet {
        var trimmed = Substring(path)
        while trimmed.count > 1, trimmed.last == "/" { trimmed = trimmed.dropLast() }
        let folder = String(trimmed)
        let entries = try FileIO.directoryEntries(path: folder)
        let versionFolders = entries.filter { $0.hasSuffix(".xcdatamodel") }
        guard !versionFolders.isEmpty else {
            throw MigrationError(.invalidModel, "'\(path)' holds no model version (no .xcdatamodel folder)")
        }
        var models: [String: ManagedObjectModel] = [:]
        for entry in versionFolders {
            models[String(entry.dropLast(".xcdatamodel".count))] = try XcodeModelReader.model(xcdatamodel: folder + "/" + entry)
        }
        let marker = folder + "/.xccurrentversion"
        var currentName: String?
        if FileIO.exists(marker) {
            let current = try currentVersion(file: marker)
            let name = current.hasSuffix(".xcdatamodel") ? String(current.dropLast(".xcdatamodel".count)) : current
            guard models[name] != nil else {
                let names = models.keys.sorted(by: VersionHash.nameOrder)
                throw MigrationError(.invalidModel, "'\(marker)': the current version '\(current)' is not in the bundle (it holds \(names.joined(separator: ", ")))")
            }
            currentName = name
        }
        return ModelVersionSet(path: path, models: models, order: VersionHash.nameOrder, currentVersionName: currentName, marker: ".xccurrentversion")
    }

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
