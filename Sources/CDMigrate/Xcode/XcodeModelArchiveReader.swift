/// Reads a model kept as Xcode's model editor archive: the `elements` file of an Xcode 3
/// `.xcdatamodel` folder (Xcode 3 wrote `elements` and `layout` where later Xcode writes
/// `contents`), and the source and destination models an `.xcmappingmodel` embeds
/// (`sourcemodeldata`, `destinationmodeldata`).
///
/// The archive is an NSKeyedArchiver binary property list of Xcode's editor classes: an
/// `XDPMModel` whose root package (`XDModelPackage`) holds the `XDPMEntity`s by name, each holding
/// its `XDPMAttribute`s and `XDPMRelationship`s by name; Core Data's settings of each element sit
/// in its stereotypes (`XD_PStereotype`, `XD_PPropStereotype`, `XD_PAtt_Stereotype`, …) as
/// `XDUMLPropertyImp`s whose `_default` holds the value (`XD_PAttK_attributeType` 700 for String,
/// `XD_PRK_destination` an `XDPMEntity`, …). The reader turns the archive into the `<model>`
/// document Xcode 4 and later write, so that it goes through `XcodeModelReader` like any other
/// Xcode model and gives the same model, entity hashes included.
///
/// Core Data counterpart: none at run time (momc compiles either format into the same `.mom`).
enum XcodeModelArchiveReader {
    /// Reads the archive at `path` (an `elements` file).
    /// - Throws: `MigrationError` `.io` when it cannot be read, `.invalidModel` naming the file
    ///   and the archived object at fault.
    static func model(elements path: String, name: String) throws -> ManagedObjectModel {
        let document = try self.document(
            bytes: try FileIO.readBytes(path: path), what: "the Xcode 3 model '\(path)'", code: .invalidModel)
        return try XcodeModelReader.model(
            document: document.root, file: path, name: name, extraWarnings: document.warnings)
    }

    /// Reads an archive held in memory (a mapping model's embedded model); `what` names it in errors.
    static func model(bytes: [UInt8], what: String, name: String?, code: MigrationError.Code) throws
        -> ManagedObjectModel
    {
        let document = try self.document(bytes: bytes, what: what, code: code)
        do {
            return try XcodeModelReader.model(
                document: document.root, file: what, name: name, extraWarnings: document.warnings)
        } catch var error as MigrationError {
            error.code = code
            throw error
        }
    }

    /// The `<model>` document the archive describes, and what was not carried over.
    static func document(bytes: [UInt8], what: String, code: MigrationError.Code) throws -> (
        root: XMLElement, warnings: [String]
    ) {
        let archive = try KeyedArchive(bytes: bytes, code: code, what: what)
        var reader = Reader(archive: archive)
        let root = try archive.object(try archive.topReference())
        guard root.isKind(of: "XDPMModel") else {
            throw archive.error(
                "its root object is a \(root.className), not an XDPMModel (Xcode's model editor archive)")
        }
        var model = XMLElement(name: "model")
        if let identifier = try root.string("_modelVersionIdentifier"), !identifier.isEmpty {
            model.attributes["userDefinedModelVersionIdentifier"] = identifier
        }
        guard let package = try root.object("_xd_rootPackage") else {
            throw archive.error("the XDPMModel has no root package")
        }
        let classes = try package.dictionary("XDBucketForClassesstorage") ?? []
        var entities: [(String, ArchivedObject)] = []
        for (key, value) in classes {
            guard case .object(let reference, _) = value else { continue }
            let entity = try archive.object(reference)
            guard entity.isKind(of: "XDPMEntity") else { continue }
            entities.append((try entity.string("_name") ?? key.stringValue ?? "", entity))
        }
        for (name, entity) in entities.sorted(by: { VersionHash.nameOrder($0.0, $1.0) }) {
            model.children.append(try reader.entity(entity, name: name))
        }
        for (name, members) in try root.dictionary("_configurationsByName") ?? [] {
            var configuration = XMLElement(name: "configuration", attributes: ["name": name.stringValue ?? ""])
            for member in members.arrayValue ?? [] {
                var memberName = member.stringValue
                if case .object(let reference, _) = member {
                    memberName = try archive.object(reference).string("_name")
                }
                if let memberName {
                    configuration.children.append(XMLElement(name: "memberEntity", attributes: ["name": memberName]))
                }
            }
            model.children.append(configuration)
        }
        return (model, reader.warnings)
    }

    /// Xcode's attribute type codes (`NSAttributeType`) and the names its XML gives them.
    static let attributeTypeNames: [Int64: String] = [
        0: "Undefined", 100: "Integer 16", 200: "Integer 32", 300: "Integer 64", 400: "Decimal", 500: "Double",
        600: "Float", 700: "String", 800: "Boolean", 900: "Date", 1000: "Binary", 1100: "UUID", 1200: "URI",
        1800: "Transformable", 2000: "ObjectID",
    ]

    /// `NSDeleteRule` codes and the names Xcode's XML gives them.
    static let deleteRuleNames: [Int64: String] = [0: "No Action", 1: "Nullify", 2: "Cascade", 3: "Deny"]

    private struct Reader {
        let archive: KeyedArchive
        var warnings: [String] = []

        /// Every stereotype setting of an element, by key (`XD_PPSK_isOptional` → its value).
        func settings(_ element: ArchivedObject) throws -> [String: ArchiveValue] {
            var settings: [String: ArchiveValue] = [:]
            for (_, stereotype) in try element.dictionary("XDBucketForStereotypesstorage") ?? [] {
                guard case .object(let reference, _) = stereotype else { continue }
                for (key, property) in try archive.object(reference).dictionary("XDBucketForOwnedAttributesstorage")
                    ?? []
                {
                    guard let key = key.stringValue, case .object(let p, _) = property else { continue }
                    settings[key] = try archive.object(p).value("_default")
                }
            }
            return settings
        }

        /// The name of the element an object value refers to.
        func name(_ value: ArchiveValue?) throws -> String? {
            guard case .object(let reference, _)? = value else { return value?.stringValue }
            return try archive.object(reference).string("_name")
        }

        func flag(_ value: ArchiveValue?) -> String? {
            guard let value, let b = value.boolValue ?? value.integerValue.map({ $0 != 0 }) else { return nil }
            return b ? "YES" : "NO"
        }

        func text(_ value: ArchiveValue?) -> String? {
            guard let value else { return nil }
            switch value {
            case .string(let s): return s
            case .integer(let i): return String(i)
            case .real(let d): return String(d)
            case .decimal(let s): return s
            default: return nil
            }
        }

        /// The `userInfo` children of an element.
        func userInfo(_ value: ArchiveValue?) -> [XMLElement] {
            guard let entries = value?.dictionaryValue, !entries.isEmpty else { return [] }
            var block = XMLElement(name: "userInfo")
            for (key, value) in entries {
                guard let key = text(key) else { continue }
                block.children.append(
                    XMLElement(name: "entry", attributes: ["key": key, "value": text(value) ?? value.description]))
            }
            return [block]
        }

        mutating func entity(_ entity: ArchivedObject, name: String) throws -> XMLElement {
            let s = try settings(entity)
            var element = XMLElement(name: "entity", attributes: ["name": name])
            element.attributes["representedClassName"] = text(s["XD_PSK_entityClassName"])
            let abstract = try entity.bool("_isAbstract")
            if (flag(s["XD_PSK_isAbstract"]) ?? (abstract ? "YES" : "NO")) == "YES" {
                element.attributes["isAbstract"] = "YES"
            }
            element.attributes["elementID"] = text(s["XD_PSK_elementID"]).flatMap { $0.isEmpty ? nil : $0 }
            element.attributes["versionHashModifier"] = text(s["XD_PSK_versionHashModifier"]).flatMap {
                $0.isEmpty ? nil : $0
            }
            // The parent entity: a generalization refers to the entity it specialises.
            for generalization in try entity.array("XDBucketForGeneralizationsstorage") ?? [] {
                guard case .object(let reference, _) = generalization else { continue }
                let object = try archive.object(reference)
                if object.isKind(of: "XDPMEntity") {
                    element.attributes["parentEntity"] = try object.string("_name")
                    continue
                }
                // An XDUMLGeneralizationImp: `_general` is the parent, `_specific` the entity itself.
                if let general = try object.object("_general"), general.isKind(of: "XDPMEntity") {
                    element.attributes["parentEntity"] = try general.string("_name")
                    continue
                }
                for field in object.keys {
                    guard case .object(let target, _) = try object.value(field), target != entity.reference else {
                        continue
                    }
                    let candidate = try archive.object(target)
                    if candidate.isKind(of: "XDPMEntity") {
                        element.attributes["parentEntity"] = try candidate.string("_name")
                    }
                }
                if element.attributes["parentEntity"] == nil {
                    throw archive.error(
                        "entity '\(name)' has a generalization (\(object.className)) that names no entity")
                }
            }
            var properties: [(String, ArchivedObject)] = []
            for (key, value) in try entity.dictionary("XDBucketForOwnedAttributesstorage") ?? [] {
                guard case .object(let reference, _) = value else { continue }
                let property = try archive.object(reference)
                properties.append((try property.string("_name") ?? key.stringValue ?? "", property))
            }
            for (propertyName, property) in properties.sorted(by: { VersionHash.nameOrder($0.0, $1.0) }) {
                if property.isKind(of: "XDPMAttribute") {
                    element.children.append(try attribute(property, name: propertyName, entity: name))
                } else if property.isKind(of: "XDPMRelationship") {
                    element.children.append(try relationship(property, name: propertyName, entity: name))
                } else {
                    warnings.append(
                        "\(archive.what): \(property.className) '\(name).\(propertyName)' is not kept (fetched properties are never stored and take no part in version hashes)"
                    )
                }
            }
            if let constraints = s["XDPMUniquenessConstraints"]?.arrayValue, !constraints.isEmpty {
                var block = XMLElement(name: "uniquenessConstraints")
                for constraint in constraints {
                    var item = XMLElement(name: "uniquenessConstraint")
                    for part in constraint.arrayValue ?? [] {
                        if let value = try self.name(part) {
                            item.children.append(XMLElement(name: "constraint", attributes: ["value": value]))
                        }
                    }
                    block.children.append(item)
                }
                element.children.append(block)
            }
            if let requests = s["XD_PSK_fetchRequestsArray"]?.arrayValue, !requests.isEmpty {
                warnings.append("\(archive.what): the fetch requests of entity '\(name)' are not kept")
            }
            element.children += userInfo(s["XD_PSK_userInfo"])
            return element
        }

        mutating func common(_ element: inout XMLElement, _ s: [String: ArchiveValue]) {
            if flag(s["XD_PPSK_isOptional"]) == "YES" { element.attributes["optional"] = "YES" }
            if flag(s["XD_PPSK_isTransient"]) == "YES" { element.attributes["transient"] = "YES" }
            element.attributes["elementID"] = text(s["XD_PPSK_elementID"]).flatMap { $0.isEmpty ? nil : $0 }
            element.attributes["versionHashModifier"] = text(s["XD_PPSK_versionHashModifier"]).flatMap {
                $0.isEmpty ? nil : $0
            }
        }

        mutating func attribute(_ property: ArchivedObject, name: String, entity: String) throws -> XMLElement {
            let s = try settings(property)
            var element = XMLElement(name: "attribute", attributes: ["name": name])
            common(&element, s)
            let code = s["XD_PAttK_attributeType"]?.integerValue ?? 0
            guard let typeName = XcodeModelArchiveReader.attributeTypeNames[code] else {
                throw archive.error(
                    "attribute '\(entity).\(name)' has attribute type code \(code), which Core Data does not define")
            }
            element.attributes["attributeType"] = typeName
            let isDate = code == 900
            if let value = text(s["XD_PAttK_defaultValueAsString"]), !value.isEmpty {
                element.attributes[isDate ? "defaultDateTimeInterval" : "defaultValueString"] = value
            }
            if let value = text(s["XD_PAttK_minValueString"]), !value.isEmpty {
                element.attributes[isDate ? "minDateTimeInterval" : "minValueString"] = value
            }
            if let value = text(s["XD_PAttK_maxValueString"]), !value.isEmpty {
                element.attributes[isDate ? "maxDateTimeInterval" : "maxValueString"] = value
            }
            element.attributes["valueTransformerName"] = text(s["XD_PAttK_valueTransformerName"]).flatMap {
                $0.isEmpty ? nil : $0
            }
            if flag(s["XD_PAttK_allowsExternalBinaryDataStorage"]) == "YES" {
                element.attributes["allowsExternalBinaryDataStorage"] = "YES"
            }
            if let pattern = text(s["XD_PAttK_regularExpressionString"]), !pattern.isEmpty {
                warnings.append(
                    "\(archive.what): the regular expression of attribute '\(entity).\(name)' is not kept (cdmigrate does not validate against it)"
                )
            }
            element.children += userInfo(s["XD_PPSK_userInfo"])
            return element
        }

        mutating func relationship(_ property: ArchivedObject, name: String, entity: String) throws -> XMLElement {
            let s = try settings(property)
            var element = XMLElement(name: "relationship", attributes: ["name": name])
            common(&element, s)
            guard let destination = try self.name(s["XD_PRK_destination"]) else {
                throw archive.error("relationship '\(entity).\(name)' has no destination entity")
            }
            element.attributes["destinationEntity"] = destination
            if case .object(let reference, _)? = s["XD_PRK_inverseRelationship"] {
                let inverse = try archive.object(reference)
                element.attributes["inverseName"] = try inverse.string("_name")
                element.attributes["inverseEntity"] = try inverse.object("_owner")?.string("_name") ?? destination
            }
            if flag(s["XD_PRK_isToMany"]) == "YES" { element.attributes["toMany"] = "YES" }
            if flag(s["XD_PRK_ordered"]) == "YES" { element.attributes["ordered"] = "YES" }
            if let min = s["XD_PRK_minCount"]?.integerValue, min > 0 { element.attributes["minCount"] = String(min) }
            if let max = s["XD_PRK_maxCount"]?.integerValue, max > 0 { element.attributes["maxCount"] = String(max) }
            let rule = s["XD_PRK_deleteRule"]?.integerValue ?? 1
            guard let ruleName = XcodeModelArchiveReader.deleteRuleNames[rule] else {
                throw archive.error(
                    "relationship '\(entity).\(name)' has delete rule code \(rule), which Core Data does not define")
            }
            element.attributes["deletionRule"] = ruleName
            element.children += userInfo(s["XD_PPSK_userInfo"])
            return element
        }
    }
}
