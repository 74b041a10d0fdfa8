/// The front doors that read a mapping model file of any kind: they pick the reader by the path
/// (JSON in `Mapping/`, compiled `.cdm` in `Archive/`, `.xcmappingmodel` in `Xcode/`), so they
/// live here, above all three.
extension MappingModel {
    /// Reads the JSON mapping at `path`, or the compiled mapping model (`.cdm`, a keyed archive of
    /// NSMappingModel as Xcode's mapping model compiler writes it) at a path ending in `.cdm` or
    /// `.cdm_precompiled`. An Xcode `.xcmappingmodel` needs its models to be compiled:
    /// `init(contentsOf:sourceModel:destinationModel:)` reads every kind.
    ///
    /// - Throws: `MigrationError` `.io` when the file cannot be read, `.invalidMapping` naming the
    ///   JSON path or the archived object at fault.
    ///
    /// Core Data counterpart: `NSMappingModel(contentsOf:)` (for a `.cdm`).
    public convenience init(contentsOf path: String) throws {
        self.init(adopting: try MappingModel.read(contentsOf: path))
    }

    /// Reads a mapping model file of any kind: an Xcode mapping model (a path ending in
    /// `.xcmappingmodel` or `.xml`, compiled against the models as Xcode's mapping model compiler
    /// does: `readXcode(_:sourceModel:destinationModel:)` lists the rules), a compiled mapping
    /// model (`.cdm`, as Xcode builds it into an app) or the JSON of docs/mapping-format.md (both
    /// then checked against the models).
    ///
    /// - Parameters:
    ///   - path: the mapping model file or `.xcmappingmodel` folder.
    ///   - sourceModel: the model the mapping maps from.
    ///   - destinationModel: the model the mapping maps to.
    /// - Throws: `MigrationError` `.io` when the file cannot be read; `.invalidMapping` naming the
    ///   JSON path, the archived object or the Xcode document's object (its id and line) at fault,
    ///   or when the mapping does not fit the models.
    ///
    /// Core Data counterpart: `NSMappingModel(contentsOf:)`.
    public convenience init(
        contentsOf path: String, sourceModel: ManagedObjectModel, destinationModel: ManagedObjectModel
    )
        throws
    {
        self.init(
            adopting: try MappingModel.read(
                contentsOf: path, sourceModel: sourceModel, destinationModel: destinationModel))
    }

    package static func read(contentsOf path: String) throws -> MappingModel {
        if CompiledMappingModelReader.isCompiledMappingModelPath(path) {
            return try CompiledMappingModelReader.read(path: path)
        }
        if XcodeMappingModelReader.isXcodeMappingModelPath(path) {
            throw MigrationError(
                .invalidArgument,
                "'\(path)' is an Xcode mapping model, which is compiled against its source and destination models: read it with MappingModel(contentsOf:sourceModel:destinationModel:) (C: cdm_mapping_from_xcode_file)"
            )
        }
        return try from(try JSON.load(path: path))
    }

    package static func read(
        contentsOf path: String, sourceModel: ManagedObjectModel, destinationModel: ManagedObjectModel
    )
        throws -> MappingModel
    {
        if XcodeMappingModelReader.isXcodeMappingModelPath(path) {
            return try readXcode(path, sourceModel: sourceModel, destinationModel: destinationModel)
        }
        let mapping = try read(contentsOf: path)
        try mapping.validate(sourceModel: sourceModel, destinationModel: destinationModel)
        return mapping
    }
}
