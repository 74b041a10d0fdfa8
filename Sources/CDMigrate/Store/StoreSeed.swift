/// Instances to put in a new store, described in JSON: a seed store of a given model version for
/// tests (make a store as version 1 of an app would have written it, migrate it, then read the
/// result), without a device.
///
/// The description is an array of objects, or an object whose `objects` member is that array:
///
///     {"objects": [
///       {"entity": "Author", "id": "ann", "values": {"name": "Ann", "born": "1970-05-01T00:00:00Z"}},
///       {"entity": "Book", "values": {"title": "Notes", "author": "ann", "price": "9.99"}}
///     ]}
///
/// - `entity` (required) names a concrete entity of the store's model.
/// - `id` (optional) is a name other objects use to point at this one; unique in the description.
/// - `values` maps property names to values. An attribute's value is written as a default value
///   is in model JSON (docs/model-format.md): numbers, strings and booleans as such, dates as an
///   ISO 8601 string or seconds since 2001-01-01, binary data as base64, UUIDs as their text,
///   decimals as a number or decimal text. A transformable attribute takes base64 (the stored
///   bytes as they are) or any other JSON number, boolean or array, which is stored as its
///   NSKeyedArchiver archive as Core Data's default transformer writes it. A to-one relationship
///   takes the `id` of its destination (or null), a to-many an array of `id`s — in order for an
///   ordered one. `null` is a null value; a property left out keeps its default.
///
/// Instances are inserted in the order given (so primary keys follow it, per entity table) and
/// related once all are inserted, so an `id` may be used before the object naming it. Every
/// problem is reported with its JSON path (`$.objects[1].values.author`).
///
/// Core Data counterpart: none; a test on Apple's platforms inserts instances into an
/// `NSManagedObjectContext` and saves it.
public struct StoreSeed {
    struct Object {
        let entity: String
        let id: String?
        let values: [(key: String, value: JSON)]
        let path: String
    }

    let objects: [Object]

    /// How many instances the description holds.
    public var count: Int { objects.count }

    /// A description with no instances: a store with only Core Data's bookkeeping.
    public static let empty = StoreSeed(objects: [])

    init(objects: [Object]) { self.objects = objects }

    /// Reads a description from JSON text.
    ///
    /// - Parameter text: the JSON (see the type's documentation).
    /// - Throws: `MigrationError` `.invalidJSON` for text that is not JSON, `.invalidArgument`
    ///   naming the JSON path of a malformed object (no `entity`, an unknown member, a repeated `id`).
    public init(json text: String) throws {
        try self.init(json: try JSON.parse(text))
    }

    /// Reads a description from a JSON file.
    ///
    /// - Throws: `MigrationError` `.io` when the file cannot be read, else as `init(json:)`.
    public init(contentsOf path: String) throws {
        let json: JSON
        do {
            json = try JSON.load(path: path)
        } catch var error as MigrationError {
            if !error.message.contains(path) { error.message = "'\(path)': " + error.message }
            throw error
        }
        try self.init(json: json)
    }

    package init(json: JSON) throws {
        let list: [JSON]
        let base: String
        if let array = json.arrayValue {
            list = array
            base = "$"
        } else if let members = json.objectValue {
            guard let objects = members.first(where: { $0.key == "objects" })?.value.arrayValue else {
                throw MigrationError(
                    .invalidArgument,
                    "a store description is an array of objects, or an object with an 'objects' array", path: "$")
            }
            if let other = members.first(where: { $0.key != "objects" && $0.key != "comment" }) {
                throw MigrationError(
                    .invalidArgument,
                    "a store description has no member '\(other.key)' (it has 'objects' and 'comment')",
                    path: "$." + other.key)
            }
            list = objects
            base = "$.objects"
        } else {
            throw MigrationError(
                .invalidArgument, "a store description is an array of objects, not a \(json.typeName)", path: "$")
        }
        var objects: [Object] = []
        var ids = Set<String>()
        var problems: [MigrationError] = []
        for (i, item) in list.enumerated() {
            let path = "\(base)[\(i)]"
            guard let members = item.objectValue else {
                problems.append(
                    MigrationError(
                        .invalidArgument,
                        "an object of the description is a JSON object with 'entity', not a \(item.typeName)",
                        path: path))
                continue
            }
            var entity: String?
            var id: String?
            var values: [(key: String, value: JSON)] = []
            for (key, value) in members {
                switch key {
                case "entity":
                    entity = value.stringValue
                    if entity == nil {
                        problems.append(
                            MigrationError(
                                .invalidArgument, "'entity' is the entity's name, a string", path: path + ".entity"))
                    }
                case "id":
                    if let name = value.stringValue {
                        id = name
                        if !ids.insert(name).inserted {
                            problems.append(
                                MigrationError(
                                    .invalidArgument, "id '\(name)' is given to an earlier object already",
                                    path: path + ".id"))
                        }
                    } else if !value.isNull {
                        problems.append(
                            MigrationError(
                                .invalidArgument, "'id' is a string other objects point at this one with",
                                path: path + ".id"))
                    }
                case "values":
                    if let properties = value.objectValue {
                        values = properties
                    } else if !value.isNull {
                        problems.append(
                            MigrationError(
                                .invalidArgument, "'values' is an object of property names and values",
                                path: path + ".values"))
                    }
                case "comment":
                    break
                default:
                    problems.append(
                        MigrationError(
                            .invalidArgument,
                            "an object of the description has no member '\(key)' (it has 'entity', 'id', 'values' and 'comment'; properties go in 'values')",
                            path: path + "." + key))
                }
            }
            guard let name = entity else {
                if !members.contains(where: { $0.key == "entity" }) {
                    problems.append(MigrationError(.invalidArgument, "the object names no 'entity'", path: path))
                }
                continue
            }
            objects.append(Object(entity: name, id: id, values: values, path: path))
        }
        if let error = MigrationError.collecting(
            problems, code: .invalidArgument, summary: "the store description is not valid")
        {
            throw error
        }
        self.objects = objects
    }

    /// Inserts the described instances into `store` and relates them; the store is not saved.
    ///
    /// - Parameter store: a writable store with the model the description is for.
    /// - Returns: the instances that have an `id`, by it.
    /// - Throws: `MigrationError` `.invalidArgument` for a store open read-only, or naming the JSON path of the first value that
    ///   does not fit the model (an unknown entity or property, a value of the wrong type, an `id`
    ///   no object has, an instance of the wrong entity for a relationship); the store then holds
    ///   the instances inserted before it, unsaved.
    ///
    /// Core Data counterpart: `NSEntityDescription.insertNewObject(forEntityName:into:)` and
    /// `setValue(_:forKey:)` for each instance.
    @discardableResult
    public func insert(into store: PersistentStore) throws -> [String: ManagedObject] {
        try store.checkWritable("insert the objects of a description")
        var inserted: [ManagedObject] = []
        inserted.reserveCapacity(objects.count)
        var byID: [String: ManagedObject] = [:]
        for object in objects {
            guard let entity = store.model.entity(named: object.entity) else {
                let names = store.model.entities.map { $0.name }
                throw MigrationError(
                    .invalidArgument,
                    "the model \(PersistentStore.describe(store.model)) has no entity named '\(object.entity)'\(SpellingSuggestion.hint(object.entity, among: names))",
                    path: object.path + ".entity")
            }
            let instance: ManagedObject
            do {
                instance = try store.insertObject(entityName: entity.name)
            } catch var error as MigrationError {
                error.path = object.path + ".entity"
                throw error
            }
            for (key, json) in object.values where entity.relationshipsByName[key] == nil {
                let path = object.path + ".values." + key
                guard let attribute = entity.attributesByName[key] else {
                    let names = entity.attributes.map { $0.name } + entity.relationships.map { $0.name }
                    throw MigrationError(
                        .invalidArgument,
                        "entity '\(entity.name)' has no property named '\(key)'\(SpellingSuggestion.hint(key, among: names))",
                        path: path)
                }
                if attribute.isTransient {
                    throw MigrationError(
                        .invalidArgument,
                        "attribute '\(entity.name).\(key)' is transient: the store keeps no value for it", path: path)
                }
                do {
                    try instance.setValue(try StoreSeed.value(json, for: attribute), for: attribute)
                } catch var error as MigrationError {
                    error.path = path
                    throw error
                }
            }
            inserted.append(instance)
            if let id = object.id { byID[id] = instance }
        }
        for (object, instance) in zip(objects, inserted) {
            for (key, json) in object.values {
                guard let relationship = instance.entity.relationshipsByName[key] else { continue }
                let path = object.path + ".values." + key
                if relationship.isTransient {
                    throw MigrationError(
                        .invalidArgument,
                        "relationship '\(instance.entity.name).\(key)' is transient: the store keeps no value for it",
                        path: path)
                }
                func target(_ item: JSON, _ itemPath: String) throws -> ManagedObject {
                    guard let id = item.stringValue else {
                        throw MigrationError(
                            .invalidArgument,
                            "relationship '\(instance.entity.name).\(key)' takes the id of an object of the description, not a \(item.typeName)",
                            path: itemPath)
                    }
                    guard let found = byID[id] else {
                        throw MigrationError(
                            .invalidArgument,
                            "no object of the description has id '\(id)'\(SpellingSuggestion.hint(id, among: Array(byID.keys).sorted()))",
                            path: itemPath)
                    }
                    return found
                }
                let value: Value
                if json.isNull {
                    value = relationship.isToMany ? .collection([]) : .null
                } else if relationship.isToMany {
                    guard let items = json.arrayValue else {
                        throw MigrationError(
                            .invalidArgument,
                            "to-many relationship '\(instance.entity.name).\(key)' takes an array of ids, not a \(json.typeName)",
                            path: path)
                    }
                    value = .collection(try items.enumerated().map { .object(try target($1, "\(path)[\($0)]")) })
                } else {
                    value = .object(try target(json, path))
                }
                do {
                    try instance.setValue(value, for: relationship)
                } catch var error as MigrationError {
                    error.path = path
                    throw error
                }
            }
        }
        return byID
    }

    /// An attribute's value from its JSON: as a model's default value is read, and for a
    /// transformable attribute any JSON other than base64 text as the value to archive.
    static func value(_ json: JSON, for attribute: AttributeDescription) throws -> Value {
        if json.isNull { return .null }
        if attribute.attributeType == .transformable, json.stringValue == nil {
            return try plainValue(json, depth: 0)
        }
        switch ModelReader.convertDefault(json, type: attribute.attributeType) {
        case .success(let value): return value
        case .failure(let problem):
            var message = problem.message
            if message.hasPrefix("default value") { message = String(message.dropFirst("default ".count)) }
            throw MigrationError(
                .invalidArgument, "attribute '\(attribute.entity?.name ?? "?").\(attribute.name)': \(message)")
        }
    }

    /// A JSON number, boolean or array as a value to archive (arrays nest at most
    /// `TransformableValue.maximumNesting` deep).
    private static func plainValue(_ json: JSON, depth: Int) throws -> Value {
        switch json {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .integer(let i): return .integer(i)
        case .double(let d): return .double(d)
        case .string(let s): return .string(s)
        case .array(let items):
            guard depth < TransformableValue.maximumNesting else {
                throw MigrationError(
                    .invalidArgument, "the value nests arrays more than \(TransformableValue.maximumNesting) deep")
            }
            return .collection(try items.map { try plainValue($0, depth: depth + 1) })
        case .object:
            throw MigrationError(
                .invalidArgument,
                "a transformable attribute takes base64 text (the stored bytes), a number, a boolean or an array, not an object"
            )
        }
    }
}
