/// Stage 3's store-wide check of the destination, as SQL over the finished tables rather than
/// object by object: required attributes and relationships present, to-many counts within their
/// bounds, numbers within their type's size and their min/max.
///
/// As in Core Data, a single failure is thrown as itself (1570, 1580, …) and several as one 1560
/// whose underlying errors are the individual ones, one per instance and property (at most
/// `maximumIndividualErrors` of them); its message groups them by property and problem.
struct DestinationValidation {
    let store: PersistentStore
    /// Instances named per problem in the grouped message.
    var examplesPerProblem = 3
    /// Individual errors kept in all; a store failing on millions of rows gives this many.
    var maximumIndividualErrors = 1_000
    /// Rows whose attribute rules a checked copy enforced: not scanned again (see `ValidatedByCopy`).
    var validatedByCopy = ValidatedByCopy()

    /// A failing rule: what it checks, in how many instances, and the individual errors.
    private struct Problem {
        let summary: String
        let individual: [MigrationError]
    }

    func validate() throws {
        try store.flush()
        var problems: [Problem] = []
        let layout = store.layout
        for entity in store.model.entitiesInStoreOrder where !entity.isAbstract {
            let table = SQLiteDatabase.quote(layout.table(for: entity))
            let own = layout.entityRestriction(for: entity, includingSubentities: false) ?? "1"
            // The attribute rules, each a condition on a row's columns: one scan for all of them
            // first, and a query per rule only when some row breaks one.
            var rules: [(key: String, condition: String, code: MigrationError.Code, what: String)] = []
            // Rows made or changed one at a time may hold anything: their entity is scanned whole.
            let covered =
                store.entitiesWrittenByInstance.contains(ObjectIdentifier(entity)) ? ValidatedByCopy() : validatedByCopy
            for attribute in entity.attributes where !attribute.isTransient {
                guard let column = layout.column(for: attribute).map(SQLiteDatabase.quote) else { continue }
                let name = "\(entity.name).\(attribute.name)"
                if !attribute.isOptional {
                    rules.append(
                        (
                            attribute.name, "\(column) IS NULL", .validationMissingMandatoryProperty,
                            "\(name) is required but nil"
                        ))
                }
                let (lower, upper) = Self.bounds(of: attribute)
                guard attribute.attributeType.isNumeric else { continue }
                if let upper = upper {
                    rules.append(
                        (
                            attribute.name, "\(column) > \(Value.format(upper))", .validationNumberTooLarge,
                            "\(name) is above its maximum \(Value.format(upper))"
                        ))
                }
                if let lower = lower {
                    rules.append(
                        (
                            attribute.name, "\(column) < \(Value.format(lower))", .validationNumberTooSmall,
                            "\(name) is below its minimum \(Value.format(lower))"
                        ))
                }
            }
            if !rules.isEmpty {
                // One scan per set of rules covering the same rows, of the rows not covered.
                var groups: [(gaps: [ClosedRange<Int64>], conditions: [String])] = []
                for rule in rules {
                    let gaps = ValidatedByCopy.gaps(outside: covered.coveredKeys(of: entity, attribute: rule.key))
                    if let i = groups.firstIndex(where: { $0.gaps == gaps }) {
                        groups[i].conditions.append(rule.condition)
                    } else {
                        groups.append((gaps, [rule.condition]))
                    }
                }
                var broken = false
                for group in groups where !broken {
                    let any = group.conditions.map { "(\($0))" }.joined(separator: " OR ")
                    for gap in group.gaps where !broken {
                        let keys =
                            gap == Int64.min...Int64.max
                            ? "" : "Z_PK BETWEEN \(gap.lowerBound) AND \(gap.upperBound) AND "
                        broken =
                            try store.database.scalar("SELECT 1 FROM \(table) WHERE \(keys)\(own) AND (\(any)) LIMIT 1")
                            != nil
                    }
                }
                if broken {
                    for rule in rules {
                        try check(
                            entity, rule.key, table, "\(own) AND \(rule.condition)", rule.code, rule.what, &problems)
                    }
                }
            }
            for relationship in entity.relationships where !relationship.isTransient {
                let name = "\(entity.name).\(relationship.name)"
                // As Core Data (RelationshipCardinality.swift): the count bounds apply only to a
                // non-empty relationship; an empty one is refused only where `allowsEmpty` says so
                // (a required to-one, or a required to-many with a minimum count).
                let minimum = relationship.isToMany ? relationship.minCount : 1
                let maximum = relationship.maxCount
                let storage = layout.storage(of: relationship)
                if case .foreignKey(let column, _, _) = storage {
                    if !relationship.isOptional {
                        try check(
                            entity, relationship.name, table, "\(own) AND \(SQLiteDatabase.quote(column)) IS NULL",
                            .validationMissingMandatoryProperty,
                            "\(name) is required but nil", &problems)
                    }
                    continue
                }
                guard let links = storage.toManyLinks else { continue }
                let count =
                    "(SELECT COUNT(*) FROM \(SQLiteDatabase.quote(links.table)) i WHERE i.\(SQLiteDatabase.quote(links.ownerColumn)) = \(table).Z_PK)"
                if relationship.allowsEmpty {
                    if minimum > 1 {
                        try check(
                            entity, relationship.name, table, "\(own) AND \(count) BETWEEN 1 AND \(minimum - 1)",
                            .validationRelationshipLacksMinimumCount,
                            "\(name) has fewer than \(minimum) instances", &problems)
                    }
                } else if relationship.isToMany {
                    try check(
                        entity, relationship.name, table, "\(own) AND \(count) < \(minimum)",
                        .validationRelationshipLacksMinimumCount,
                        "\(name) has fewer than \(minimum) instance\(minimum == 1 ? "" : "s")", &problems)
                } else {
                    try check(
                        entity, relationship.name, table, "\(own) AND \(count) < 1",
                        .validationMissingMandatoryProperty,
                        "\(name) is required but nil", &problems)
                }
                if relationship.isToMany && maximum > 0 {
                    try check(
                        entity, relationship.name, table, "\(own) AND \(count) > \(maximum)",
                        .validationRelationshipExceedsMaximumCount,
                        "\(name) has more than \(maximum) instances", &problems)
                }
            }
        }
        let individual = problems.flatMap { $0.individual }
        if problems.count == 1, individual.count == 1 { throw individual[0] }
        if !problems.isEmpty {
            let total = problems.count
            throw MigrationError(
                .validationMultipleErrors,
                "the migrated store does not validate: \(total) problem\(total == 1 ? "" : "s"): "
                    + problems.map { $0.summary }.joined(separator: "; "),
                underlying: individual)
        }
    }

    /// The bounds stage 3 checks a numeric attribute's values against: its minimum and maximum,
    /// within its integer type's range.
    static func bounds(of attribute: AttributeDescription) -> (lower: Double?, upper: Double?) {
        var lower = attribute.minValue
        var upper = attribute.maxValue
        if let range = attribute.attributeType.integerRange {
            lower = max(lower ?? Double(range.lowerBound), Double(range.lowerBound))
            upper = min(upper ?? Double(range.upperBound), Double(range.upperBound))
        }
        return (lower, upper)
    }

    /// Adds a problem when rows of `entity` match `condition`: one error per instance (while the
    /// budget lasts) and a summary naming how many and a few of them.
    private func check(
        _ entity: EntityDescription, _ key: String, _ table: String, _ condition: String, _ code: MigrationError.Code,
        _ what: String, _ problems: inout [Problem]
    ) throws {
        let budget = max(examplesPerProblem, maximumIndividualErrors - problems.reduce(0) { $0 + $1.individual.count })
        let rows = try store.database.rows(
            "SELECT Z_PK FROM \(table) WHERE \(condition) ORDER BY Z_PK LIMIT \(budget + 1)")
        guard !rows.isEmpty else { return }
        let total =
            rows.count > budget
            ? Int(try store.database.scalar("SELECT COUNT(*) FROM \(table) WHERE \(condition)")?.integer ?? 0)
            : rows.count
        let subjects = rows.prefix(budget).compactMap { $0.first?.integer }.map {
            ValidationSubject(
                entityName: entity.name,
                objectURI: ObjectID(storeIdentifier: store.metadata.storeUUID, entityName: entity.name, primaryKey: $0)
                    .uriRepresentation,
                primaryKey: $0, key: key)
        }
        let uris = subjects.map { $0.objectURI }
        let examples = uris.prefix(examplesPerProblem)
        problems.append(
            Problem(
                summary:
                    "\(what) in \(total) instance\(total == 1 ? "" : "s") (\(examples.joined(separator: ", "))\(total > examples.count ? ", …" : ""))",
                individual: subjects.map {
                    var error = MigrationError(code, "\(what) (\($0.objectURI))")
                    error.validationSubject = $0
                    return error
                }))
    }
}
