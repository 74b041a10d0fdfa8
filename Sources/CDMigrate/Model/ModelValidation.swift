/// Model validation: what `ManagedObjectModel.init` checks, with the linking it does on the way
/// (parents, inverse relationships, destination entities, inherited properties), since each check
/// needs the links made before it.
///
/// Every problem is collected, with its JSON path, into one `MigrationError` (`invalidModel`);
/// `Mapping/MappingValidation.swift` does the same for mapping models.
extension ManagedObjectModel {
    /// Links the entities to each other and checks them: names, inheritance cycles, duplicate
    /// properties, defaults, storable types, counts, inverses and uniqueness constraints.
    /// Returns the problems found; the model is valid when there are none. What Core Data accepts
    /// but is likely a mistake (an inverse that does not answer) goes to `warnings`.
    func link() -> [MigrationError] {
        var problems: [MigrationError] = []
        func path(_ i: Int) -> String { "$.entities[\(i)]" }

        for (i, entity) in entities.enumerated() {
            entity.belong(to: reference)
            if entity.name.isEmpty || !ManagedObjectModel.isValidName(entity.name) {
                problems.append(
                    MigrationError(
                        .invalidModel,
                        "entity name '\(entity.name)' is not a valid name (letters, digits and '_', not starting with a digit)",
                        path: path(i) + ".name"))
            }
            if let parentName = entity.parentName {
                if let parent = entitiesByName[parentName] {
                    entity.parent = parent
                } else {
                    problems.append(
                        MigrationError(
                            .invalidModel,
                            "entity '\(entity.name)' has parent '\(parentName)', which is not in the model",
                            path: path(i) + ".parent"))
                }
            }
        }
        // Inheritance cycles: walk up at most entities.count steps.
        var inCycle = Set<String>()
        for (i, entity) in entities.enumerated() {
            var seen = Set<ObjectIdentifier>()
            var current: EntityDescription? = entity
            while let e = current {
                if !seen.insert(ObjectIdentifier(e)).inserted {
                    if !inCycle.contains(entity.name) {
                        problems.append(
                            MigrationError(
                                .invalidModel, "entity '\(entity.name)' is part of an inheritance cycle",
                                path: path(i) + ".parent"))
                    }
                    inCycle.insert(entity.name)
                    break
                }
                current = e.parent
            }
        }
        if !inCycle.isEmpty {
            for entity in entities where inCycle.contains(entity.name) { entity.parent = nil }
            return problems
        }
        for entity in entities {
            if let parent = entity.parent { parent.subentityList.append(Unowned(entity)) }
        }
        for entity in entities {
            entity.subentityList.sort { $0.value.name < $1.value.name }
        }

        // Flatten properties, parents before children.
        func flatten(_ entity: EntityDescription) {
            let inheritedAttributes = entity.parent?.attributes ?? []
            let inheritedRelationships = entity.parent?.relationships ?? []
            entity.attributes = inheritedAttributes + entity.ownAttributes
            entity.relationships = inheritedRelationships + entity.ownRelationships
            for sub in entity.subentities { flatten(sub) }
        }
        for entity in entities where entity.parent == nil { flatten(entity) }

        for (i, entity) in entities.enumerated() {
            var names: [String: String] = [:]
            if let parent = entity.parent {
                for a in parent.attributes { names[a.name] = "inherited" }
                for r in parent.relationships { names[r.name] = "inherited" }
            }
            /// A property's name: valid, and no other property's of the entity or of its parents.
            func claimName(_ name: String, _ kind: String, at p: String) {
                if !ManagedObjectModel.isValidName(name) {
                    problems.append(
                        MigrationError(
                            .invalidModel, "\(kind) name '\(name)' of entity '\(entity.name)' is not a valid name",
                            path: p + ".name"))
                }
                if let previous = names[name] {
                    problems.append(
                        MigrationError(
                            .invalidModel,
                            "entity '\(entity.name)' has a duplicate property name '\(name)'\(previous == "inherited" ? " (also inherited from its parent)" : "")",
                            path: p + ".name"))
                }
                names[name] = "own"
            }
            for (j, attribute) in entity.ownAttributes.enumerated() {
                attribute.entity = entity
                let p = path(i) + ".attributes[\(j)]"
                claimName(attribute.name, "attribute", at: p)
                if let problem = ManagedObjectModel.checkDefault(attribute) {
                    problems.append(
                        MigrationError(
                            .invalidModel, "attribute '\(entity.name).\(attribute.name)': \(problem)",
                            path: p + ".default"))
                }
                if !attribute.isTransient && !attribute.attributeType.isStorable {
                    let why =
                        attribute.attributeType == .composite
                        ? "cdmigrate does not store composite attributes" : "Core Data stores no value of that type"
                    problems.append(
                        MigrationError(
                            .invalidModel,
                            "attribute '\(entity.name).\(attribute.name)' of type \(attribute.attributeType.rawValue) must be transient (\(why))",
                            path: p + ".type"))
                }
                if let min = attribute.minValue, let max = attribute.maxValue, min > max {
                    problems.append(
                        MigrationError(
                            .invalidModel,
                            "attribute '\(entity.name).\(attribute.name)' has minValue \(Value.format(min)) above maxValue \(Value.format(max))",
                            path: p + ".minValue"))
                }
            }
            for (j, relationship) in entity.ownRelationships.enumerated() {
                relationship.entity = entity
                let p = path(i) + ".relationships[\(j)]"
                claimName(relationship.name, "relationship", at: p)
                guard let destination = entitiesByName[relationship.destinationEntityName] else {
                    problems.append(
                        MigrationError(
                            .invalidModel,
                            "relationship '\(entity.name).\(relationship.name)' points to entity '\(relationship.destinationEntityName)', which is not in the model",
                            path: p + ".destination"))
                    continue
                }
                relationship.destinationEntity = destination
                if relationship.minCount < 0 || relationship.maxCount < 0
                    || (relationship.maxCount > 0 && relationship.minCount > relationship.maxCount)
                {
                    problems.append(
                        MigrationError(
                            .invalidModel,
                            "relationship '\(entity.name).\(relationship.name)' has minCount \(relationship.minCount) and maxCount \(relationship.maxCount)",
                            path: p + ".minCount"))
                }
                if !relationship.isToMany && relationship.maxCount != 1 {
                    // A to-one holds at most one object; any other maximum means toMany was forgotten.
                    problems.append(
                        MigrationError(
                            .invalidModel,
                            "relationship '\(entity.name).\(relationship.name)' is to-one, so its maxCount must be 1, not \(relationship.maxCount)",
                            path: p + ".maxCount"))
                }
                if relationship.isOrdered && !relationship.isToMany {
                    problems.append(
                        MigrationError(
                            .invalidModel,
                            "relationship '\(entity.name).\(relationship.name)' is ordered but not to-many",
                            path: p + ".ordered"))
                }
                if let inverseName = relationship.inverseName {
                    guard let inverse = destination.relationshipsByNameIncludingOwn(inverseName) else {
                        problems.append(
                            MigrationError(
                                .invalidModel,
                                "relationship '\(entity.name).\(relationship.name)' names inverse '\(inverseName)', which entity '\(destination.name)' does not have",
                                path: p + ".inverse"))
                        continue
                    }
                    let backName = inverse.destinationEntityName
                    let pointsBack =
                        inverse.inverseName == relationship.name
                        && (entitiesByName[backName].map { entity.isKind(of: $0) || $0.isKind(of: entity) } ?? false)
                    if pointsBack {
                        relationship.inverseRelationship = inverse
                    } else {
                        // As momc and Core Data: the model is accepted. The relationship keeps the
                        // inverse name it declares (its version hash includes it) but, as its
                        // inverse does not answer it, it is stored and maintained as one without
                        // an inverse (docs/coming-from-core-data.md).
                        warnings.append(
                            "relationship '\(entity.name).\(relationship.name)' names inverse '\(destination.name).\(inverseName)', but that one's inverse is \(inverse.inverseName.map { "'\(backName).\($0)'" } ?? "not set"); '\(entity.name).\(relationship.name)' is kept as a relationship without an inverse (its version hash still names '\(inverseName)')"
                        )
                    }
                }
            }
        }
        // Indexes and lookup tables, now that the lists are complete.
        for entity in entities {
            for (k, a) in entity.attributes.enumerated() where a.entity === entity { a.index = k }
            for (k, r) in entity.relationships.enumerated() where r.entity === entity { r.index = k }
            entity.attributesByName = Dictionary(
                entity.attributes.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
            entity.relationshipsByName = Dictionary(
                entity.relationships.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        }
        for (i, entity) in entities.enumerated() {
            for (j, constraint) in entity.uniquenessConstraints.enumerated() {
                if constraint.isEmpty {
                    problems.append(
                        MigrationError(
                            .invalidModel, "entity '\(entity.name)' has an empty uniqueness constraint",
                            path: path(i) + ".uniquenessConstraints[\(j)]"))
                }
                for name in constraint where entity.property(named: name) == nil {
                    problems.append(
                        MigrationError(
                            .invalidModel,
                            "entity '\(entity.name)' has a uniqueness constraint on '\(name)', which is not one of its properties",
                            path: path(i) + ".uniquenessConstraints[\(j)]"))
                }
            }
            for (j, index) in entity.fetchIndexes.enumerated() {
                for (k, element) in index.elements.enumerated() {
                    guard let name = element.propertyName else { continue }
                    if entity.property(named: name) == nil {
                        problems.append(
                            MigrationError(
                                .invalidModel,
                                "fetch index '\(entity.name).\(index.name)' names '\(name)', which is not one of the entity's properties",
                                path: path(i) + ".fetchIndexes[\(j)].elements[\(k)]"))
                    } else if entity.relationship(named: name)?.isToMany == true {
                        // momc and Core Data accept it (Threema's model has such an index from
                        // its version 44 on). A to-many relationship has no column, so the store
                        // gets no such index (StoreLayout); an index changes no data, and Core
                        // Data does not compare a store's indexes with its model.
                        warnings.append(
                            "fetch index '\(entity.name).\(index.name)' names the to-many relationship '\(name)', which has no column to index: the index is left out of the store"
                        )
                    }
                }
            }
        }
        return problems
    }

    /// Letters, digits and underscores, not starting with a digit (what Xcode accepts).
    static func isValidName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, !(first.value >= 48 && first.value <= 57) else { return false }
        return name.unicodeScalars.allSatisfy {
            ($0.properties.isAlphabetic) || ($0.value >= 48 && $0.value <= 57) || $0 == "_"
        }
    }

    /// Why a default value does not suit its attribute, or nil when it does.
    static func checkDefault(_ attribute: AttributeDescription) -> String? {
        let value = attribute.defaultValue
        if value.isNull { return nil }
        let type = attribute.attributeType
        switch (type, value) {
        case (.integer16, .integer(let i)), (.integer32, .integer(let i)), (.integer64, .integer(let i)):
            if let range = type.integerRange, !range.contains(i) {
                return "default value \(i) does not fit in \(type.rawValue)"
            }
            return nil
        case (.decimal, .decimal), (.decimal, .integer), (.decimal, .double),
            (.double, .double), (.double, .integer), (.float, .double), (.float, .integer),
            (.string, .string), (.boolean, .bool), (.date, .date), (.binary, .binary), (.transformable, .binary),
            (.uuid, .uuid), (.uri, .uri):
            return nil
        default:
            return "default value \(value) (\(value.typeName)) does not suit type \(type.rawValue)"
        }
    }
}

extension EntityDescription {
    /// Looks a relationship up before `relationshipsByName` is filled (during linking).
    func relationshipsByNameIncludingOwn(_ name: String) -> RelationshipDescription? {
        var entity: EntityDescription? = self
        while let e = entity {
            if let r = e.ownRelationships.first(where: { $0.name == name }) { return r }
            entity = e.parent
        }
        return nil
    }
}
