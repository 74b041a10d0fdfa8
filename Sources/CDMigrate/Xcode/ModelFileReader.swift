/// The front doors that read a model file of any kind: they pick the reader by the path (JSON in
/// `Model/`, compiled models in `Archive/`, Xcode's in `Xcode/`), so they live here, above all three.
extension ManagedObjectModel {
    /// Reads a model file: Xcode's `.xcdatamodeld` (its current version) or `.xcdatamodel` (a
    /// folder, or its `contents` file), a compiled `.mom` or `.momd` (through `CompiledModelReader`),
    /// told apart by the path; anything else is read as model JSON.
    ///
    /// Core Data counterpart: `NSManagedObjectModel(contentsOf:)`.
    /// - Parameter path: the file or folder.
    /// - Throws: `MigrationError` `.io` when it cannot be read, `.invalidJSON` for text that is not
    ///   JSON, `.invalidModel` for a model that is not valid (naming the JSON path, or the XML file,
    ///   element and line).
    public convenience init(contentsOf path: String) throws {
        self.init(adopting: try ModelReader.model(fromFile: path))
    }
}

extension ModelReader {
    /// What `ManagedObjectModel(contentsOf:)` reads, for the readers that go on annotating the model.
    package static func model(fromFile path: String) throws -> ManagedObjectModel {
        if isXcodeModelPath(path) { return try model(fromXcodeModel: path) }
        if isCompiledModelPath(path) { return try CompiledModelReader.model(contentsOf: path) }
        return try model(from: try JSON.load(path: path))
    }

    /// Reads an Xcode model: a `.xcdatamodeld` bundle gives its current version (see
    /// `XcodeModelBundle` for the others), a `.xcdatamodel` folder (or its `contents` file) that version.
    ///
    /// - Parameter path: a `.xcdatamodeld` or `.xcdatamodel` folder, or a `contents` file.
    /// - Throws: `MigrationError` `.io` when a file cannot be read, `.invalidModel` naming the file,
    ///   the element and its line.
    package static func model(fromXcodeModel path: String) throws -> ManagedObjectModel {
        if trimmedExtension(path) == "xcdatamodeld" {
            let bundle = try XcodeModelBundle.versions(contentsOf: path)
            guard let current = bundle.currentModel else {
                throw MigrationError(.invalidModel, "'\(path)' has no current model version")
            }
            current.warnings = bundle.warnings + current.warnings
            return current
        }
        return try XcodeModelReader.model(xcdatamodel: path)
    }

    /// `.mom` files and `.momd` folders.
    static func isCompiledModelPath(_ path: String) -> Bool {
        var trimmed = path
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed.removeLast() }
        return trimmed.hasSuffix(".mom") || trimmed.hasSuffix(".momd")
    }

    /// Whether the path names an Xcode model (by its extension, or a `contents` file in a `.xcdatamodel`).
    static func isXcodeModelPath(_ path: String) -> Bool {
        let ext = trimmedExtension(path)
        if ext == "xcdatamodeld" || ext == "xcdatamodel" { return true }
        var trimmed = Substring(path)
        while trimmed.count > 1, trimmed.last == "/" { trimmed = trimmed.dropLast() }
        return trimmed.hasSuffix(".xcdatamodel/contents")
    }
}

extension ModelVersionSet {
    /// Reads every version at `path`.
    /// - Parameter path: an `.xcdatamodeld` bundle or a folder of JSON models.
    /// - Throws: `MigrationError` `.io` when the folder cannot be read, `.invalidModel` for a
    ///   version that is not a valid model (naming its file) or a set with no version.
    public init(contentsOf path: String) throws {
        if ModelReader.trimmedExtension(path) == "xcdatamodeld" {
            self = try XcodeModelBundle.versions(contentsOf: path)
        } else {
            self = try ModelVersionSet(folderOfModels: path)
        }
    }
}
