/// Writes a model as Core Data archives it: the NSKeyedArchiver archive of NSManagedObjectModel
/// that a store keeps in `Z_MODELCACHE` (and a `.mom` holds), with the classes and keys
/// `CompiledModelReader` reads, in the shapes of the caches Apple's Core Data writes
/// (docs/compiled-models.md, "Writing the model cache").
///
/// - NSManagedObjectModel: `NSEntities` (an NSKnownKeysDictionary1, entities in name order),
///   `NSFetchRequestTemplates` (`$null`), `NSVersionIdentifiers` (an NSMutableSet; `""` when the
///   model has no identifier, as Core Data writes).
/// - NSEntityDescription: `NSEntityName`, `NSClassNameForEntity`, `NSIsAbstract` (only when true),
///   `NSManagedObjectModel`, `NSSuperentity`, `NSSubentities` (name → entity, `$null` when none),
///   `NSProperties` (the entity's own properties by name), `NSUserInfo` (always), `NSVersionHashModifier`,
///   `NSRenamingIdentifier` (the name when there is no other), `NSUniqueTuples` (uniqueness
///   constraints), `NSFetchIndexDescriptions` and `NSCompoundIndexes` (when it has fetch indexes).
/// - NSPropertyDescription: `NSIsOptional`, `NSIsTransient`, `NSIsOrdered` (each only when true),
///   `NSRenamingIdentifier`, `NSPropertyName`, `NSEntity`, `NSUserInfo` and `NSVersionHashModifier`
///   (only when not empty), `_P` (the packed flags: 0x1, 0x2 optional, 0x8 transient, 0x400 ordered,
///   0x10/0x20 no validation predicates or warnings, 0x40 no user info, 0x80 no modifier).
/// - NSAttributeDescription: `NSAttributeType`, `NSAttributeValueClassName`, `NSDefaultValue`,
///   `NSValueTransformerName`, `NSIsIndexed` (when true), `NSFlagsKey` (1 a maximum, 2 a minimum,
///   4 external storage, 0x10 preserved in history on deletion) with `NSMaxValueName`/`NSMinValueName`.
/// - NSDerivedAttributeDescription: NSAttributeDescription's keys, then `NSDerivationExpression`
///   (an archived NSExpression, `ArchivedExpressionWriter`) and `NSFilteringPredicate` (`$null`).
/// - NSRelationshipDescription: `NSDestinationEntity`, `NSInverseRelationship`,
///   `_NSDestinationEntityName`, `_NSInverseRelationshipName`, `NSMinCount`, `NSMaxCount`, `NSDeleteRule`,
///   `NSIsIndexed` (when true).
/// - NSFetchIndexDescription (`NSIndexName`, `NSIndexElements`, `NSEntity`, `NSPartialIndexPredicate`)
///   and NSFetchIndexElementDescription (`NSPropertyName`, `NSFetchIndexElementType`, `NSAscending`,
///   `NSFetchIndexDescription`).
///
/// The writer never recurses through the model: entities and properties that point at each other
/// are references, each entity written in turn inside the entity dictionary's values.
package enum CompiledModelWriter {
    /// NSKnownKeysDictionary1's token for an unused slot, as Core Data archives it.
    static let emptySlotToken = "__empty_slot_token_4c24_98dc_ac1e_b773__"

    /// The keyed archive (a `bplist00` document) of `model`.
    ///
    /// - Parameter model: the model (its entities linked, as every `ManagedObjectModel` is).
    /// - Returns: the archive, which `CompiledModelReader.model(fromArchive:)` reads back as the same model.
    /// - Throws: `MigrationError` `.invalidModel` when the model refers to an entity or property it
    ///   does not hold (a model that failed to link).
    ///
    /// Core Data counterpart: `NSKeyedArchiver.archivedData(withRootObject: model)`.
    package static func archive(_ model: ManagedObjectModel) throws -> [UInt8] {
        let writer = KeyedArchiveWriter(what: "the archive of model \(model.name.map { "'\($0)'" } ?? "(unnamed)")")
        let entities = model.entities.sorted { VersionHash.nameOrder($0.name, $1.name) }
        let root = writer.encode("model", classes: ["NSManagedObjectModel"]) {
            let entityDictionary = writer.encode(
                nil,
                classes: ["NSKnownKeysDictionary1", "NSKnownKeysDictionary", "NSMutableDictionary", "NSDictionary"]
            ) {
                let strategy = writer.encode(
                    nil, classes: ["NSKnownKeysMappingStrategy1", "NSKnownKeysMappingStrategy"]
                ) {
                    let keys = writer.array { entities.map { writer.string($0.name) } }
                    return [("keys", keys), ("length", .integer(Int64(entities.count))), ("version", .integer(1))]
                }
                let token = writer.string(emptySlotToken)
                // Each entity written where NSKeyedArchiver writes it: inside the values, in order.
                let values = writer.array { entities.map { encode($0, writer) } }
                return [
                    ("searchMapping", strategy), ("emptyToken", token), ("values", values), ("version", .integer(1)),
                ]
            }
            let identifiers = writer.array(["NSMutableSet", "NSSet"]) { [writer.string(model.versionIdentifier ?? "")] }
            return [
                ("NSEntities", entityDictionary), ("NSFetchRequestTemplates", KeyedArchiveWriter.null),
                ("NSVersionIdentifiers", identifiers),
            ]
        }
        // Every entity is written (with its own properties and fetch indexes) by now.
        return try writer.archive(root: root)
    }

    static func entityKey(_ entity: EntityDescription) -> String { "entity:" + entity.name }
    static func entityKey(named name: String) -> String { "entity:" + name }
    static func propertyKey(_ entity: String, _ property: String) -> String { "property:" + entity + "." + property }

    @discardableResult
    private static func encode(_ entity: EntityDescription, _ writer: KeyedArchiveWriter) -> PropertyListValue {
        return writer.encode(entityKey(entity), classes: ["NSEntityDescription"]) {
            var fields: [(String, PropertyListValue)] = [
                ("NSEntityName", writer.string(entity.name)),
                ("NSClassNameForEntity", writer.string(entity.managedObjectClassName ?? "NSManagedObject")),
            ]
            if entity.isAbstract { fields.append(("NSIsAbstract", .bool(true))) }
            fields.append(("NSManagedObjectModel", writer.reference(to: "model")))
            fields.append(
                ("NSSuperentity", entity.parent.map { writer.reference(to: entityKey($0)) } ?? KeyedArchiveWriter.null))
            let subentities = entity.subentities.sorted { VersionHash.nameOrder($0.name, $1.name) }
            if subentities.isEmpty {
                fields.append(("NSSubentities", KeyedArchiveWriter.null))
            } else {
                fields.append(
                    (
                        "NSSubentities",
                        writer.dictionary(
                            ["NSMutableDictionary", "NSDictionary"],
                            keys: { subentities.map { writer.string($0.name) } },
                            values: { subentities.map { writer.reference(to: entityKey($0)) } })
                    ))
            }
            let properties: [PropertyDescription] =
                (entity.ownAttributes as [PropertyDescription] + entity.ownRelationships)
                .sorted { VersionHash.nameOrder($0.name, $1.name) }
            fields.append(
                (
                    "NSProperties",
                    writer.dictionary(
                        ["NSMutableDictionary", "NSDictionary"],
                        keys: { properties.map { writer.string($0.name) } },
                        values: { properties.map { encode($0, of: entity, writer) } })
                ))
            fields.append(("NSUserInfo", userInfo(entity.userInfo, writer)))
            fields.append(
                ("NSVersionHashModifier", writer.string(entity.versionHashModifier.flatMap { $0.isEmpty ? nil : $0 })))
            fields.append(("NSRenamingIdentifier", writer.string(entity.renamingIdentifier ?? entity.name)))
            let constraints = entity.uniquenessConstraints.filter { !$0.isEmpty }
            if !constraints.isEmpty {
                fields.append(
                    (
                        "NSUniqueTuples",
                        writer.array {
                            constraints.map { constraint in writer.array { constraint.map { writer.string($0) } } }
                        }
                    ))
            }
            if !entity.fetchIndexes.isEmpty {
                fields.append(
                    (
                        "NSFetchIndexDescriptions",
                        writer.array(["NSMutableArray", "NSArray"]) {
                            entity.fetchIndexes.map { encode($0, of: entity, writer) }
                        }
                    ))
                // Core Data's older form beside them: the multi-property indexes as name lists.
                let compound = entity.fetchIndexes.filter { index in
                    index.elements.count > 1
                        && index.elements.allSatisfy { $0.propertyName != nil && $0.type == .binary }
                }
                fields.append(
                    (
                        "NSCompoundIndexes",
                        writer.array(["NSMutableArray", "NSArray"]) {
                            compound.map { index in
                                writer.array(["NSMutableArray", "NSArray"]) {
                                    index.elements.map { writer.string($0.propertyName) }
                                }
                            }
                        }
                    ))
            }
            return fields
        }
    }

    private static func encode(
        _ index: FetchIndexDescription, of entity: EntityDescription, _ writer: KeyedArchiveWriter
    ) -> PropertyListValue {
        let key = "index:" + entity.name + "." + index.name
        return writer.encode(key, classes: ["NSFetchIndexDescription"]) {
            // The elements point back at their index, whose slot is taken already.
            let indexReference = writer.reference(to: key)
            let elements = writer.array {
                index.elements.map { element in
                    writer.encode(nil, classes: ["NSFetchIndexElementDescription"]) {
                        [
                            ("NSPropertyName", writer.string(element.propertyName)),
                            ("NSFetchIndexElementType", .integer(element.type == .rTree ? 1 : 0)),
                            ("NSFetchIndexDescription", indexReference),
                            ("NSAscending", .bool(element.isAscending)),
                        ]
                    }
                }
            }
            return [
                ("NSIndexName", writer.string(index.name)), ("NSPartialIndexPredicate", KeyedArchiveWriter.null),
                ("NSIndexElements", elements), ("NSEntity", writer.reference(to: entityKey(entity))),
            ]
        }
    }

    /// NSPropertyDescription's keys, then the attribute's or the relationship's.
    private static func encode(
        _ property: PropertyDescription, of entity: EntityDescription, _ writer: KeyedArchiveWriter
    ) -> PropertyListValue {
        let derivation = (property as? AttributeDescription)?.derivationExpression
        let classes =
            property is RelationshipDescription
            ? ["NSRelationshipDescription", "NSPropertyDescription"]
            : derivation != nil
                ? ["NSDerivedAttributeDescription", "NSAttributeDescription", "NSPropertyDescription"]
                : ["NSAttributeDescription", "NSPropertyDescription"]
        return writer.encode(propertyKey(entity.name, property.name), classes: classes) {
            var fields: [(String, PropertyListValue)] = []
            var flags: Int64 = 0x1
            if property.isOptional {
                fields.append(("NSIsOptional", .bool(true)))
                flags |= 0x2
            }
            if property.isTransient {
                fields.append(("NSIsTransient", .bool(true)))
                flags |= 0x8
            }
            if let relationship = property as? RelationshipDescription, relationship.isOrdered {
                fields.append(("NSIsOrdered", .bool(true)))
                flags |= 0x400
            }
            fields.append(("NSRenamingIdentifier", writer.string(property.renamingIdentifier ?? property.name)))
            fields.append(("NSPropertyName", writer.string(property.name)))
            fields.append(("NSEntity", writer.reference(to: entityKey(entity))))
            flags |= 0x10 | 0x20  // no validation predicates, no warnings (bounds travel in NSFlagsKey)
            if property.userInfo.isEmpty {
                flags |= 0x40
            } else {
                fields.append(("NSUserInfo", userInfo(property.userInfo, writer)))
            }
            if let modifier = property.versionHashModifier, !modifier.isEmpty {
                fields.append(("NSVersionHashModifier", writer.string(modifier)))
            } else {
                flags |= 0x80
            }
            if let attribute = property as? AttributeDescription {
                fields += attributeFields(attribute, writer)
                if let derivation { fields += derivedFields(derivation, writer) }
            } else if let relationship = property as? RelationshipDescription {
                fields += relationshipFields(relationship, writer)
            }
            fields.append(("_P", .integer(flags)))
            return fields
        }
    }

    private static func attributeFields(_ attribute: AttributeDescription, _ writer: KeyedArchiveWriter) -> [(
        String, PropertyListValue
    )] {
        let type = attribute.attributeType
        var fields: [(String, PropertyListValue)] = [
            ("NSAttributeType", .integer(Int64(type.coreDataCode))),
            ("NSAttributeValueClassName", writer.string(valueClassName(type))),
            ("NSDefaultValue", ArchivedValueWriter.object(attribute.defaultValue, type: type, writer)),
            ("NSValueTransformerName", writer.string(attribute.valueTransformerName)),
        ]
        if attribute.isIndexed { fields.append(("NSIsIndexed", .bool(true))) }
        var flags: Int64 = 0
        // Bounds of the integer types and strings (lengths) as integers, of the others as reals.
        let integral = type.isInteger || type == .string
        func bound(_ value: Double) -> PropertyListValue {
            if integral, value.rounded() == value, abs(value) < 9.2e18 { return .integer(Int64(value)) }
            return .real(value)
        }
        if let maximum = attribute.maxValue, maximum.isFinite {
            flags |= 1
            fields.append(("NSMaxValueName", bound(maximum)))
        }
        if let minimum = attribute.minValue, minimum.isFinite {
            flags |= 2
            fields.append(("NSMinValueName", bound(minimum)))
        }
        if attribute.allowsExternalBinaryDataStorage { flags |= 4 }
        if attribute.preservesValueInHistoryOnDeletion { flags |= 0x10 }
        fields.append(("NSFlagsKey", .integer(flags)))
        return fields
    }

    /// NSDerivedAttributeDescription's keys after NSAttributeDescription's: `NSDerivationExpression`
    /// (the expression in the form Core Data keeps it, `ArchivedExpressionWriter`) and
    /// `NSFilteringPredicate` (`$null`: predicates are not archived, so a derived attribute with one
    /// reads back as another version and its model gets no cache).
    private static func derivedFields(_ text: String, _ writer: KeyedArchiveWriter) -> [(String, PropertyListValue)] {
        var expression = KeyedArchiveWriter.null
        if let parsed = try? ExpressionParser.parseExpression(text) {
            expression = ArchivedExpressionWriter.encode(ArchivedExpressionWriter.derivationForm(parsed), writer)
        }
        return [("NSDerivationExpression", expression), ("NSFilteringPredicate", KeyedArchiveWriter.null)]
    }

    private static func relationshipFields(_ relationship: RelationshipDescription, _ writer: KeyedArchiveWriter) -> [(
        String, PropertyListValue
    )] {
        let codes: [DeleteRule: Int64] = [.noAction: 0, .nullify: 1, .cascade: 2, .deny: 3]
        let destination = relationship.destinationEntityName
        var inverse = KeyedArchiveWriter.null
        if let inverseName = relationship.inverseName {
            inverse = writer.reference(
                to: propertyKey(relationship.inverseRelationship?.entity?.name ?? destination, inverseName))
        }
        var fields: [(String, PropertyListValue)] = [
            ("NSDestinationEntity", writer.reference(to: entityKey(named: destination))),
            ("NSInverseRelationship", inverse),
            ("_NSDestinationEntityName", writer.string(destination)),
            ("_NSInverseRelationshipName", writer.string(relationship.inverseName)),
            ("NSMinCount", .integer(Int64(clamping: relationship.minCount))),
            ("NSMaxCount", .integer(Int64(clamping: relationship.maxCount))),
            ("NSDeleteRule", .integer(codes[relationship.deleteRule] ?? 1)),
        ]
        // An indexed to-one (its foreign key column gets an index in the store).
        if relationship.isIndexed { fields.append(("NSIsIndexed", .bool(true))) }
        return fields
    }

    /// NSAttributeDescription's value class for a type (`attributeValueClassName`), nil where
    /// Core Data has none (transformable, undefined, composite).
    static func valueClassName(_ type: AttributeType) -> String? {
        switch type {
        case .integer16, .integer32, .integer64, .double, .float, .boolean: return "NSNumber"
        case .decimal: return "NSDecimalNumber"
        case .string: return "NSString"
        case .date: return "NSDate"
        case .binary: return "NSData"
        case .uuid: return "NSUUID"
        case .uri: return "NSURL"
        case .objectID: return "NSManagedObjectID"
        case .transformable, .undefined, .composite: return nil
        }
    }

    /// User info as an NSDictionary of strings, keys in order.
    private static func userInfo(_ info: [String: String], _ writer: KeyedArchiveWriter) -> PropertyListValue {
        let entries = info.sorted { $0.key < $1.key }
        return writer.dictionary(
            keys: { entries.map { writer.string($0.key) } }, values: { entries.map { writer.string($0.value) } })
    }
}
