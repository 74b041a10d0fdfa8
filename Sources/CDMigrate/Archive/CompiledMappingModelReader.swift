/// Reads compiled mapping models: the `.cdm` files Xcode's mapping model compiler writes (a binary
/// property list holding an NSKeyedArchiver archive of NSMappingModel), the file
/// `NSMappingModel(contentsOf:)` loads in an app.
///
/// | Class | Keys read |
/// |---|---|
/// | NSMappingModel | `NSEntityMappings` (in order) |
/// | NSEntityMapping | `NSMappingName`, `NSMappingType` (0 undefined … 5 transform), `NSSourceEntityName`, `NSDestinationEntityName`, `NSSourceEntityVersionHash`, `NSDestinationEntityVersionHash`, `NSEntityMigrationPolicyClassName`, `NSSourceExpression`, `NSAttributeMappings`, `NSRelationshipMappings`, `NSUserInfo` |
/// | NSPropertyMapping | `NSDestinationPropertyName`, `NSValueExpression`, `NSUserInfo` |
///
/// Expressions are read by `ArchivedExpressionDecoder` into Core Data's expression syntax and parsed
/// as the JSON and Xcode readers parse theirs, so the three sources give equal mappings.
package enum CompiledMappingModelReader {
    static let mappingTypes: [EntityMappingType] = [.undefined, .custom, .add, .remove, .copy, .transform]

    /// True for a path that names a compiled mapping model (`.cdm`, or Xcode's `.cdm_precompiled`).
    package static func isCompiledMappingModelPath(_ path: String) -> Bool {
        return path.hasSuffix(".cdm") || path.hasSuffix(".cdm_precompiled")
    }

    /// Reads the compiled mapping model at `path`, named after the file.
    package static func read(path: String) throws -> MappingModel {
        let bytes = try FileIO.readBytes(path: path)
        var name = path.split(separator: "/").last.map(String.init) ?? path
        for suffix in [".cdm_precompiled", ".cdm"] where name.hasSuffix(suffix) { name.removeLast(suffix.count) }
        let mapping = try mapping(
            fromArchive: bytes, name: name.isEmpty ? nil : name, what: "the compiled mapping model '\(path)'")
        return try IntendedLossesFile.applying(to: mapping, mappingPath: path)
    }

    /// Decodes a mapping model from the bytes of a keyed archive of NSMappingModel.
    package static func mapping(fromArchive bytes: [UInt8], name: String?, what: String) throws -> MappingModel {
        let archive = try KeyedArchive(bytes: bytes, code: .invalidMapping, what: what)
        let root = try archive.object(try archive.topReference())
        guard root.isKind(of: "NSMappingModel") else {
            throw archive.error("the root object is a \(root.className), not an NSMappingModel")
        }
        let expressions = ArchivedExpressionDecoder(archive: archive)
        var mappings: [EntityMapping] = []
        for (i, item) in (try root.array("NSEntityMappings") ?? []).enumerated() {
            guard case .object(let reference, _) = item else {
                throw root.error("NSEntityMappings", "holds a \(item.typeName) at \(i), not an NSEntityMapping")
            }
            mappings.append(try entityMapping(try archive.object(reference), index: i, expressions: expressions))
        }
        return MappingModel(name: name, entityMappings: mappings)
    }

    private static func entityMapping(_ object: ArchivedObject, index: Int, expressions: ArchivedExpressionDecoder)
        throws -> EntityMapping
    {
        guard object.isKind(of: "NSEntityMapping") else {
            throw object.archive.error(
                "entity mapping \(index) (object \(object.reference.index)) is a \(object.className), not an NSEntityMapping"
            )
        }
        guard let name = try object.string("NSMappingName"), !name.isEmpty else {
            throw object.error("NSMappingName", "is missing")
        }
        let typeCode = try object.integer("NSMappingType") ?? 0
        guard typeCode >= 0, typeCode < Int64(mappingTypes.count) else {
            throw object.error("NSMappingType", "is \(typeCode), not one of NSEntityMappingType's values 0…5")
        }
        let path = "object \(object.reference.index) (entity mapping '\(name)')"
        var sourceText: String?
        var source: SourceExpression?
        if let expression = try object.object("NSSourceExpression") {
            let text = try expressions.text(of: expression)
            do {
                source = try SourceExpression.parse(text)
            } catch let error as MigrationError {
                throw MigrationError(
                    .invalidMapping,
                    "\(object.archive.what): entity mapping '\(name)': the source expression '\(text)' does not parse: \(error.message)",
                    path: path, underlying: [error])
            }
            sourceText = text
        }
        let attributes = try propertyMappings(
            object, key: "NSAttributeMappings", mapping: name, expressions: expressions)
        let relationships = try propertyMappings(
            object, key: "NSRelationshipMappings", mapping: name, expressions: expressions)
        return EntityMapping(
            name: name, mappingType: mappingTypes[Int(typeCode)],
            sourceEntityName: try nonEmpty(object.string("NSSourceEntityName")),
            destinationEntityName: try nonEmpty(object.string("NSDestinationEntityName")),
            sourceExpressionText: sourceText, sourceExpression: source,
            attributeMappings: attributes, relationshipMappings: relationships,
            entityMigrationPolicyClassName: try nonEmpty(object.string("NSEntityMigrationPolicyClassName")),
            userInfo: try userInfo(object),
            sourceEntityVersionHash: try hash(object, "NSSourceEntityVersionHash"),
            destinationEntityVersionHash: try hash(object, "NSDestinationEntityVersionHash"),
            sourceEntitySnapshot: nil, destinationEntitySnapshot: nil, path: path)
    }

    private static func propertyMappings(
        _ owner: ArchivedObject, key: String, mapping: String, expressions: ArchivedExpressionDecoder
    ) throws -> [PropertyMapping] {
        var result: [PropertyMapping] = []
        for (i, item) in (try owner.array(key) ?? []).enumerated() {
            guard case .object(let reference, _) = item else {
                throw owner.error(key, "holds a \(item.typeName) at \(i), not an NSPropertyMapping")
            }
            let object = try owner.archive.object(reference)
            guard object.isKind(of: "NSPropertyMapping") else {
                throw owner.error(key, "holds a \(object.className) at \(i), not an NSPropertyMapping")
            }
            guard let name = try object.string("NSDestinationPropertyName"), !name.isEmpty else {
                throw object.error("NSDestinationPropertyName", "is missing")
            }
            var text: String?
            var parsed: ValueExpression?
            if let expression = try object.object("NSValueExpression") {
                let written = try expressions.text(of: expression)
                do {
                    parsed = try ExpressionParser.parseExpression(written)
                } catch let error as MigrationError {
                    throw MigrationError(
                        .invalidMapping,
                        "\(owner.archive.what): the value expression '\(written)' for '\(mapping).\(name)' does not parse: \(error.message)",
                        path: "object \(object.reference.index)", underlying: [error])
                }
                text = written
            }
            result.append(
                PropertyMapping(
                    name: name, valueExpressionText: text, valueExpression: parsed, userInfo: try userInfo(object),
                    path: "object \(object.reference.index) (\(mapping).\(name))"))
        }
        return result
    }

    private static func nonEmpty(_ text: String?) -> String? {
        guard let text, !text.isEmpty else { return nil }
        return text
    }

    private static func hash(_ object: ArchivedObject, _ key: String) throws -> [UInt8]? {
        switch try object.value(key) {
        case .null: return nil
        case .data(let bytes): return bytes
        case let other: throw object.error(key, "is a \(other.typeName), not data")
        }
    }

    /// `NSUserInfo`, each value of the type it was archived as (see `MappingUserInfo`).
    static func userInfo(_ object: ArchivedObject) throws -> [String: Value] {
        guard let entries = try object.dictionary("NSUserInfo") else { return [:] }
        return try MappingUserInfo.fromArchive(entries) { object.error("NSUserInfo", $0) }
    }
}
