/// The front doors that read a mapping model file of any kind: they pick the reader by the path
/// (JSON in `Mapping/`, compiled `.cdm` in `Archive/`, `.xcmappingmodel` in `Xcode/`), so they
/// live here, above all three.
extension MappingModel {
    /// Reads the JSON mapping at `path`, or the compiled mapping model (`.cdm`, a keyed archive of
    /// NSMappingModel as Xcode's mapping model compiler writes it) at a path ending in `.cdm` or
    /// `.cdm_precompiled`. An Xcode `.xcmappingmodel` needs its models to be compiled:
    /// `fromFile(_:sourceModel:destinationModel:)` reads every kind.
    ///
    /// - Throws: `MigrationError` `.io` when the file cannot be read, `.invalidMapping` naming the
    ///   JSON path or the archived object at fault.
    ///
    /// Core Data counterpart: `NSMappingModel(contentsOf:)` (for a `.cdm`).
    public static func fromFile(_ path: String) throws -> MappingModel {
        if CompiledMappingModelReader.isCompiledMappingModelPath(path) {
            return try CompiledMappingModelReader.read(path: path)
        }
        if XcodeMappingModelReader.isXcodeMappingModelPath(path) {
            throw MigrationError(
                .invalidArgument,
                "'\(path)' is an Xcode mapping model, which is compiled against its source and destination models: read it with fromXcodeMappingModel(_:sourceModel:destinationModel:) (C: cdm_mapping_from_xcode_file)"
            )
        }
        return try from(try JSON.load(path: path))
    }

    /// Reads a mapping model file of any kind: an Xcode mapping model (a path ending in
    /// `.xcmappingmodel` or `.xml`, compiled against the models by `fromXcodeMappingModel`), a
    /// compiled mapping model (`.cdm`, as Xcode builds it into an app) or the JSON of
    /// docs/mapping-format.md (both then checked against the models).
    ///
    /// - Parameters:
    ///   - path: the mapping model file or `.xcmappingmodel` folder.
    ///   - sourceModel: the model the mapping maps from.
    ///   - destinationModel: the model the mapping maps to.
    /// - Throws: `MigrationError` as `fromFile(_:)` or `fromXcodeMappingModel(_:sourceModel:destinationModel:)`,
    ///   and `.invalidMapping` when the mapping does not fit the models.
    ///
    /// Core Data counterpart: `NSMappingModel(contentsOf:)`.
    public static func fromFile(_ path: String, sourceModel: ManagedObjectModel, destinationModel: ManagedObjectModel)
        throws -> MappingModel
    {
        if XcodeMappingModelReader.isXcodeMappingModelPath(path) {
            return try fromXcodeMappingModel(path, sourceModel: sourceModel, destinationModel: destinationModel)
        }
        let mapping = try fromFile(path)
        try mapping.validate(sourceModel: sourceModel, destinationModel: destinationModel)
        return mapping
    }
}
