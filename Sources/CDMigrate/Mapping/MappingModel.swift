/// NSMappingModel: entity mappings in order, read from JSON (docs/mapping-format.md).
///
/// Expressions are parsed when the mapping loads, so a syntax error is reported with its JSON path
/// and character before anything runs; `validate(sourceModel:destinationModel:)` then checks the
/// mapping against the two models and returns a copy bound to them. A mapping model as read is
/// never changed, so one may be shared by any number of migrations between different models.
public final class MappingModel {
    /// The mapping model's name (its file name without extension when read from a file).
    public let name: String?
    /// The entity mappings, in the order a pass runs them (Core Data: `entityMappings`).
    public let entityMappings: [EntityMapping]
    /// Problems that do not stop a migration but that a user should hear about.
    /// Set on the bound copy `validate(sourceModel:destinationModel:)` returns.
    public let warnings: [String]
    /// Whether Core Data's rules inferred it (`inferred(from:to:)`): such a model declares no
    /// intended loss, so whatever its steps drop is reported as unintended (`LossReport`).
    package internal(set) var isInferred = false

    /// A mapping model made in code.
    ///
    /// - parameter name: Its name, for messages.
    /// - parameter entityMappings: The entity mappings, in run order.
    ///
    /// Core Data: `NSMappingModel()` with `entityMappings` set.
    public init(name: String?, entityMappings: [EntityMapping]) {
        self.name = name
        self.entityMappings = entityMappings
        self.warnings = []
    }

    init(name: String?, entityMappings: [EntityMapping], warnings: [String]) {
        self.name = name
        self.entityMappings = entityMappings
        self.warnings = warnings
    }

    /// The entity mapping called `name`, or nil (Core Data: `entityMappingsByName[name]`).
    public func entityMapping(named name: String) -> EntityMapping? { entityMappings.first { $0.name == name } }

    /// Takes over a mapping model a reader made (see `ManagedObjectModel.init(adopting:)`).
    package init(adopting read: MappingModel) {
        name = read.name
        entityMappings = read.entityMappings
        warnings = read.warnings
        isInferred = read.isInferred
    }

    /// Reads a mapping model from cdmigrate's JSON (docs/mapping-format.md).
    ///
    /// - Parameter json: the JSON text.
    /// - Throws: `MigrationError` `.invalidJSON` or `.invalidMapping`, naming the JSON path at fault.
    ///
    /// Core Data counterpart: none (Core Data reads compiled mapping models: `init(contentsOf:)` reads those too).
    public convenience init(json: String) throws { self.init(adopting: try MappingModel.from(try JSON.parse(json))) }

    package static func from(_ json: JSON) throws -> MappingModel {
        var root = JSONReader(json, path: "$", code: .invalidMapping, what: "a mapping model")
        let name = root.string("name")
        for key in ["$schema", "comment", "sourceModel", "destinationModel"] { _ = root.value(key) }
        if root.value("entityMappings") == nil {
            root.fail("entityMappings", "a mapping model needs an 'entityMappings' array")
        }
        var problems: [MigrationError] = []
        var mappings: [EntityMapping] = []
        for (i, item) in root.array("entityMappings").enumerated() {
            if let mapping = readEntityMapping(item, path: "$.entityMappings[\(i)]", problems: &problems) {
                mappings.append(mapping)
            }
        }
        try root.finishDocument("the mapping model", named: name, parts: problems)
        return MappingModel(name: name, entityMappings: mappings)
    }

    private static func readEntityMapping(_ json: JSON, path: String, problems: inout [MigrationError])
        -> EntityMapping?
    {
        var r = JSONReader(json, path: path, code: .invalidMapping, what: "an entity mapping")
        let name = r.string("name", required: true, what: "entity mapping") ?? ""
        var type = EntityMappingType.undefined
        if let typeName = r.string("type") {
            if let t = EntityMappingType(rawValue: typeName.lowercased()) {
                type = t
            } else {
                r.fail(
                    "type",
                    "entity mapping '\(name)' has unknown type '\(typeName)' (expected one of \(EntityMappingType.allCases.map { $0.rawValue }.joined(separator: ", ")))"
                )
            }
        }
        var sourceEntityName = r.string("sourceEntity")
        let destinationEntityName = r.string("destinationEntity")
        var sourceExpressionText: String?
        var sourceExpression: SourceExpression?
        let expressionText = r.string("sourceExpression")
        let predicateText = r.string("predicate")
        if expressionText != nil && predicateText != nil {
            r.fail("predicate", "entity mapping '\(name)' has both 'sourceExpression' and 'predicate'; give one")
        }
        if let text = expressionText ?? predicateText {
            sourceExpressionText = text
            let key = expressionText != nil ? "sourceExpression" : "predicate"
            do {
                var parsed = try SourceExpression.parse(text)
                if let fetched = parsed.entityName {
                    if let declared = sourceEntityName, declared != fetched {
                        r.fail(
                            key,
                            "entity mapping '\(name)' fetches entity '\(fetched)' but its sourceEntity is '\(declared)'"
                        )
                    }
                    sourceEntityName = sourceEntityName ?? fetched
                } else {
                    parsed.entityName = sourceEntityName
                }
                if sourceEntityName == nil {
                    r.fail(key, "entity mapping '\(name)' has a source expression but no sourceEntity")
                }
                sourceExpression = parsed
            } catch let error as MigrationError {
                problems.append(
                    MigrationError(
                        error.code, "entity mapping '\(name)': \(error.message)", path: r.memberPath(key),
                        offset: error.offset, byteOffset: error.byteOffset))
            } catch {
                r.fail(key, "entity mapping '\(name)': \(error)")
            }
        }
        let attributeMappings = readPropertyMappings(&r, key: "attributeMappings", mapping: name, problems: &problems)
        let relationshipMappings = readPropertyMappings(
            &r, key: "relationshipMappings", mapping: name, problems: &problems)
        let policy = r.string("policy") ?? r.string("entityMigrationPolicyClassName")
        let userInfo = r.mappingUserInfo()
        let sourceHash = r.hash("sourceEntityVersionHash")
        let destinationHash = r.hash("destinationEntityVersionHash")
        let sourceSnapshot = readSnapshot(&r, key: "sourceEntityProperties")
        let destinationSnapshot = readSnapshot(&r, key: "destinationEntityProperties")
        _ = r.value("comment")
        r.rejectUnknownKeys(what: "entity mapping '\(name)'")
        problems += r.problems
        return EntityMapping(
            name: name, mappingType: type, sourceEntityName: sourceEntityName,
            destinationEntityName: destinationEntityName,
            sourceExpressionText: sourceExpressionText, sourceExpression: sourceExpression,
            attributeMappings: attributeMappings, relationshipMappings: relationshipMappings,
            entityMigrationPolicyClassName: policy, userInfo: userInfo,
            sourceEntityVersionHash: sourceHash, destinationEntityVersionHash: destinationHash,
            sourceEntitySnapshot: sourceSnapshot, destinationEntitySnapshot: destinationSnapshot, path: path)
    }

    /// Property mappings as an array of `{"name", "valueExpression"}` objects, or as an object
    /// `{"destinationProperty": "expression"}` (order kept either way).
    private static func readPropertyMappings(
        _ r: inout JSONReader, key: String, mapping: String, problems: inout [MigrationError]
    ) -> [PropertyMapping] {
        guard let value = r.value(key) else { return [] }
        var entries: [(name: String, expression: String?, userInfo: [String: Value], path: String)] = []
        switch value {
        case .object(let members):
            for (name, v) in members {
                let p = r.memberPath(key) + "." + name
                switch v {
                case .string(let s): entries.append((name, s, [:], p))
                case .null: entries.append((name, nil, [:], p))
                default:
                    problems.append(
                        MigrationError(
                            .invalidMapping,
                            "the value expression for '\(name)' in entity mapping '\(mapping)' must be a string",
                            path: p))
                }
            }
        case .array(let items):
            for (i, item) in items.enumerated() {
                var m = JSONReader(
                    item, path: r.memberPath(key) + "[\(i)]", code: .invalidMapping, what: "a property mapping")
                let name = m.string("name", required: true, what: "property mapping of '\(mapping)'") ?? ""
                let expression = m.string("valueExpression")
                let info = m.mappingUserInfo()
                _ = m.value("comment")
                m.rejectUnknownKeys(what: "property mapping '\(name)' of '\(mapping)'")
                problems += m.problems
                entries.append((name, expression, info, m.path))
            }
        default:
            r.fail(key, "'\(key)' must be an array or an object, not \(value.typeName)")
        }
        var result: [PropertyMapping] = []
        var seen = Set<String>()
        for entry in entries {
            if !seen.insert(entry.name).inserted {
                problems.append(
                    MigrationError(
                        .invalidMapping, "entity mapping '\(mapping)' maps '\(entry.name)' twice", path: entry.path))
            }
            var parsed: ValueExpression?
            if let text = entry.expression, !text.allSatisfy({ $0 == " " }) {
                do {
                    parsed = try ExpressionParser.parseExpression(text)
                } catch let error as MigrationError {
                    problems.append(
                        MigrationError(
                            error.code, "value expression for '\(mapping).\(entry.name)': \(error.message)",
                            path: entry.path + (value.arrayValue != nil ? ".valueExpression" : ""),
                            offset: error.offset, byteOffset: error.byteOffset))
                } catch {
                    problems.append(
                        MigrationError(
                            .expressionSyntax, "value expression for '\(mapping).\(entry.name)': \(error)",
                            path: entry.path))
                }
            }
            result.append(
                PropertyMapping(
                    name: entry.name, valueExpressionText: entry.expression, valueExpression: parsed,
                    userInfo: entry.userInfo, path: entry.path))
        }
        return result
    }

    private static func readSnapshot(_ r: inout JSONReader, key: String) -> [String: String]? {
        guard let value = r.value(key) else { return nil }
        guard let members = value.objectValue else {
            r.fail(key, "'\(key)' must be an object")
            return nil
        }
        var snapshot: [String: String] = [:]
        for (name, v) in members {
            if let s = v.stringValue { snapshot[name] = s } else { r.fail(key, "'\(key).\(name)' must be a string") }
        }
        return snapshot
    }
}
