/// A Core Data XML store as Xcode writes its own documents (`.xcmappingmodel/xcmapping.xml`):
/// `<database><databaseInfo>…</databaseInfo><object type=… id=…>…</object>…</database>`, each
/// object holding `<attribute name= type=>text</attribute>` and
/// `<relationship name= type= destination= idrefs="z1 z2">` elements.
///
/// Only the structure is read here: the objects, their attributes as text and their relationships
/// as object ids. What the objects mean is up to the reader of the document kind.
package struct XcodeStoreDocument {
    package struct Attribute {
        package var type: String
        package var text: String
        package var line: Int
    }

    package struct Object {
        package var id: String
        /// The entity, upper-cased as Core Data's XML store writes it (`XDDEVENTITYMAPPING`).
        package var type: String
        package var line: Int
        package var attributes: [String: Attribute]
        /// Attribute names in document order, for reporting the ones a reader does not know.
        package var attributeOrder: [String]
        /// Relationship name → the ids it lists (empty when it lists none).
        package var relationships: [String: [String]]

        /// "object z109 (XDDEVENTITYMAPPING, line 80)", for error messages.
        package var label: String { "object \(id) (\(type), line \(line))" }

        package func string(_ name: String) -> String? { attributes[name]?.text }
    }

    /// The file named in error messages.
    package var name: String
    /// Objects in document order.
    package var objects: [Object]
    package var objectsByID: [String: Object]

    /// Reads the document at `path`.
    /// - Throws: `MigrationError` `.io` when the file cannot be read, `code` naming the line when it
    ///   is not well-formed XML or not a Core Data XML store, or naming the object at fault.
    package static func read(file path: String, code: MigrationError.Code) throws -> XcodeStoreDocument {
        try read(root: try XMLElement.parse(file: path, code: code), name: path, code: code)
    }

    package static func read(root: XMLElement, name: String, code: MigrationError.Code) throws -> XcodeStoreDocument {
        guard root.name == "database" else {
            throw MigrationError(
                code,
                "'\(name)' is not a Core Data XML store: its root element is <\(root.name)> (line \(root.line)), not <database>"
            )
        }
        var document = XcodeStoreDocument(name: name, objects: [], objectsByID: [:])
        for element in root.children where element.name != "databaseInfo" {
            guard element.name == "object" else {
                throw MigrationError(
                    code, "'\(name)' line \(element.line): unexpected element <\(element.name)> in <database>")
            }
            guard let id = element["id"], !id.isEmpty else {
                throw MigrationError(code, "'\(name)' line \(element.line): an <object> has no id")
            }
            guard let type = element["type"], !type.isEmpty else {
                throw MigrationError(code, "'\(name)' line \(element.line): object \(id) has no type")
            }
            if let earlier = document.objectsByID[id] {
                throw MigrationError(
                    code, "'\(name)' line \(element.line): object id \(id) is used twice (also line \(earlier.line))")
            }
            var object = Object(
                id: id, type: type, line: element.line, attributes: [:], attributeOrder: [], relationships: [:])
            for child in element.children {
                guard let property = child["name"], !property.isEmpty else {
                    throw MigrationError(
                        code, "'\(name)': \(object.label): <\(child.name)> at line \(child.line) has no name")
                }
                switch child.name {
                case "attribute":
                    if object.attributes[property] != nil {
                        throw MigrationError(
                            code,
                            "'\(name)': \(object.label): attribute '\(property)' is given twice (line \(child.line))")
                    }
                    object.attributes[property] = Attribute(
                        type: child["type"] ?? "", text: child.text, line: child.line)
                    object.attributeOrder.append(property)
                case "relationship":
                    if object.relationships[property] != nil {
                        throw MigrationError(
                            code,
                            "'\(name)': \(object.label): relationship '\(property)' is given twice (line \(child.line))"
                        )
                    }
                    object.relationships[property] = (child["idrefs"] ?? "").split(whereSeparator: {
                        $0 == " " || $0 == "\t" || $0 == "\n"
                    }).map(String.init)
                default:
                    throw MigrationError(
                        code, "'\(name)': \(object.label): unexpected element <\(child.name)> at line \(child.line)")
                }
            }
            document.objects.append(object)
            document.objectsByID[id] = object
        }
        return document
    }

    /// The objects `object`'s relationship `name` lists, each checked to exist and to be of `type`.
    /// - Throws: `code` naming the object and the id that is missing or of another type.
    package func related(_ object: Object, _ name: String, type: String, code: MigrationError.Code) throws -> [Object] {
        try (object.relationships[name] ?? []).map { id in
            guard let target = objectsByID[id] else {
                throw MigrationError(
                    code,
                    "'\(self.name)': \(object.label): relationship '\(name)' lists \(id), which is no object of the document"
                )
            }
            guard target.type == type else {
                throw MigrationError(
                    code,
                    "'\(self.name)': \(object.label): relationship '\(name)' lists \(target.label), which is not a \(type)"
                )
            }
            return target
        }
    }
}
