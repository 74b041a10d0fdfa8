/// One mapping model file of a `ModelSet`, with the versions it records it was written for, so
/// that a migration step can find its mapping models as Core Data does: by the entity version
/// hashes of the source and destination models.
///
/// What a file records:
/// - JSON (`*.mapping.json`): the `sourceEntityVersionHash` / `destinationEntityVersionHash` of
///   its entity mappings (`cdmigrate infer` and Xcode's compiler write them); else its top-level
///   `sourceModel` / `destinationModel` version names;
/// - Xcode (`.xcmappingmodel`): the version names in `sourcemodelpath` / `destinationmodelpath`
///   (`…/Model.xcdatamodeld/Model_v2.xcdatamodel` → `Model_v2`); the models Xcode embeds beside
///   them are its editor's own archives, which are not read;
/// - compiled (`.cdm`): the entity mappings' recorded hashes.
///
/// Core Data counterpart: what `NSMappingModel(from:forSourceModel:destinationModel:)` compares.
public struct MappingModelFile {
    /// The mapping model's file format.
    public enum Kind: String {
        case json, xcode, compiled

        init?(fileName: String) {
            if fileName.hasSuffix(".mapping.json") { self = .json }
            else if fileName.hasSuffix(".xcmappingmodel") { self = .xcode }
            else if fileName.hasSuffix(".cdm") { self = .compiled }
            else { return nil }
        }
    }

    /// The file.
    public let path: String
    /// Its format.
    public let kind: Kind
    /// The file's name without its extension: how plans, reports and the passes manifest name it.
    public let name: String
    /// Entity name → version hash recorded by the entity mappings, for the source and the
    /// destination; each must equal the model's entity of that name.
    public let sourceHashes: [String: [UInt8]]
    /// The destination entities' version hashes the mapping recorded, by entity name.
    public let destinationHashes: [String: [UInt8]]
    /// Version names the file records when it records no hashes.
    public let sourceVersionName: String?
    /// The destination version the mapping names, when it names one.
    public let destinationVersionName: String?
    /// The mapping as read, for JSON and compiled files; an Xcode mapping is compiled per step.
    let mapping: MappingModel?

    var fileName: String { path.split(separator: "/").last.map(String.init) ?? path }

    /// Whether the file records anything that can match it to a step.
    public var recordsVersions: Bool {
        !sourceHashes.isEmpty || !destinationHashes.isEmpty || sourceVersionName != nil || destinationVersionName != nil
    }

    /// Whether the mapping was written for the two models: every recorded hash equals the
    /// model's (the whole set of entities when recorded whole), or the recorded version names are
    /// the step's.
    public func matches(source: ManagedObjectModel, sourceVersionName: String,
                        destination: ManagedObjectModel, destinationVersionName: String) -> Bool {
        if !sourceHashes.isEmpty || !destinationHashes.isEmpty {
            return MappingModelFile.fits(sourceHashes, source) && MappingModelFile.fits(destinationHashes, destination)
        }
        guard self.sourceVersionName != nil || self.destinationVersionName != nil else { return false }
        return (self.sourceVersionName ?? sourceVersionName) == sourceVersionName
            && (self.destinationVersionName ?? destinationVersionName) == destinationVersionName
    }

    private static func fits(_ recorded: [String: [UInt8]], _ model: ManagedObjectModel) -> Bool {
        return recorded.allSatisfy { model.entity(named: $0.key)?.versionHash == $0.value }
    }

    /// The mapping model bound to a step's models.
    /// - Throws: `MigrationError` `.invalidMapping` when it does not fit them.
    public func mappingModel(source: ManagedObjectModel, destination: ManagedObjectModel) throws -> MappingModel {
        if let mapping = mapping { return try mapping.validate(sourceModel: source, destinationModel: destination) }
        return try MappingModel.fromFile(path, sourceModel: source, destinationModel: destination)
    }

    /// Reads what a file records; nil (with a warning) for a compiled mapping this build cannot read.
    static func read(path: String, kind: Kind, warnings: inout [String]) throws -> MappingModelFile? {
        let fileName = path.split(separator: "/").last.map(String.init) ?? path
        var name = fileName
        for suffix in [".mapping.json", ".xcmappingmodel", ".cdm"] where name.hasSuffix(suffix) { name.removeLast(suffix.count); break }
        switch kind {
        case .json, .compiled:
            let mapping: MappingModel
            do {
                mapping = try MappingModel.fromFile(path)
            } catch let error as MigrationError where kind == .compiled {
                warnings.append("'\(path)' skipped: this build cannot read compiled mapping models (\(error.message))")
                return nil
            }
            var source: [String: [UInt8]] = [:], destination: [String: [UInt8]] = [:]
            for entity in mapping.entityMappings {
                if let n = entity.sourceEntityName, let h = entity.sourceEntityVersionHash { source[n] = h }
                if let n = entity.destinationEntityName, let h = entity.destinationEntityVersionHash { destination[n] = h }
            }
            var sourceName: String?, destinationName: String?
            if kind == .json, source.isEmpty && destination.isEmpty {
                let json = try JSON.load(path: path)
                sourceName = json["sourceModel"]?.stringValue
                destinationName = json["destinationModel"]?.stringValue
            }
            let file = MappingModelFile(path: path, kind: kind, name: name, sourceHashes: source, destinationHashes: destination,
                                        sourceVersionName: sourceName, destinationVersionName: destinationName,
                                        mapping: mapping)
            if !file.recordsVersions {
                warnings.append("'\(path)' records neither entity version hashes nor sourceModel/destinationModel version names: no step can use it")
            }
            return file
        case .xcode:
            let document = try XcodeStoreDocument.read(file: XcodeMappingModelReader.documentPath(path), code: .invalidMapping)
            guard let root = document.objects.first(where: { $0.type == XcodeMappingModelReader.mappingModelType }) else {
                throw MigrationError(.invalidMapping, "'\(path)' holds no \(XcodeMappingModelReader.mappingModelType) object: it is not an Xcode mapping model")
            }
            // Xcode embeds its models as its own editor archives (XDPMModel), not as compiled
            // models: the version names in the model paths say which step the mapping is for.
            let file = MappingModelFile(path: path, kind: kind, name: name, sourceHashes: [:], destinationHashes: [:],
                                        sourceVersionName: versionName(root.string("sourcemodelpath")),
                                        destinationVersionName: versionName(root.string("destinationmodelpath")),
                                        mapping: nil)
            if !file.recordsVersions {
                warnings.append("'\(path)' records neither the models it was made for nor their paths: no step can use it")
            }
            return file
        }
    }

    /// "UnCloudNotes/Model.xcdatamodeld/Model_v2.xcdatamodel" → "Model_v2".
    private static func versionName(_ modelPath: String?) -> String? {
        guard let last = modelPath?.split(separator: "/").last else { return nil }
        var name = String(last)
        if name.hasSuffix(".xcdatamodel") { name.removeLast(".xcdatamodel".count) } else { return nil }
        return name.isEmpty ? nil : name
    }
}
