/// An Xcode versioned model (`.xcdatamodeld`): every model version it holds, by name, and the
/// current one.
///
/// Core Data counterpart: the `.momd` Xcode compiles from it, opened with
/// `NSManagedObjectModel(contentsOf:)` (which gives the current version) and `Bundle`'s
/// `VersionInfo.plist` (which lists the versions).
///
/// Its versions are a `ModelVersionSet`, oldest first: natural order of the names
/// (`ModelVersionSet.versionOrder`: "Model_9" before "Model_10"), the current version last.
/// A version that cannot be read (a format this build does not know, a damaged file) is skipped
/// with a warning naming it and why, so that the other versions still work; only the current
/// version, or a bundle none of whose versions can be read, is an error.
package enum XcodeModelBundle {
    /// Reads every version of the bundle at `path`.
    /// - Parameter path: a `.xcdatamodeld` folder.
    /// - Returns: the versions; `warnings` holds what loading noticed about the bundle itself
    ///   (versions skipped, no current version named; the versions' own warnings are on each model).
    /// - Throws: `MigrationError` `.io` when the folder cannot be read, `.invalidModel` naming the
    ///   file, element and line when the current version (or every version) is not valid, or when
    ///   `.xccurrentversion` is not a property list or names a version the bundle does not hold.
    package static func versions(contentsOf path: String) throws -> ModelVersionSet {
        var trimmed = Substring(path)
        while trimmed.count > 1, trimmed.last == "/" { trimmed = trimmed.dropLast() }
        let folder = String(trimmed)
        let entries = try FileIO.directoryEntries(path: folder)
        let versionFolders = entries.filter { $0.hasSuffix(".xcdatamodel") }
        guard !versionFolders.isEmpty else {
            throw MigrationError(.invalidModel, "'\(path)' holds no model version (no .xcdatamodel folder)")
        }
        let names = versionFolders.map { String($0.dropLast(".xcdatamodel".count)) }
        let marker = folder + "/.xccurrentversion"
        var currentName: String?
        var warnings: [String] = []
        var markerDescription = ".xccurrentversion"
        if FileIO.exists(marker) {
            if let current = try currentVersion(file: marker) {
                let name = current.hasSuffix(".xcdatamodel") ? String(current.dropLast(".xcdatamodel".count)) : current
                guard names.contains(name) else {
                    let sorted = names.sorted(by: ModelVersionSet.versionOrder)
                    throw MigrationError(
                        .invalidModel,
                        "'\(marker)': the current version '\(current)' is not in the bundle (it holds \(sorted.joined(separator: ", ")))"
                    )
                }
                currentName = name
            } else {
                markerDescription = "current version in its .xccurrentversion (the file names none)"
            }
        }
        var models: [String: ManagedObjectModel] = [:]
        var failures: [(name: String, error: MigrationError)] = []
        for name in names.sorted(by: ModelVersionSet.versionOrder) {
            do {
                models[name] = try XcodeModelReader.model(xcdatamodel: folder + "/" + name + ".xcdatamodel")
            } catch let error as MigrationError {
                // The version the app opens stores with must be readable; any other is skipped.
                if name == currentName { throw error }
                failures.append((name, error))
            }
        }
        guard !models.isEmpty else {
            throw failures.first?.error ?? MigrationError(.invalidModel, "'\(path)' holds no readable model version")
        }
        for failure in failures {
            warnings.append(
                "'\(path)': version '\(failure.name)' is skipped, it cannot be read: \(failure.error.message)")
        }
        return ModelVersionSet(
            path: path, models: models, order: ModelVersionSet.versionOrder, currentVersionName: currentName,
            marker: markerDescription, warnings: warnings)
    }

    /// `_XCCurrentVersionName` of a `.xccurrentversion` property list (XML); nil when the
    /// dictionary names no version (Xcode writes an empty `<dict/>` for a bundle whose current
    /// version was never chosen), which is read as a missing file.
    static func currentVersion(file: String) throws -> String? {
        let root = try XMLElement.parse(file: file)
        guard root.name == "plist", let dict = root.child(named: "dict") else {
            throw MigrationError(
                .invalidModel, "'\(file)' line \(root.line): not a property list with a <dict>",
                path: "\(file):\(root.line)")
        }
        let children = dict.children
        for (i, child) in children.enumerated() where child.name == "key" && child.text == "_XCCurrentVersionName" {
            guard i + 1 < children.count, children[i + 1].name == "string" else {
                throw MigrationError(
                    .invalidModel, "'\(file)' line \(child.line): _XCCurrentVersionName has no <string> value",
                    path: "\(file):\(child.line)")
            }
            let name = children[i + 1].text.trimmingWhitespace
            return name.isEmpty ? nil : name
        }
        return nil
    }
}
