/// Reads one Xcode model version (`X.xcdatamodel/contents`, the XML Xcode's model editor writes;
/// an Xcode 3 version's `elements` archive goes through `XcodeModelArchiveReader` to the same XML)
/// into the same entity, attribute and relationship values the JSON reader builds, and validates
/// it through the same `ManagedObjectModel` initializer, so both formats give equal models.
///
/// Every problem names the file, the element and its line. Parts of the file that have no place
/// in the model (fetch indexes, fetched properties, composite definitions, unknown elements)
/// become warnings of the model, never silently dropped; layout (`<elements>`), code generation
/// and Spotlight flags are Xcode's alone and ignored (see docs/model-format.md).
enum XcodeModelReader {
    /// Reads `path` (a `.xcdatamodel` folder, or its `contents` file).
    static func model(xcdatamodel path: String) throws -> ManagedObjectModel {
        let folder = trimmingSlashes(path)
        let contents = FileIO.isDirectory(folder) ? folder + "/contents" : folder
        var name = folder.hasSuffix("/contents") ? FileIO.directory(of: folder) : folder
        name = String(name.split(separator: "/").last ?? Substring(name))
        if name.hasSuffix(".xcdatamodel") { name = String(name.dropLast(".xcdatamodel".count)) }
        if !FileIO.exists(contents) {
            // Xcode 3 kept the model as its editor's archive, `elements` (with the diagram in `layout`).
            if FileIO.isDirectory(folder), FileIO.exists(folder + "/elements") {
                return try XcodeModelArchiveReader.model(elements: folder + "/elements", name: name)
            }
            throw MigrationError(
                .io,
                "cannot read the Xcode model '\(path)': it has neither a 'contents' file (Xcode 4 and later) nor an 'elements' file (Xcode 3)"
            )
        }
        let document = try XMLElement.parse(file: contents)
        return try model(document: document, file: contents, name: name)
    }

    /// Builds the model of a parsed `contents` document; `file` is named in error messages.
    static func model(document root: XMLElement, file: String, name: String?, extraWarnings: [String] = []) throws
        -> ManagedObjectModel
    {
        var reader = Reader(file: file)
        reader.warnings = extraWarnings
        guard root.name == "model" else {
            throw MigrationError(
                .invalidModel, "'\(file)' is not an Xcode model: its root element is <\(root.name)>, not <model>",
                path: reader.position(root))
        }
        var entities: [EntityDescription] = []
        var configurations: [String: [String]] = [:]
        var templates: [String: FetchRequestTemplate] = [:]
        for child in root.children {
            switch child.name {
            case "entity":
                let index = entities.count
                if let entity = reader.entity(child, path: "$.entities[\(index)]") { entities.append(entity) }
            case "configuration":
                guard let configName = reader.required(child, "name") else { continue }
                configurations[configName] = child.children(named: "memberEntity").compactMap {
                    reader.required($0, "name")
                }
            case "fetchRequest":
                guard let requestName = reader.required(child, "name"), let entity = reader.required(child, "entity")
                else { continue }
                templates[requestName] = FetchRequestTemplate(
                    name: requestName, entityName: entity, predicateFormat: child["predicateString"])
            case "elements":
                break  // the diagram's layout
            case "composite":
                reader.warn(
                    child,
                    "the composite attribute definition '\(child["name"] ?? "")' is not kept (cdmigrate does not store composite attributes)"
                )
            default:
                reader.warn(child, "<\(child.name)> is not read by cdmigrate")
            }
        }
        if let error = MigrationError.collecting(
            reader.problems, code: .invalidModel, summary: "the Xcode model '\(file)' is not valid")
        {
            throw error
        }
        let identifier = root["userDefinedModelVersionIdentifier"].flatMap { $0.isEmpty ? nil : $0 }
        let model: ManagedObjectModel
        do {
            model = try ManagedObjectModel(name: name, versionIdentifier: identifier, entities: entities)
        } catch let error as MigrationError {
            throw reader.locate(error)
        }
        for (configName, members) in configurations {
            for member in members where model.entity(named: member) == nil {
                reader.warnings.append(
                    "'\(file)': configuration '\(configName)' names entity '\(member)', which is not in the model")
            }
        }
        model.configurations = configurations
        model.fetchRequestTemplates = templates
        model.warnings = reader.warnings + model.warnings
        return model
    }

    private static func trimmingSlashes(_ path: String) -> String {
        var s = Substring(path)
        while s.count > 1, s.last == "/" { s = s.dropLast() }
        return String(s)
    }

    /// Reading state: problems and warnings, and where each model path came from in the XML.
    private struct Reader {
        let file: String
        var problems: [MigrationError] = []
        var warnings: [String] = []
        /// `$.entities[i]…` (the paths the model's validation reports) → the XML element's description and line.
        var origins: [String: (element: String, line: Int)] = [:]

        init(file: String) { self.file = file }

        func position(_ element: XMLElement) -> String { "\(file):\(element.line)" }

        func describe(_ element: XMLElement) -> String {
            element["name"].map { "<\(element.name) name=\"\($0)\">" } ?? "<\(element.name)>"
        }

        mutating func fail(_ element: XMLElement, _ message: String) {
            problems.append(
                MigrationError(
                    .invalidModel, "'\(file)' line \(element.line), \(describe(element)): \(message)",
                    path: position(element)))
        }

        mutating func warn(_ element: XMLElement, _ message: String) {
            warnings.append("'\(file)' line \(element.line), \(describe(element)): \(message)")
        }

        mutating func required(_ element: XMLElement, _ attribute: String) -> String? {
            guard let value = element[attribute], !value.isEmpty else {
                fail(element, "the attribute '\(attribute)' is required")
                return nil
            }
            return value
        }

        mutating func flag(_ element: XMLElement, _ attribute: String) -> Bool {
            guard let value = element[attribute] else { return false }
            switch value {
            case "YES": return true
            case "NO": return false
            default:
                fail(element, "'\(attribute)' must be YES or NO, not '\(value)'")
                return false
            }
        }

        mutating func count(_ element: XMLElement, _ attribute: String) -> Int? {
            guard let text = element[attribute] else { return nil }
            guard let value = Int(text), value >= 0, value <= Int(Int32.max) else {
                fail(element, "'\(attribute)' must be a whole number ≥ 0, not '\(text)'")
                return nil
            }
            return value
        }

        mutating func number(_ element: XMLElement, _ attribute: String) -> Double? {
            guard let text = element[attribute] else { return nil }
            guard let value = Double(text), value.isFinite, ModelReader.isDecimalText(text) else {
                fail(element, "'\(attribute)' must be a number, not '\(text)'")
                return nil
            }
            return value
        }

        mutating func record(_ element: XMLElement, path: String) {
            origins[path] = (describe(element), element.line)
        }

        mutating func userInfo(_ element: XMLElement) -> [String: String] {
            var info: [String: String] = [:]
            for block in element.children(named: "userInfo") {
                for entry in block.children(named: "entry") {
                    guard let key = required(entry, "key") else { continue }
                    info[key] = entry["value"] ?? ""
                }
            }
            return info
        }

        mutating func entity(_ element: XMLElement, path: String) -> EntityDescription? {
            record(element, path: path)
            guard let name = required(element, "name") else { return nil }
            var attributes: [AttributeDescription] = []
            var relationships: [RelationshipDescription] = []
            var constraints: [[String]] = []
            var fetchIndexes: [FetchIndexDescription] = []
            for child in element.children {
                switch child.name {
                case "attribute":
                    if let a = attribute(child, entity: name, path: path + ".attributes[\(attributes.count)]") {
                        attributes.append(a)
                    }
                case "relationship":
                    if let r = relationship(child, entity: name, path: path + ".relationships[\(relationships.count)]")
                    {
                        relationships.append(r)
                    }
                case "uniquenessConstraints":
                    for constraint in child.children(named: "uniquenessConstraint") {
                        let names = constraint.children(named: "constraint").compactMap { required($0, "value") }
                        // Xcode writes `<uniquenessConstraint/>` for a constraint row added in the
                        // editor and never filled; momc builds the model and the app runs with it.
                        // It constrains nothing: left out, with a warning.
                        if names.isEmpty && constraint.children(named: "constraint").isEmpty {
                            warn(
                                constraint,
                                "empty uniqueness constraint of entity '\(name)' is left out (it names no property, so it constrains nothing)"
                            )
                            continue
                        }
                        constraints.append(names)
                    }
                case "fetchIndex":
                    if let index = fetchIndex(child, entity: name) { fetchIndexes.append(index) }
                case "fetchedProperty":
                    warn(
                        child,
                        "fetched property of entity '\(name)' is not kept (fetched properties are never stored and take no part in version hashes)"
                    )
                case "userInfo":
                    break
                case "compoundIndexes":
                    warn(
                        child,
                        "the compound indexes of entity '\(name)' are not kept (stores cdmigrate writes have no compound indexes; declare them as fetch indexes)"
                    )
                default:
                    warn(child, "<\(child.name)> in entity '\(name)' is not read by cdmigrate")
                }
            }
            // Xcode compiles a fetch index of one property into that property's `isIndexed` too
            // (`NSIsIndexed` in the compiled models beside the XcodeServer fixtures).
            for index in fetchIndexes where index.elements.count == 1 {
                let element = index.elements[0]
                if element.type == .binary, element.isAscending, let property = element.propertyName {
                    attributes.first { $0.name == property }?.isIndexed = true
                    relationships.first { $0.name == property }?.isIndexed = true
                }
            }
            let entity = EntityDescription(
                name: name, parent: element["parentEntity"], isAbstract: flag(element, "isAbstract"),
                attributes: attributes, relationships: relationships, renamingIdentifier: element["elementID"],
                versionHashModifier: element["versionHashModifier"], userInfo: userInfo(element))
            entity.managedObjectClassName = element["representedClassName"]
            entity.uniquenessConstraints = constraints
            entity.fetchIndexes = fetchIndexes
            return entity
        }

        /// `<fetchIndex name=…>` with its `<fetchIndexElement property|expression=… type=… order=…>`.
        /// Elements cdmigrate cannot create (R-tree, expressions) are kept in the model and named in a warning.
        mutating func fetchIndex(_ element: XMLElement, entity: String) -> FetchIndexDescription? {
            guard let name = required(element, "name") else { return nil }
            var elements: [FetchIndexDescription.Element] = []
            for child in element.children(named: "fetchIndexElement") {
                let type = FetchIndexDescription.ElementType(rawValue: child["type"] ?? "Binary")
                if type == nil {
                    fail(
                        child,
                        "fetch index '\(entity).\(name)' has an element of unknown type '\(child["type"] ?? "")' (expected Binary or RTree)"
                    )
                }
                let order = child["order"] ?? "ascending"
                if order != "ascending" && order != "descending" {
                    fail(
                        child,
                        "fetch index '\(entity).\(name)' has an element with order '\(order)' (expected ascending or descending)"
                    )
                }
                let property = child["property"]
                let expression = child["expression"]
                if property == nil && expression == nil {
                    fail(
                        child,
                        "an element of fetch index '\(entity).\(name)' names neither a property nor an expression")
                }
                elements.append(
                    FetchIndexDescription.Element(
                        propertyName: property, expression: property == nil ? expression : nil,
                        type: type ?? .binary, isAscending: order != "descending"))
            }
            if elements.contains(where: { $0.type == .rTree || $0.propertyName == nil }) {
                warn(
                    element,
                    "fetch index '\(entity).\(name)' is not created in stores cdmigrate writes (R-tree and expression elements are not supported)"
                )
            }
            return FetchIndexDescription(
                name: name, elements: elements, partialIndexPredicate: element["partialIndexPredicate"])
        }

        mutating func attribute(_ element: XMLElement, entity: String, path: String) -> AttributeDescription? {
            record(element, path: path)
            guard let name = required(element, "name") else { return nil }
            var type = AttributeType.undefined
            if let typeName = element["attributeType"] {
                if let t = AttributeType(name: typeName) {
                    type = t
                } else {
                    fail(element, "attribute '\(entity).\(name)' has unknown attributeType '\(typeName)'")
                }
            }
            let isDate = type == .date
            var defaultValue = Value.null
            if let text = element[isDate ? "defaultDateTimeInterval" : "defaultValueString"] {
                let read = XcodeDefaultValue(text, type: type)
                if let note = read.note { warn(element, "attribute '\(entity).\(name)': \(note)") }
                switch ModelReader.convertDefault(read.json, type: type) {
                case .success(let v): defaultValue = v
                case .failure(let problem): fail(element, "attribute '\(entity).\(name)': \(problem.message)")
                }
            }
            let attribute = AttributeDescription(
                name: name, type: type, isOptional: flag(element, "optional"), isTransient: flag(element, "transient"),
                defaultValue: defaultValue,
                minValue: number(element, isDate ? "minDateTimeInterval" : "minValueString"),
                maxValue: number(element, isDate ? "maxDateTimeInterval" : "maxValueString"),
                renamingIdentifier: element["elementID"], versionHashModifier: element["versionHashModifier"],
                userInfo: userInfo(element))
            attribute.allowsExternalBinaryDataStorage = flag(element, "allowsExternalBinaryDataStorage")
            attribute.preservesValueInHistoryOnDeletion = flag(element, "preserveAfterDeletion")
            attribute.valueTransformerName = element["valueTransformerName"]
            attribute.isIndexed = flag(element, "indexed")
            if flag(element, "derived") {
                attribute.derivationExpression = element["derivationExpression"] ?? ""
                attribute.filteringPredicate = element["filteringPredicate"]
                warn(
                    element, "derived attribute '\(entity).\(name)': its version hash is not verified against Core Data"
                )
            }
            return attribute
        }

        mutating func relationship(_ element: XMLElement, entity: String, path: String) -> RelationshipDescription? {
            record(element, path: path)
            guard let name = required(element, "name") else { return nil }
            let destination = required(element, "destinationEntity") ?? ""
            var deleteRule = DeleteRule.nullify
            if let rule = element["deletionRule"] {
                switch rule {
                case "Nullify": deleteRule = .nullify
                case "Cascade": deleteRule = .cascade
                case "Deny": deleteRule = .deny
                case "No Action": deleteRule = .noAction
                default:
                    fail(
                        element,
                        "relationship '\(entity).\(name)' has unknown deletionRule '\(rule)' (expected Nullify, Cascade, Deny or No Action)"
                    )
                }
            }
            let relationship = RelationshipDescription(
                name: name, destination: destination, inverse: element["inverseName"],
                isToMany: flag(element, "toMany"),
                isOrdered: flag(element, "ordered"), deleteRule: deleteRule, minCount: count(element, "minCount") ?? 0,
                maxCount: count(element, "maxCount"), isOptional: flag(element, "optional"),
                isTransient: flag(element, "transient"),
                renamingIdentifier: element["elementID"], versionHashModifier: element["versionHashModifier"],
                userInfo: userInfo(element))
            relationship.isIndexed = flag(element, "indexed")
            return relationship
        }

        /// The model's validation error with every `$.entities…` path replaced by the XML
        /// element it came from: the file, the line and the element.
        func locate(_ error: MigrationError) -> MigrationError {
            var located = error
            located.underlying = error.underlying.map { locate($0) }
            guard let path = error.path else {
                located.message = "'\(file)': " + error.message
                return located
            }
            var key = path
            while !key.isEmpty {
                if let origin = origins[key] {
                    located.message = "'\(file)' line \(origin.line), \(origin.element): \(error.message)"
                    located.path = "\(file):\(origin.line)"
                    return located
                }
                guard let cut = key.lastIndex(where: { $0 == "." || $0 == "[" }) else { break }
                key = String(key[..<cut])
            }
            located.message = "'\(file)': " + error.message
            return located
        }
    }
}
