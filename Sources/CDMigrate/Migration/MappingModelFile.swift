/// One mapping model file of a `ModelSet`, with the versions it records it was written for, so
/// that a migration step can find its mapping models as Core Data does: by the entity version
/// hashes of the source and destination models.
///
/// What a file records:
/// - JSON (`*.mapping.json`): the `sourceEntityVersionHash` / `destinationEntityVersionHash` of
///   its entity mappings (`cdmigrate infer` and Xcode's compiler write them); else its top-level
///   `sourceModel` / `destinationModel` version names;
/// - Xcode (`.xcmappingmodel`): the entity hashes of the source and destination models Xcode
///   embeds in it (its model editor's archives, decoded), so that a version renamed since still
///   matches; the version names in `sourcemodelpath` / `destinationmodelpath`
///   (`…/Model.xcdatamodeld/Model_v2.xcdatamodel` → `Model_v2`) where a model is not embedded;
/// - compiled (`.cdm`): the entity mappings' recorded hashes.
///
/// Core Data counterpart: what `NSMappingModel(from:forSourceModel:destinationModel:)` compares.
public struct MappingModelFile {
    /// The mapping model's file format.
    public enum Kind: String {
        case json, xcode, compiled

        init?(fileName: String) {
            if fileName.hasSuffix(".mapping.json") {
                self = .json
            } else if fileName.hasSuffix(".xcmappingmodel") {
                self = .xcode
            } else if fileName.hasSuffix(".cdm") {
                self = .compiled
            } else {
                return nil
            }
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
    /// Whether the hashes are those of whole models (an Xcode mapping model's embedded models),
    /// so that a step's model must have exactly those entities.
    package var hashesAreWhole = false
    /// Whether the recorded version names decide the step although hashes are recorded: set by
    /// `ModelSet` for an Xcode mapping model whose embedded models match none of the set's
    /// versions (models edited since the mapping was made), where Xcode's compiler would take the
    /// models its paths name.
    package var namesStandIn = false

    var fileName: String { path.split(separator: "/").last.map(String.init) ?? path }

    /// Whether the file records anything that can match it to a step.
    public var recordsVersions: Bool {
        !sourceHashes.isEmpty || !destinationHashes.isEmpty || sourceVersionName != nil || destinationVersionName != nil
    }

    /// Whether the mapping was written for the two models: every recorded hash equals the
    /// model's (the whole set of entities when recorded whole), or the recorded version names are
    /// the step's.
    public func matches(
        source: ManagedObjectModel, sourceVersionName: String,
        destination: ManagedObjectModel, destinationVersionName: String
    ) -> Bool {
        if (!sourceHashes.isEmpty || !destinationHashes.isEmpty) && !namesStandIn {
            return MappingModelFile.fits(sourceHashes, source, whole: hashesAreWhole)
                && MappingModelFile.fits(destinationHashes, destination, whole: hashesAreWhole)
        }
        guard self.sourceVersionName != nil || self.destinationVersionName != nil else { return false }
        return (self.sourceVersionName ?? sourceVersionName) == sourceVersionName
            && (self.destinationVersionName ?? destinationVersionName) == destinationVersionName
    }

    /// Whether every recorded hash equals the model's entity of that name (and, `whole`, the model
    /// has no other entity).
    package static func fits(_ recorded: [String: [UInt8]], _ model: ManagedObjectModel, whole: Bool = false) -> Bool {
        if whole && model.entities.count != recorded.count { return false }
        return recorded.allSatisfy { model.entity(named: $0.key)?.versionHash == $0.value }
    }

    /// How the file was matched to its steps, for plans.
    package var matchDescription: String {
        if kind == .xcode {
            return namesStandIn || (sourceHashes.isEmpty && destinationHashes.isEmpty)
                ? "the version names of its model paths" : "the entity hashes of the models it embeds"
        }
        return !sourceHashes.isEmpty || !destinationHashes.isEmpty ? "recorded entity hashes" : "recorded version names"
    }

    /// The mapping model bound to a step's models.
    /// - Throws: `MigrationError` `.invalidMapping` when it does not fit them.
    public func mappingModel(source: ManagedObjectModel, destination: ManagedObjectModel) throws -> MappingModel {
        if let mapping = mapping { return try mapping.validate(sourceModel: source, destinationModel: destination) }
        return try MappingModel(contentsOf: path, sourceModel: source, destinationModel: destination)
    }

    /// Reads what a file records; nil (with a warning) for a compiled mapping this build cannot read.
    static func read(path: String, kind: Kind, warnings: inout [String]) throws -> MappingModelFile? {
        let fileName = path.split(separator: "/").last.map(String.init) ?? path
        var name = fileName
        for suffix in [".mapping.json", ".xcmappingmodel", ".cdm"] where name.hasSuffix(suffix) {
            name.removeLast(suffix.count)
            break
        }
        switch kind {
        case .json, .compiled:
            let mapping: MappingModel
            do {
                mapping = try MappingModel(contentsOf: path)
            } catch let error as MigrationError where kind == .compiled {
                warnings.append("'\(path)' skipped: this build cannot read compiled mapping models (\(error.message))")
                return nil
            }
            var source: [String: [UInt8]] = [:]
            var destination: [String: [UInt8]] = [:]
            for entity in mapping.entityMappings {
                if let n = entity.sourceEntityName, let h = entity.sourceEntityVersionHash { source[n] = h }
                if let n = entity.destinationEntityName, let h = entity.destinationEntityVersionHash {
                    destination[n] = h
                }
            }
            var sourceName: String?
            var destinationName: String?
            if kind == .json, source.isEmpty && destination.isEmpty {
                let json = try JSON.load(path: path)
                sourceName = json["sourceModel"]?.stringValue
                destinationName = json["destinationModel"]?.stringValue
            }
            let file = MappingModelFile(
                path: path, kind: kind, name: name, sourceHashes: source, destinationHashes: destination,
                sourceVersionName: sourceName, destinationVersionName: destinationName,
                mapping: mapping)
            if !file.recordsVersions {
                warnings.append(
                    "'\(path)' records neither entity version hashes nor sourceModel/destinationModel version names: no step can use it"
                )
            }
            return file
        case .xcode:
            let document = try XcodeStoreDocument.read(
                file: XcodeMappingModelReader.documentPath(path), code: .invalidMapping)
            guard let root = document.objects.first(where: { $0.type == XcodeMappingModelReader.mappingModelType })
            else {
                throw MigrationError(
                    .invalidMapping,
                    "'\(path)' holds no \(XcodeMappingModelReader.mappingModelType) object: it is not an Xcode mapping model"
                )
            }
            // Xcode embeds both models as its editor's archives (XDPMModel): their entity hashes
            // say which step the mapping is for, as Core Data's compiled mapping records them; the
            // version names in the model paths stand in for a model that is not embedded.
            let embedded = XcodeMappingModelReader.embeddedModels(root, file: path)
            warnings += embedded.warnings
            func hashes(_ model: ManagedObjectModel?) -> [String: [UInt8]] {
                var result: [String: [UInt8]] = [:]
                for entity in model?.entities ?? [] { result[entity.name] = entity.versionHash }
                return result
            }
            let sourceHashes = hashes(embedded.source)
            let destinationHashes = hashes(embedded.destination)
            let file = MappingModelFile(
                path: path, kind: kind, name: name,
                sourceHashes: sourceHashes, destinationHashes: destinationHashes,
                sourceVersionName: versionName(root.string("sourcemodelpath")),
                destinationVersionName: versionName(root.string("destinationmodelpath")),
                mapping: nil, hashesAreWhole: true)
            if !file.recordsVersions {
                warnings.append(
                    "'\(path)' records neither the models it was made for nor their paths: no step can use it")
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
