/// Reads a data model from JSON (the format in docs/model-format.md), reporting every problem
/// with its JSON path. The public doors are `ManagedObjectModel(json:)` and, for a file of any
/// kind (JSON, Xcode's, compiled), `ManagedObjectModel(contentsOf:)` in `Xcode/ModelFileReader.swift`,
/// above every reader.
package enum ModelReader {
    /// Reads a model from cdmigrate's JSON (docs/model-format.md).
    package static func model(fromJSON text: String) throws -> ManagedObjectModel {
        return try model(from: try JSON.parse(text))
    }

    static func trimmedExtension(_ path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.count > 1, trimmed.last == "/" { trimmed = trimmed.dropLast() }
        let last = trimmed.split(separator: "/").last ?? trimmed
        guard let dot = last.lastIndex(of: ".") else { return "" }
        return String(last[last.index(after: dot)...])
    }

    package static func model(from json: JSON) throws -> ManagedObjectModel {
        var root = JSONReader(json, path: "$", code: .invalidModel, what: "a model")
        let name = root.string("name")
        let versionIdentifier = root.string("versionIdentifier")
        _ = root.value("$schema")
        _ = root.value("comment")
        var entities: [EntityDescription] = []
        var problems: [MigrationError] = []
        let entityList = root.array("entities")
        if root.value("entities") == nil { root.fail("entities", "a model needs an 'entities' array") }
        for (i, entityJSON) in entityList.enumerated() {
            if let entity = readEntity(entityJSON, path: "$.entities[\(i)]", problems: &problems) {
                entities.append(entity)
            }
        }
        try root.finishDocument("the model", named: name, parts: problems)
        return try ManagedObjectModel(name: name, versionIdentifier: versionIdentifier, entities: entities)
    }

    private static func readEntity(_ json: JSON, path: String, problems: inout [MigrationError]) -> EntityDescription? {
        var r = JSONReader(json, path: path, code: .invalidModel, what: "an entity")
        let name = r.string("name", required: true, what: "entity") ?? ""
        let parent = r.string("parent")
        let abstract = r.bool("abstract", default: false)
        let renamingIdentifier = r.string("renamingIdentifier")
        let modifier = r.string("versionHashModifier")
        let hash = r.hash("versionHash")
        let userInfo = r.userInfo()
        let className = r.string("className")
        var constraints: [[String]] = []
        for (j, c) in r.array("uniquenessConstraints").enumerated() {
            guard let names = c.arrayValue, names.allSatisfy({ $0.stringValue != nil }) else {
                problems.append(
                    MigrationError(
                        .invalidModel, "a uniqueness constraint of entity '\(name)' must be an array of property names",
                        path: path + ".uniquenessConstraints[\(j)]"))
                continue
            }
            constraints.append(names.compactMap { $0.stringValue })
        }
        var fetchIndexes: [FetchIndexDescription] = []
        for (j, index) in r.array("fetchIndexes").enumerated() {
            if let fetchIndex = readFetchIndex(
                index, entity: name, path: path + ".fetchIndexes[\(j)]", problems: &problems)
            {
                fetchIndexes.append(fetchIndex)
            }
        }
        _ = r.value("comment")
        var attributes: [AttributeDescription] = []
        for (j, a) in r.array("attributes").enumerated() {
            if let attribute = readAttribute(a, entity: name, path: path + ".attributes[\(j)]", problems: &problems) {
                attributes.append(attribute)
            }
        }
        var relationships: [RelationshipDescription] = []
        for (j, rel) in r.array("relationships").enumerated() {
            if let relationship = readRelationship(
                rel, entity: name, path: path + ".relationships[\(j)]", problems: &problems)
            {
                relationships.append(relationship)
            }
        }
        r.rejectUnknownKeys(what: "entity '\(name)'")
        problems += r.problems
        let entity = EntityDescription(
            name: name, parent: parent, isAbstract: abstract, attributes: attributes, relationships: relationships,
            renamingIdentifier: renamingIdentifier, versionHashModifier: modifier, userInfo: userInfo)
        entity.explicitVersionHash = hash
        entity.managedObjectClassName = className
        entity.uniquenessConstraints = constraints
        entity.fetchIndexes = fetchIndexes
        return entity
    }

    /// `{"name": …, "elements": [{"property"|"expression": …, "type": "Binary"|"RTree", "ascending": …}], "partialIndexPredicate": …}`.
    private static func readFetchIndex(_ json: JSON, entity: String, path: String, problems: inout [MigrationError])
        -> FetchIndexDescription?
    {
        var r = JSONReader(json, path: path, code: .invalidModel, what: "a fetch index")
        let name = r.string("name", required: true, what: "fetch index of '\(entity)'") ?? ""
        var elements: [FetchIndexDescription.Element] = []
        for (k, elementJSON) in r.array("elements").enumerated() {
            var e = JSONReader(
                elementJSON, path: path + ".elements[\(k)]", code: .invalidModel, what: "a fetch index element")
            let property = e.string("property")
            let expression = e.string("expression")
            if property == nil && expression == nil {
                e.fail(
                    "property", "an element of fetch index '\(entity).\(name)' needs a 'property' or an 'expression'")
            }
            var type = FetchIndexDescription.ElementType.binary
            if let typeName = e.string("type") {
                if let t = FetchIndexDescription.ElementType(rawValue: typeName) {
                    type = t
                } else {
                    e.fail(
                        "type",
                        "fetch index '\(entity).\(name)' has an element of unknown type '\(typeName)' (expected Binary or RTree)"
                    )
                }
            }
            elements.append(
                FetchIndexDescription.Element(
                    propertyName: property, expression: property == nil ? expression : nil,
                    type: type, isAscending: e.bool("ascending", default: true)))
            e.rejectUnknownKeys(what: "an element of fetch index '\(entity).\(name)'")
            problems += e.problems
        }
        if r.value("elements") == nil || elements.isEmpty {
            r.fail("elements", "fetch index '\(entity).\(name)' needs a non-empty 'elements' array")
        }
        let predicate = r.string("partialIndexPredicate")
        r.rejectUnknownKeys(what: "fetch index '\(entity).\(name)'")
        problems += r.problems
        return FetchIndexDescription(name: name, elements: elements, partialIndexPredicate: predicate)
    }

    private static func readAttribute(_ json: JSON, entity: String, path: String, problems: inout [MigrationError])
        -> AttributeDescription?
    {
        var r = JSONReader(json, path: path, code: .invalidModel, what: "an attribute")
        let name = r.string("name", required: true, what: "attribute of '\(entity)'") ?? ""
        let typeName = r.string("type", required: true, what: "attribute '\(entity).\(name)'")
        let type =
            typeName.flatMap {
                r.oneOf(
                    $0, "type", AttributeType.init(name:), unknown: "attribute '\(entity).\(name)' has unknown type",
                    expected: AttributeType.allCases.map { $0.rawValue })
            } ?? .string
        var defaultValue = Value.null
        if let d = r.value("default") {
            switch convertDefault(d, type: type) {
            case .success(let v): defaultValue = v
            case .failure(let problem): r.fail("default", "attribute '\(entity).\(name)': \(problem.message)")
            }
        }
        let attribute = AttributeDescription(
            name: name, type: type, isOptional: r.bool("optional", default: true),
            isTransient: r.bool("transient", default: false),
            defaultValue: defaultValue, minValue: r.number("minValue"), maxValue: r.number("maxValue"),
            renamingIdentifier: r.string("renamingIdentifier"), versionHashModifier: r.string("versionHashModifier"),
            userInfo: r.userInfo())
        attribute.explicitVersionHash = r.hash("versionHash")
        attribute.allowsExternalBinaryDataStorage = r.bool("allowsExternalBinaryDataStorage", default: false)
        attribute.preservesValueInHistoryOnDeletion = r.bool("preservesValueInHistoryOnDeletion", default: false)
        attribute.valueTransformerName = r.string("valueTransformerName")
        attribute.isIndexed = r.bool("indexed", default: false)
        attribute.derivationExpression = r.string("derivationExpression")
        attribute.filteringPredicate = r.string("filteringPredicate")
        _ = r.value("comment")
        r.rejectUnknownKeys(what: "attribute '\(entity).\(name)'")
        problems += r.problems
        return attribute
    }

    private static func readRelationship(_ json: JSON, entity: String, path: String, problems: inout [MigrationError])
        -> RelationshipDescription?
    {
        var r = JSONReader(json, path: path, code: .invalidModel, what: "a relationship")
        let name = r.string("name", required: true, what: "relationship of '\(entity)'") ?? ""
        let destination = r.string("destination", required: true, what: "relationship '\(entity).\(name)'") ?? ""
        let inverse = r.string("inverse")
        let toMany = r.bool("toMany", default: false)
        let deleteRule =
            r.string("deleteRule").flatMap {
                r.oneOf(
                    $0, "deleteRule", DeleteRule.init(rawValue:),
                    unknown: "relationship '\(entity).\(name)' has unknown delete rule",
                    expected: DeleteRule.allCases.map { $0.rawValue })
            } ?? .nullify
        let relationship = RelationshipDescription(
            name: name, destination: destination, inverse: inverse, isToMany: toMany,
            isOrdered: r.bool("ordered", default: false),
            deleteRule: deleteRule, minCount: r.integer("minCount") ?? 0, maxCount: r.integer("maxCount"),
            isOptional: r.bool("optional", default: true), isTransient: r.bool("transient", default: false),
            renamingIdentifier: r.string("renamingIdentifier"), versionHashModifier: r.string("versionHashModifier"),
            userInfo: r.userInfo())
        relationship.explicitVersionHash = r.hash("versionHash")
        relationship.isIndexed = r.bool("indexed", default: false)
        _ = r.value("comment")
        r.rejectUnknownKeys(what: "relationship '\(entity).\(name)'")
        problems += r.problems
        return relationship
    }

    /// A JSON default value as a value of the attribute's type.
    static func convertDefault(_ json: JSON, type: AttributeType) -> Result<Value, DefaultValueProblem> {
        func wrong(_ expected: String) -> Result<Value, DefaultValueProblem> {
            .failure(
                DefaultValueProblem(
                    "default value of type \(json.typeName) does not suit type \(type.rawValue) (expected \(expected))")
            )
        }
        switch type {
        case .integer16, .integer32, .integer64:
            guard case .integer(let i) = json else { return wrong("an integer") }
            if let range = type.integerRange, !range.contains(i) {
                return .failure(DefaultValueProblem("default value \(i) does not fit in \(type.rawValue)"))
            }
            return .success(.integer(i))
        case .decimal:
            switch json {
            case .integer(let i): return .success(.decimal(String(i)))
            case .double(let d): return .success(.decimal(Value.format(d)))
            case .string(let s) where isDecimalText(s): return .success(.decimal(s))
            default: return wrong("a number or a numeric string")
            }
        case .double, .float:
            guard let d = json.doubleValue else { return wrong("a number") }
            if type == .float && abs(d) > Double(Float.greatestFiniteMagnitude) {
                return .failure(DefaultValueProblem("default value \(Value.format(d)) does not fit in float"))
            }
            return .success(.double(d))
        case .string:
            guard let s = json.stringValue else { return wrong("a string") }
            return .success(.string(s))
        case .boolean:
            guard let b = json.boolValue else { return wrong("true or false") }
            return .success(.bool(b))
        case .date:
            if let d = json.doubleValue { return .success(.date(d)) }
            if let s = json.stringValue, let d = DateConversion.parseISO8601(s) { return .success(.date(d)) }
            return wrong("seconds since 2001-01-01 or an ISO 8601 date string")
        case .binary, .transformable:
            if let s = json.stringValue, let bytes = Base64.decode(s) { return .success(.binary(bytes)) }
            return wrong("base64 text")
        case .uuid:
            if let s = json.stringValue, let bytes = Value.uuidBytes(s) { return .success(.uuid(bytes)) }
            return wrong("a UUID string")
        case .uri:
            guard let s = json.stringValue else { return wrong("a string") }
            return .success(.uri(s))
        case .undefined, .objectID, .composite:
            return .failure(DefaultValueProblem("type \(type.rawValue) takes no default value"))
        }
    }

    /// Plain decimal notation (`-12.5`, `3e-2`): what NSDecimalNumber reads, without the
    /// `nan`, `inf` and hexadecimal forms that `Double(_:)` would also take.
    package static func isDecimalText(_ s: String) -> Bool {
        var chars = Array(s.utf8)[...]
        func digits() -> Int {
            var n = 0
            while let c = chars.first, c >= 48, c <= 57 {
                chars = chars.dropFirst()
                n += 1
            }
            return n
        }
        if let c = chars.first, c == UInt8(ascii: "-") || c == UInt8(ascii: "+") { chars = chars.dropFirst() }
        var mantissa = digits()
        if chars.first == UInt8(ascii: ".") {
            chars = chars.dropFirst()
            mantissa += digits()
        }
        guard mantissa > 0 else { return false }
        if let c = chars.first, c == UInt8(ascii: "e") || c == UInt8(ascii: "E") {
            chars = chars.dropFirst()
            if let c = chars.first, c == UInt8(ascii: "-") || c == UInt8(ascii: "+") { chars = chars.dropFirst() }
            guard digits() > 0 else { return false }
        }
        return chars.isEmpty
    }

    struct DefaultValueProblem: Error {
        let message: String
        init(_ message: String) { self.message = message }
    }
}

extension ManagedObjectModel {
    /// Reads a model from cdmigrate's JSON (docs/model-format.md).
    ///
    /// - Parameter json: the JSON text.
    /// - Throws: `MigrationError` `.invalidJSON` for text that is not JSON, `.invalidModel` for a
    ///   model that is not valid, collecting every problem, each with its JSON path.
    ///
    /// Core Data counterpart: none (Core Data reads compiled models: `init(contentsOf:)` reads those too).
    public convenience init(json: String) throws {
        self.init(adopting: try ModelReader.model(fromJSON: json))
    }
}
