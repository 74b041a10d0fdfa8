/// Reads compiled data models: the `.mom` files Xcode's model compiler writes (a binary property
/// list holding an NSKeyedArchiver archive of NSManagedObjectModel), and the same archive as
/// stores keep it in their model cache.
///
/// The model is built as `ModelReader` builds one from JSON (the same descriptions, the same
/// validation), so equal inputs give equal models. Properties are taken from the entity that
/// declares them (inherited ones are left to inheritance), entities and properties in name order.
/// A renaming identifier equal to the element's own name is no renaming identifier, as in Core Data.
package enum CompiledModelReader {
    /// Reads a compiled model file (`.mom`), or the current version of a compiled model bundle
    /// (`.momd`, see `CompiledModelBundle`).
    ///
    /// - Parameter path: the `.mom` file or `.momd` folder.
    /// - Returns: the model, named after the file.
    /// - Throws: `MigrationError` `.io` when the file cannot be read, `.invalidModel` when it is
    ///   not a keyed archive of a managed object model or the model is not valid.
    ///
    /// Core Data counterpart: `NSManagedObjectModel(contentsOf:)`.
    package static func model(contentsOf path: String) throws -> ManagedObjectModel {
        if CompiledModelBundle.isBundle(path) {
            return try CompiledModelBundle(contentsOf: path).currentModel
        }
        let bytes = try FileIO.readBytes(path: path)
        return try model(fromArchive: bytes, name: baseName(path), what: "the compiled model '\(path)'")
    }

    /// Decodes a model from the bytes of a keyed archive of NSManagedObjectModel.
    ///
    /// - Parameters:
    ///   - bytes: a binary property list (`bplist00`).
    ///   - name: the model's name (archives do not record one).
    ///   - what: how messages name the archive.
    /// - Throws: `MigrationError` `.invalidModel`, naming the object and key at fault.
    package static func model(fromArchive bytes: [UInt8], name: String? = nil, what: String = "the compiled model")
        throws -> ManagedObjectModel
    {
        let archive = try KeyedArchive(bytes: bytes, code: .invalidModel, what: what)
        return try model(from: archive, name: name)
    }

    /// Decodes the NSManagedObjectModel at the archive's root.
    package static func model(from archive: KeyedArchive, name: String?) throws -> ManagedObjectModel {
        let root = try archive.object(try archive.topReference())
        guard root.isKind(of: "NSManagedObjectModel") else {
            throw archive.error("the root object is a \(root.className), not an NSManagedObjectModel")
        }
        var identifiers: [String] = []
        for value in try root.array("NSVersionIdentifiers") ?? [] {
            if case .string(let s) = value, !s.isEmpty { identifiers.append(s) }
        }
        var entities: [EntityDescription] = []
        for (key, value) in try root.dictionary("NSEntities") ?? [] {
            guard case .object(let reference, _) = value else {
                throw archive.error("the model's entity \(key) is a \(value.typeName), not an NSEntityDescription")
            }
            entities.append(try entity(try archive.object(reference)))
        }
        entities.sort { $0.name < $1.name }
        do {
            return try ManagedObjectModel(name: name, versionIdentifier: identifiers.sorted().first, entities: entities)
        } catch var error as MigrationError {
            error.message = "\(archive.what): " + error.message
            throw error
        }
    }

    // MARK: Entities and properties

    private static func entity(_ object: ArchivedObject) throws -> EntityDescription {
        guard object.isKind(of: "NSEntityDescription") else {
            throw object.archive.error(
                "object \(object.reference.index) is a \(object.className), not an NSEntityDescription")
        }
        guard let name = try object.string("NSEntityName") else { throw object.error("NSEntityName", "is missing") }
        let parent = try object.object("NSSuperentity").flatMap { try $0.string("NSEntityName") }
        var attributes: [AttributeDescription] = []
        var relationships: [RelationshipDescription] = []
        for (key, value) in try object.dictionary("NSProperties") ?? [] {
            guard case .object(let reference, _) = value else {
                throw object.error("NSProperties", "holds \(key) as a \(value.typeName), not a property description")
            }
            let property = try object.archive.object(reference)
            // Subentities may list inherited properties (as proxies or as the parent's own objects).
            if property.isKind(of: "_NSPropertyDescriptionProxy") { continue }
            if case .object(let owner, _) = try property.value("NSEntity"), owner != object.reference { continue }
            if property.isKind(of: "NSAttributeDescription") {
                attributes.append(try attribute(property, entity: name))
            } else if property.isKind(of: "NSRelationshipDescription") {
                relationships.append(try relationship(property, entity: name))
            }
            // Fetched properties have no storage and no part in migrations: left out.
        }
        attributes.sort { $0.name < $1.name }
        relationships.sort { $0.name < $1.name }
        let entity = EntityDescription(
            name: name, parent: parent, isAbstract: try object.bool("NSIsAbstract"),
            attributes: attributes, relationships: relationships,
            renamingIdentifier: try renamingIdentifier(object, name: name),
            versionHashModifier: try object.string("NSVersionHashModifier"),
            userInfo: try userInfo(object))
        entity.fetchIndexes = try fetchIndexes(object, entity: name)
        entity.uniquenessConstraints = try uniquenessConstraints(object, entity: name)
        // The class Core Data instantiates; its default (NSManagedObject) is no class name.
        if let className = try object.string("NSClassNameForEntity"), !className.isEmpty, className != "NSManagedObject"
        {
            entity.managedObjectClassName = className
        }
        return entity
    }

    /// `NSUniqueTuples`: the uniqueness constraints, each an array of property names (or of
    /// property descriptions, read by their `NSPropertyName`).
    private static func uniquenessConstraints(_ object: ArchivedObject, entity: String) throws -> [[String]] {
        var constraints: [[String]] = []
        for value in try object.array("NSUniqueTuples") ?? [] {
            guard case .array(let items) = value else {
                throw object.error(
                    "NSUniqueTuples", "holds a \(value.typeName), not a list of property names ('\(entity)')")
            }
            var names: [String] = []
            for item in items {
                switch item {
                case .string(let name): names.append(name)
                case .object(let reference, _):
                    guard let name = try object.archive.object(reference).string("NSPropertyName") else {
                        throw object.error("NSUniqueTuples", "holds a property without a name ('\(entity)')")
                    }
                    names.append(name)
                default:
                    throw object.error("NSUniqueTuples", "holds a \(item.typeName), not a property name ('\(entity)')")
                }
            }
            constraints.append(names)
        }
        return constraints
    }

    /// `NSFetchIndexDescriptions`: NSFetchIndexDescription objects (`NSIndexName`, `NSIndexElements`
    /// of NSFetchIndexElementDescription: `NSPropertyName`, `NSFetchIndexElementType` 0 binary / 1
    /// R-tree, `NSAscending`).
    private static func fetchIndexes(_ object: ArchivedObject, entity: String) throws -> [FetchIndexDescription] {
        var indexes: [FetchIndexDescription] = []
        for value in try object.array("NSFetchIndexDescriptions") ?? [] {
            guard case .object(let reference, _) = value else {
                throw object.error(
                    "NSFetchIndexDescriptions", "holds a \(value.typeName), not a fetch index ('\(entity)')")
            }
            let index = try object.archive.object(reference)
            guard let name = try index.string("NSIndexName") else {
                throw index.error("NSIndexName", "is missing (a fetch index of '\(entity)')")
            }
            var elements: [FetchIndexDescription.Element] = []
            for item in try index.array("NSIndexElements") ?? [] {
                guard case .object(let elementReference, _) = item else {
                    throw index.error(
                        "NSIndexElements", "holds a \(item.typeName), not an index element ('\(entity).\(name)')")
                }
                let element = try object.archive.object(elementReference)
                let type: FetchIndexDescription.ElementType =
                    try element.integer("NSFetchIndexElementType") == 1 ? .rTree : .binary
                let ascending = try element.value("NSAscending") == .null ? true : try element.bool("NSAscending")
                elements.append(
                    FetchIndexDescription.Element(
                        propertyName: try element.string("NSPropertyName"), type: type, isAscending: ascending))
            }
            indexes.append(FetchIndexDescription(name: name, elements: elements))
        }
        return indexes
    }

    /// NSPropertyDescription's flags: the packed `_P` when present, else the separate keys.
    private struct PropertyFlags {
        var isOptional: Bool
        var isTransient: Bool
        var isOrdered: Bool

        init(_ object: ArchivedObject) throws {
            let packed = try object.integer("_P") ?? 0
            if packed != 0 {
                isOptional = packed & 0x2 != 0
                isTransient = packed & 0x8 != 0
                isOrdered = packed & 0x400 != 0
            } else {
                isOptional = try object.bool("NSIsOptional")
                isTransient = try object.bool("NSIsTransient")
                isOrdered = try object.bool("NSIsOrdered")
            }
        }
    }

    private static func propertyName(_ object: ArchivedObject, entity: String) throws -> String {
        guard let name = try object.string("NSPropertyName") else {
            throw object.error("NSPropertyName", "is missing (a property of entity '\(entity)')")
        }
        return name
    }

    private static func attribute(_ object: ArchivedObject, entity: String) throws -> AttributeDescription {
        let name = try propertyName(object, entity: entity)
        let flags = try PropertyFlags(object)
        guard let code = try object.integer("NSAttributeType") else {
            throw object.error("NSAttributeType", "is missing ('\(entity).\(name)')")
        }
        guard let type = AttributeType.allCases.first(where: { Int64($0.coreDataCode) == code }) else {
            throw object.error("NSAttributeType", "is \(code), a type cdmigrate does not support ('\(entity).\(name)')")
        }
        let defaultValue = try self.defaultValue(
            try object.value("NSDefaultValue"), type: type, object: object, owner: "\(entity).\(name)")
        // NSFlagsKey: 1 a maximum, 2 a minimum, 4 external binary storage, 0x10 preserved in history on deletion.
        let attributeFlags = try object.integer("NSFlagsKey") ?? 0
        func bound(_ key: String, _ flag: Int64) throws -> Double? {
            guard attributeFlags & flag != 0 else { return nil }
            let v = try object.value(key)
            switch v {
            case .integer(let i): return Double(i)
            case .real(let d): return d
            case .null: return nil
            default: throw object.error(key, "is a \(v.typeName), not a number")
            }
        }
        let attribute = AttributeDescription(
            name: name, type: type, isOptional: flags.isOptional, isTransient: flags.isTransient,
            defaultValue: defaultValue,
            minValue: try bound("NSMinValueName", 2), maxValue: try bound("NSMaxValueName", 1),
            renamingIdentifier: try renamingIdentifier(object, name: name),
            versionHashModifier: try object.string("NSVersionHashModifier"),
            userInfo: try userInfo(object))
        attribute.valueTransformerName = try object.string("NSValueTransformerName")
        attribute.allowsExternalBinaryDataStorage = attributeFlags & 4 != 0
        attribute.preservesValueInHistoryOnDeletion = attributeFlags & 0x10 != 0
        attribute.isIndexed = try object.bool("NSIsIndexed")
        if object.isKind(of: "NSDerivedAttributeDescription") {
            // NSDerivedAttributeDescription's keys: NSDerivationExpression (an archived NSExpression)
            // and NSFilteringPredicate (an NSPredicate, which this reader does not decode: noted only).
            if let expression = try object.object("NSDerivationExpression") {
                attribute.derivationExpression = try ArchivedExpressionDecoder(archive: object.archive).text(
                    of: expression)
            } else {
                attribute.derivationExpression = ""
            }
            if try object.object("NSFilteringPredicate") != nil { attribute.filteringPredicate = "(a predicate)" }
        }
        return attribute
    }

    private static func relationship(_ object: ArchivedObject, entity: String) throws -> RelationshipDescription {
        let name = try propertyName(object, entity: entity)
        let flags = try PropertyFlags(object)
        var destination = try object.string("_NSDestinationEntityName")
        if destination == nil {
            destination = try object.object("NSDestinationEntity").flatMap { try $0.string("NSEntityName") }
        }
        guard let destinationName = destination else {
            throw object.error("NSDestinationEntity", "is missing ('\(entity).\(name)' has no destination)")
        }
        var inverse = try object.string("_NSInverseRelationshipName")
        if inverse == nil {
            inverse = try object.object("NSInverseRelationship").flatMap { try $0.string("NSPropertyName") }
        }
        let maxCount = Int(clamping: try object.integer("NSMaxCount") ?? 0)
        let minCount = Int(clamping: try object.integer("NSMinCount") ?? 0)
        let rules: [DeleteRule] = [.noAction, .nullify, .cascade, .deny]
        let ruleCode = try object.integer("NSDeleteRule") ?? 1
        guard ruleCode >= 0, ruleCode < rules.count else {
            throw object.error("NSDeleteRule", "is \(ruleCode), not a delete rule (0 to 3) ('\(entity).\(name)')")
        }
        let relationship = RelationshipDescription(
            name: name, destination: destinationName, inverse: inverse, isToMany: maxCount != 1,
            isOrdered: flags.isOrdered,
            deleteRule: rules[Int(ruleCode)], minCount: minCount, maxCount: maxCount, isOptional: flags.isOptional,
            isTransient: flags.isTransient, renamingIdentifier: try renamingIdentifier(object, name: name),
            versionHashModifier: try object.string("NSVersionHashModifier"), userInfo: try userInfo(object))
        relationship.isIndexed = try object.bool("NSIsIndexed")
        return relationship
    }

    // MARK: Values

    /// Core Data keeps no renaming identifier that equals the name.
    private static func renamingIdentifier(_ object: ArchivedObject, name: String) throws -> String? {
        guard let identifier = try object.string("NSRenamingIdentifier"), identifier != name else { return nil }
        return identifier
    }

    /// `NSUserInfo` as text keys and values (numbers and booleans written out).
    private static func userInfo(_ object: ArchivedObject) throws -> [String: String] {
        var result: [String: String] = [:]
        for (key, value) in try object.dictionary("NSUserInfo") ?? [] {
            guard case .string(let k) = key else {
                throw object.error("NSUserInfo", "has a \(key.typeName) key, not a string")
            }
            switch value {
            case .string(let s): result[k] = s
            case .integer(let i): result[k] = String(i)
            case .real(let d): result[k] = Value.format(d)
            case .bool(let b): result[k] = b ? "YES" : "NO"
            default: throw object.error("NSUserInfo", "holds a \(value.typeName) under '\(k)', not text")
            }
        }
        return result
    }

    /// A default value, converted as the JSON reader converts one.
    private static func defaultValue(_ value: ArchiveValue, type: AttributeType, object: ArchivedObject, owner: String)
        throws -> Value
    {
        if type == .transformable {
            switch value {
            case .array, .dictionary, .object:
                // A transformable's default is an archived object of the app's classes: kept by Core
                // Data, meaningless here (a migration never writes defaults), so left out.
                return .null
            default:
                break
            }
        }
        let json: JSON
        switch value {
        case .null: return .null
        case .uuid(let bytes) where type == .uuid: return .uuid(bytes)
        case .url(let s) where type == .uri: return .uri(s)
        case .bool(let b): json = type.isNumeric && type != .boolean ? .integer(b ? 1 : 0) : .bool(b)
        case .integer(let i): json = type == .boolean ? .bool(i != 0) : .integer(i)
        case .real(let d):
            json = type.isInteger && d.rounded() == d && abs(d) < 9.2e18 ? .integer(Int64(d)) : .double(d)
        case .string(let s): json = .string(s)
        case .decimal(let s): json = type == .decimal ? .string(s) : (Double(s).map { JSON.double($0) } ?? .string(s))
        case .date(let d): json = .double(d)
        case .data(let bytes): json = .string(Base64.encode(bytes))
        case .uuid, .url, .array, .dictionary, .object:
            throw object.error(
                "NSDefaultValue",
                "is a \(value.typeName), which cannot be the default of a \(type.rawValue) attribute ('\(owner)')")
        }
        switch ModelReader.convertDefault(json, type: type) {
        case .success(let v): return v
        case .failure(let problem): throw object.error("NSDefaultValue", "does not suit '\(owner)': \(problem.message)")
        }
    }

    /// The file name without folder and extension.
    static func baseName(_ path: String) -> String {
        var name = path
        while name.hasSuffix("/") { name.removeLast() }
        if let slash = name.lastIndex(of: "/") { name = String(name[name.index(after: slash)...]) }
        if let dot = name.lastIndex(of: "."), dot != name.startIndex { name = String(name[..<dot]) }
        return name
    }
}
