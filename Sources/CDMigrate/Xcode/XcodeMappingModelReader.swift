extension MappingModel {
    /// Reads an Xcode mapping model (`Name.xcmappingmodel`, or its `xcmapping.xml`) and compiles it
    /// against the two models as Xcode's mapping model compiler does when it builds the `.cdm` that
    /// `NSMappingModel(contentsOf:)` loads; then checks it against the models like
    /// `validate(sourceModel:destinationModel:)`.
    ///
    /// What Xcode leaves to its compiler is filled in the same way: entity mappings in the editor's
    /// order, named `<Source>To<Destination>`, their type derived from the entities, a FETCH source
    /// expression with the filter predicate (or TRUEPREDICATE), the policy class without its Swift
    /// module prefix, `$source.<name>` for an attribute the source entity has, and
    /// `FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "<mapping>",
    /// $source.<name>)` for a relationship. docs/mapping-format.md ("From Xcode") lists the rules.
    /// Entity and property mappings the document keeps but the mapping model does not list are
    /// dropped with a line in `warnings`.
    ///
    /// - Parameters:
    ///   - path: the `.xcmappingmodel` folder or the `xcmapping.xml` file inside it.
    ///   - sourceModel: the model the mapping maps from.
    ///   - destinationModel: the model the mapping maps to.
    /// - Throws: `MigrationError` `.io` when the file cannot be read; `.invalidMapping` naming the
    ///   object (its id and line) when the document is not well-formed or not a mapping model, or
    ///   when the mapping does not fit the models.
    ///
    /// Core Data counterpart: `NSMappingModel(contentsOf:)` on the `.cdm` Xcode compiles from the
    /// `.xcmappingmodel`.
    package static func readXcode(
        _ path: String, sourceModel: ManagedObjectModel, destinationModel: ManagedObjectModel
    ) throws -> MappingModel {
        let mapping = try XcodeMappingModelReader.read(
            path: path, sourceModel: sourceModel, destinationModel: destinationModel)
        return try mapping.validate(sourceModel: sourceModel, destinationModel: destinationModel)
    }
}

/// Compiles an Xcode mapping model document (see `XcodeStoreDocument`) into a `MappingModel`.
///
/// The models are optional here so that the structure of a mapping can be read on its own: without
/// them an attribute mapping is assumed to have its source counterpart, and a relationship mapping
/// gets an expression only when the document names its entity mapping (`sourcemappingname`).
package struct XcodeMappingModelReader {
    package static let mappingModelType = "XDDEVMAPPINGMODEL"
    package static let entityMappingType = "XDDEVENTITYMAPPING"
    package static let attributeMappingType = "XDDEVATTRIBUTEMAPPING"
    package static let relationshipMappingType = "XDDEVRELATIONSHIPMAPPING"
    static let objectTypes: Set<String> = [
        mappingModelType, entityMappingType, attributeMappingType, relationshipMappingType,
    ]

    static let entityMappingAttributes: Set<String> = [
        "name", "sourcename", "destinationname", "mappingtypename", "mappingnumber",
        "migrationpolicyclassname", "sourcefilterpredicatestring", "autogenerateexpression", "userinfodata",
    ]
    static let propertyMappingAttributes: Set<String> = [
        "name", "autogenerateexpression", "sourcekeypath", "sourcemappingname", "valueexpressiondata", "userinfodata",
    ]
    static let mappingModelAttributes: Set<String> = [
        "sourcemodelpath", "sourcemodeldata", "destinationmodelpath", "destinationmodeldata",
    ]

    let document: XcodeStoreDocument
    let sourceModel: ManagedObjectModel?
    let destinationModel: ManagedObjectModel?
    var warnings: [String] = []

    /// True for a path Xcode's mapping model reader takes: a `.xcmappingmodel` folder or an `.xml` file.
    package static func isXcodeMappingModelPath(_ path: String) -> Bool {
        var trimmed = path
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed.removeLast() }
        return trimmed.hasSuffix(".xcmappingmodel") || trimmed.hasSuffix(".xml")
    }

    /// The `xcmapping.xml` file of a `.xcmappingmodel` folder, or `path` itself when it names a file.
    package static func documentPath(_ path: String) -> String {
        var trimmed = path
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed.removeLast() }
        if trimmed.hasSuffix(".xml") && !FileIO.exists(trimmed + "/xcmapping.xml") { return trimmed }
        return trimmed + "/xcmapping.xml"
    }

    /// The mapping's name: the `.xcmappingmodel` folder's name without its extension.
    static func modelName(_ documentPath: String) -> String? {
        var parts = documentPath.split(separator: "/").map(String.init)
        if parts.last == "xcmapping.xml" { parts.removeLast() }
        guard var name = parts.last else { return nil }
        for suffix in [".xcmappingmodel", ".xml"] where name.hasSuffix(suffix) { name.removeLast(suffix.count) }
        return name.isEmpty ? nil : name
    }

    /// Reads and compiles the mapping model at `path` (folder or file). Does not validate it.
    package static func read(path: String, sourceModel: ManagedObjectModel?, destinationModel: ManagedObjectModel?)
        throws -> MappingModel
    {
        let file = documentPath(path)
        let document = try XcodeStoreDocument.read(file: file, code: .invalidMapping)
        var reader = XcodeMappingModelReader(
            document: document, sourceModel: sourceModel, destinationModel: destinationModel)
        let mappings = try reader.compile()
        let mapping = MappingModel(name: modelName(file), entityMappings: mappings, warnings: reader.warnings)
        return try IntendedLossesFile.applying(to: mapping, mappingPath: path)
    }

    func fail(_ object: XcodeStoreDocument.Object, _ message: String, underlying: [MigrationError] = [])
        -> MigrationError
    {
        MigrationError(
            .invalidMapping, "'\(document.name)': \(object.label): \(message)", path: object.id, underlying: underlying)
    }

    /// The entity mappings, in the order of their `mappingnumber`.
    mutating func compile() throws -> [EntityMapping] {
        for object in document.objects where !Self.objectTypes.contains(object.type) {
            throw fail(
                object,
                "'\(object.type)' is not an object of an Xcode mapping model (expected one of \(Self.objectTypes.sorted().joined(separator: ", ")))"
            )
        }
        let models = document.objects.filter { $0.type == Self.mappingModelType }
        guard let model = models.first else {
            throw MigrationError(
                .invalidMapping,
                "'\(document.name)' holds no \(Self.mappingModelType) object: it is not an Xcode mapping model")
        }
        if models.count > 1 { throw fail(models[1], "a second mapping model (the first is \(model.id))") }
        warnUnknownAttributes(model, known: Self.mappingModelAttributes)

        let listed = try document.related(model, "entitymappings", type: Self.entityMappingType, code: .invalidMapping)
        let listedIDs = Set(listed.map { $0.id })
        for object in document.objects where object.type == Self.entityMappingType && !listedIDs.contains(object.id) {
            warnings.append(
                "'\(document.name)': entity mapping \(object.id) (line \(object.line), \(describe(object))) is not listed by the mapping model and was dropped, as Xcode's compiler drops it"
            )
        }
        var numbered: [(number: Int, index: Int, object: XcodeStoreDocument.Object)] = []
        var seen = Set<String>()
        for (index, object) in listed.enumerated() {
            if !seen.insert(object.id).inserted {
                throw fail(model, "relationship 'entitymappings' lists \(object.id) twice")
            }
            guard let text = object.string("mappingnumber") else {
                throw fail(object, "the entity mapping has no 'mappingnumber'")
            }
            guard let number = Int(text.trimmingSpaces()), number >= Int(Int16.min), number <= Int(Int16.max) else {
                throw fail(
                    object,
                    "'mappingnumber' (line \(object.attributes["mappingnumber"]?.line ?? object.line)) is '\(text)', not a 16-bit integer"
                )
            }
            numbered.append((number, index, object))
        }
        numbered.sort { ($0.number, $0.index) < ($1.number, $1.index) }
        let ordered = numbered.map { $0.object }

        // Property mappings no listed entity mapping lists: Xcode keeps them in the document, its compiler ignores them.
        var ownedProperties = Set<String>()
        for object in ordered {
            for id in (object.relationships["attributemappings"] ?? [])
                + (object.relationships["relationshipmappings"] ?? [])
            { ownedProperties.insert(id) }
        }
        for object in document.objects
        where (object.type == Self.attributeMappingType || object.type == Self.relationshipMappingType)
            && !ownedProperties.contains(object.id)
        {
            let kind = object.type == Self.attributeMappingType ? "attribute" : "relationship"
            warnings.append(
                "'\(document.name)': \(kind) mapping \(object.id) '\(object.string("name") ?? "")' (line \(object.line)) belongs to no listed entity mapping and was dropped"
            )
        }

        let heads = try ordered.map { try head(of: $0) }
        var mappings: [EntityMapping] = []
        for (object, head) in zip(ordered, heads) {
            mappings.append(try entityMapping(object, head: head, all: heads))
        }
        return mappings
    }

    /// What an entity mapping says of itself, before its property mappings.
    struct Head {
        var name: String
        var source: String?
        var destination: String?
        var type: EntityMappingType
    }

    func describe(_ object: XcodeStoreDocument.Object) -> String {
        "\(nonEmpty(object.string("sourcename")) ?? "nothing") → \(nonEmpty(object.string("destinationname")) ?? "nothing")"
    }

    func nonEmpty(_ text: String?) -> String? {
        guard let text, !text.allSatisfy({ $0 == " " || $0 == "\n" || $0 == "\t" }) else { return nil }
        return text
    }

    func head(of object: XcodeStoreDocument.Object) throws -> Head {
        let source = nonEmpty(object.string("sourcename"))
        let destination = nonEmpty(object.string("destinationname"))
        let name = nonEmpty(object.string("name")) ?? Self.defaultName(source: source, destination: destination)
        let typeName = nonEmpty(object.string("mappingtypename")) ?? "Undefined"
        guard let declared = EntityMappingType(rawValue: typeName.lowercased()) else {
            throw fail(
                object,
                "unknown mapping type '\(typeName)' (Xcode writes one of Undefined, Custom, Add, Remove, Copy, Transform)"
            )
        }
        return Head(
            name: name, source: source, destination: destination,
            type: declared == .undefined ? Self.derivedType(source: source, destination: destination) : declared)
    }

    /// Xcode's name for a mapping: `<Source>To<Destination>` (the one entity's name when there is only one).
    static func defaultName(source: String?, destination: String?) -> String {
        switch (source, destination) {
        case (let s?, let d?): return s + "To" + d
        case (let s?, nil): return s
        case (nil, let d?): return d
        default: return "Undefined"
        }
    }

    /// Xcode's compiler for an "Undefined" mapping: the same entity name on both sides is a copy (even
    /// when the entity changed: XcodeServer 1_1_0's IssueToIssue), different names a transform; only
    /// a destination is an add, only a source a remove.
    static func derivedType(source: String?, destination: String?) -> EntityMappingType {
        switch (source, destination) {
        case (let s?, let d?): return s == d ? .copy : .transform
        case (nil, _?): return .add
        case (_?, nil): return .remove
        default: return .undefined
        }
    }

    /// A policy class name without its module prefix (`UnCloudNotes.AttachmentPolicy` → `AttachmentPolicy`).
    static func unqualified(_ className: String) -> String {
        guard let dot = className.lastIndex(of: ".") else { return className }
        return String(className[className.index(after: dot)...])
    }

    mutating func warnUnknownAttributes(_ object: XcodeStoreDocument.Object, known: Set<String>) {
        for name in object.attributeOrder where !known.contains(name) {
            warnings.append(
                "'\(document.name)': \(object.label): attribute '\(name)' is not understood and was ignored")
        }
    }

    mutating func entityMapping(_ object: XcodeStoreDocument.Object, head: Head, all heads: [Head]) throws
        -> EntityMapping
    {
        warnUnknownAttributes(object, known: Self.entityMappingAttributes)
        let path = "\(object.id) (line \(object.line))"
        var sourceExpressionText: String?
        var sourceExpression: SourceExpression?
        if let source = head.source, head.type != .add {
            let predicate = nonEmpty(object.string("sourcefilterpredicatestring")) ?? "TRUEPREDICATE"
            let text =
                "FETCH(FUNCTION($manager, \"fetchRequestForSourceEntityNamed:predicateString:\", \(ValueExpression.quoted(source)), \(ValueExpression.quoted(predicate))), $manager.sourceContext, NO)"
            do {
                sourceExpression = try SourceExpression.parse(text)
            } catch let error as MigrationError {
                throw fail(
                    object,
                    "entity mapping '\(head.name)': the filter predicate '\(predicate)' does not parse: \(error.message)",
                    underlying: [error])
            }
            sourceExpressionText = text
        }
        var policy: String?
        if let className = nonEmpty(object.string("migrationpolicyclassname")) { policy = Self.unqualified(className) }
        let sourceEntity = head.source.flatMap { sourceModel?.entity(named: $0) }
        let destinationEntity = head.destination.flatMap { destinationModel?.entity(named: $0) }
        let this = self  // the expression rules read the document and the models only
        let attributes = try propertyMappings(
            of: object, key: "attributemappings", type: Self.attributeMappingType, head: head
        ) { property, name in
            if let keyPath = this.nonEmpty(property.string("sourcekeypath")) { return keyPath }
            guard head.source != nil else { return nil }
            if this.sourceModel != nil && sourceEntity?.attribute(named: name) == nil { return nil }
            return "$source." + name
        }
        let relationships = try propertyMappings(
            of: object, key: "relationshipmappings", type: Self.relationshipMappingType, head: head
        ) { property, name in
            let keyPath = this.nonEmpty(property.string("sourcekeypath"))
            if keyPath == nil && head.source == nil { return nil }
            if keyPath == nil, this.sourceModel != nil, sourceEntity?.relationship(named: name) == nil { return nil }
            guard
                let target = this.nonEmpty(property.string("sourcemappingname"))
                    ?? this.targetMapping(of: name, head: head, all: heads)
            else { return nil }
            return
                "FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \(ValueExpression.quoted(target)), \(keyPath ?? "$source." + name))"
        }
        return EntityMapping(
            name: head.name, mappingType: head.type, sourceEntityName: head.source,
            destinationEntityName: head.destination,
            sourceExpressionText: sourceExpressionText, sourceExpression: sourceExpression,
            attributeMappings: attributes, relationshipMappings: relationships,
            entityMigrationPolicyClassName: policy, userInfo: try userInfo(of: object),
            sourceEntityVersionHash: sourceEntity?.versionHash,
            destinationEntityVersionHash: destinationEntity?.versionHash,
            sourceEntitySnapshot: sourceEntity.map(EntityMapping.snapshot(of:)),
            destinationEntitySnapshot: destinationEntity.map(EntityMapping.snapshot(of:)), path: path)
    }

    /// The property mappings an entity mapping lists, sorted by name as Xcode's compiler writes
    /// them, each with the expression `expression` gives (nil: none).
    mutating func propertyMappings(
        of object: XcodeStoreDocument.Object, key: String, type: String, head: Head,
        expression: (XcodeStoreDocument.Object, String) -> String?
    ) throws -> [PropertyMapping] {
        var result: [PropertyMapping] = []
        var seen: [String: String] = [:]
        for property in try document.related(object, key, type: type, code: .invalidMapping) {
            warnUnknownAttributes(property, known: Self.propertyMappingAttributes)
            guard let name = nonEmpty(property.string("name")) else {
                throw fail(property, "the property mapping has no name")
            }
            if let earlier = seen[name] {
                throw fail(property, "entity mapping '\(head.name)' maps '\(name)' twice (also \(earlier))")
            }
            seen[name] = property.id
            // A typed-in expression is kept as an archived NSExpression; the rules make the rest.
            let text =
                try nonEmpty(property.string("valueexpressiondata")).map { try typedInExpression($0, of: property) }
                ?? expression(property, name)
            var parsed: ValueExpression?
            if let text {
                do {
                    parsed = try ExpressionParser.parseExpression(text)
                } catch let error as MigrationError {
                    throw fail(
                        property,
                        "the value expression '\(text)' for '\(head.name).\(name)' does not parse: \(error.message)",
                        underlying: [error])
                }
            }
            result.append(
                PropertyMapping(
                    name: name, valueExpressionText: text, valueExpression: parsed,
                    userInfo: try userInfo(of: property), path: "\(property.id) (line \(property.line))"))
        }
        return result.sorted { Self.precedes($0.name, $1.name) }
    }

    /// The text of a value expression typed into the mapping editor, which the document keeps as
    /// `valueexpressiondata`: base64 of a keyed archive of the NSExpression (read exactly, by
    /// `ArchivedExpressionDecoder`, as the `.cdm` reader reads its expressions).
    func typedInExpression(_ encoded: String, of property: XcodeStoreDocument.Object) throws -> String {
        let line = property.attributes["valueexpressiondata"]?.line ?? property.line
        guard let bytes = Base64.decode(String(encoded.filter { !$0.isWhitespace })) else {
            throw fail(property, "'valueexpressiondata' (line \(line)) is not base64")
        }
        let archive = try KeyedArchive(
            bytes: bytes, code: .invalidMapping,
            what: "'\(document.name)': \(property.label): 'valueexpressiondata' (line \(line))")
        return try ArchivedExpressionDecoder(archive: archive).text(of: try archive.object(try archive.topReference()))
    }

    /// The user info the mapping editor keeps as `userinfodata`: base64 of a keyed archive of the
    /// NSDictionary, whose values keep the types they were archived as (see `MappingUserInfo`).
    func userInfo(of object: XcodeStoreDocument.Object) throws -> [String: Value] {
        guard let encoded = nonEmpty(object.string("userinfodata")) else { return [:] }
        let line = object.attributes["userinfodata"]?.line ?? object.line
        guard let bytes = Base64.decode(String(encoded.filter { !$0.isWhitespace })) else {
            throw fail(object, "'userinfodata' (line \(line)) is not base64")
        }
        let archive = try KeyedArchive(
            bytes: bytes, code: .invalidMapping,
            what: "'\(document.name)': \(object.label): 'userinfodata' (line \(line))")
        let root = try archive.decode(try archive.topReference())
        guard let entries = root.dictionaryValue else {
            throw fail(object, "'userinfodata' (line \(line)) holds a \(root.typeName), not a dictionary")
        }
        return try MappingUserInfo.fromArchive(entries) {
            fail(object, "the user info in 'userinfodata' (line \(line)) \($0)")
        }
    }

    /// Xcode's compiler writes property mappings sorted by name ignoring case
    /// (`additionalBuildArgumentsData` before `addMissingDeviceToTeams` in XcodeServer's `.cdm`).
    static func precedes(_ a: String, _ b: String) -> Bool {
        let (la, lb) = (a.lowercased(), b.lowercased())
        if la != lb { return la.unicodeScalars.lexicographicallyPrecedes(lb.unicodeScalars) }
        return a.unicodeScalars.lexicographicallyPrecedes(b.unicodeScalars)
    }

    /// The entity mapping whose instances a relationship `name` of `head` points to: the one from the
    /// source relationship's destination entity to the destination relationship's destination entity.
    func targetMapping(of name: String, head: Head, all heads: [Head]) -> String? {
        guard let sourceModel, let destinationModel,
            let sourceTarget = head.source.flatMap({
                sourceModel.entity(named: $0)?.relationship(named: name)?.destinationEntityName
            }),
            let destinationTarget = head.destination.flatMap({
                destinationModel.entity(named: $0)?.relationship(named: name)?.destinationEntityName
            })
        else { return nil }
        return heads.first { $0.source == sourceTarget && $0.destination == destinationTarget }?.name
    }

}

extension String {
    func trimmingSpaces() -> String {
        var s = self[...]
        while let c = s.first, c == " " || c == "\n" || c == "\t" || c == "\r" { s = s.dropFirst() }
        while let c = s.last, c == " " || c == "\n" || c == "\t" || c == "\r" { s = s.dropLast() }
        return String(s)
    }
}
