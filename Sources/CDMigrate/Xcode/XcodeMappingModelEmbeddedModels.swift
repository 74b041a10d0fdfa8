/// The source and destination models an Xcode mapping model embeds.
///
/// Xcode's mapping editor stores, beside the paths of the two models (`sourcemodelpath`,
/// `destinationmodelpath`), the models themselves as its model editor archives
/// (`sourcemodeldata`, `destinationmodeldata`: an `XDPMModel` keyed archive, read by
/// `XcodeModelArchiveReader`). Their entity hashes say which versions the mapping was made for,
/// whatever those versions are now called, as Core Data finds a compiled mapping model by the
/// entity hashes it records (`NSMappingModel(from:forSourceModel:destinationModel:)`).
extension XcodeMappingModelReader {
    /// The decoded models of the mapping model at `path` (an `.xcmappingmodel` folder or its
    /// `xcmapping.xml`); nil for a model the file does not embed, and a warning for each model
    /// embedded but not readable.
    /// - Throws: `MigrationError` `.io` when the file cannot be read, `.invalidMapping` when it is
    ///   not an Xcode mapping model.
    package static func embeddedModels(_ path: String) throws -> (
        source: ManagedObjectModel?, destination: ManagedObjectModel?, warnings: [String]
    ) {
        let document = try XcodeStoreDocument.read(file: documentPath(path), code: .invalidMapping)
        guard let root = document.objects.first(where: { $0.type == mappingModelType }) else {
            throw MigrationError(
                .invalidMapping, "'\(path)' holds no \(mappingModelType) object: it is not an Xcode mapping model")
        }
        return embeddedModels(root, file: document.name)
    }

    /// The models embedded in a mapping model's root object.
    static func embeddedModels(_ root: XcodeStoreDocument.Object, file: String) -> (
        source: ManagedObjectModel?, destination: ManagedObjectModel?, warnings: [String]
    ) {
        var warnings: [String] = []
        func decode(_ key: String, _ side: String) -> ManagedObjectModel? {
            guard let text = root.string(key), !text.isEmpty else { return nil }
            guard let bytes = Base64.decode(text) else {
                warnings.append(
                    "'\(file)': the embedded \(side) model (\(key)) is not base64; the model path is used instead")
                return nil
            }
            do {
                return try XcodeModelArchiveReader.model(
                    bytes: bytes, what: "the \(side) model embedded in '\(file)'", name: nil, code: .invalidMapping)
            } catch let error as MigrationError {
                warnings.append(
                    "'\(file)': the embedded \(side) model cannot be read (\(error.message)); the model path is used instead"
                )
                return nil
            } catch {
                return nil
            }
        }
        let source = decode("sourcemodeldata", "source")
        let destination = decode("destinationmodeldata", "destination")
        return (source, destination, warnings)
    }
}
