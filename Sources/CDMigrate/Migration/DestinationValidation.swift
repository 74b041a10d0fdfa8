/// Stage 3's store-wide check of the destination, as SQL over the finished tables rather than
/// object by object: required attributes and relationships present, to-many counts within their
/// bounds, numbers within their type's size and their min/max. Every problem is collected; more
/// than one comes back as 1560 with the details.
struct DestinationValidation {
    let store: PersistentStore
    /// Instances named per problem in the message.
    var examplesPerProblem = 3

    func validate() throws {
        try store.flush()
        var problems: [MigrationError] = []
        let layout = store.layout
        for entity in store.model.entitiesInStoreOrder where !entity.isAbstract {
            let table = SQLiteDatabase.quote(layout.table(for: entity))
            let own = layout.entityRestriction(for: entity, includingSubentities: false) ?? "1"
            for attribute in entity.attributes where !attribute.isTransient {
                guard let column = layout.column(for: attribute).map(SQLiteDatabase.quote) else { continue }
                let name = "\(entity.name).\(attribute.name)"
                if !attribute.isOptional {
                    try check(entity, table, "\(own) AND \(column) IS NULL", .validationMissingMandatoryProperty,
                              "\(name) is required but nil", &problems)
                }
                var lower = attribute.minValue
                var upper = attribute.maxValue
                if let range = attribute.attributeType.integerRange {
                    lower = max(lower ?? Double(range.lowerBound), Double(range.lowerBound))
                    upper = min(upper ?? Double(range.upperBound), Double(range.upperBound))
                }
                guard attribute.attributeType.isNumeric else { continue }
                if let upper = upper {
                    try check(entity, table, "\(own) AND \(column) > \(Value.format(upper))", .validationNumberTooLarge,
                              "\(name) is above its maximum \(Value.format(upper))", &problems)
                }
                if let lower = lower {
                    try check(entity, table, "\(own) AND \(column) < \(Value.format(lower))", .validationNumberTooSmall,
                              "\(name) is below its minimum \(Value.format(lower))", &problems)
                }
            }
            for relationship in entity.relationships where !relationship.isTransient {
                let name = "\(entity.name).\(relationship.name)"
                // As Core Data: an optional relationship may be empty whatever its minimum count
                // (Xcode writes `optional="YES" minCount="1"` on to-ones); the count bounds apply
                // only to a non-empty one. A required one must be non-empty.
                let minimum = relationship.isOptional ? relationship.minCount : max(relationship.minCount, 1)
                let maximum = relationship.maxCount
                let count: String
                switch layout.storage(of: relationship) {
                case .foreignKey(let column, _, _):
                    if !relationship.isOptional {
                        try check(entity, table, "\(own) AND \(SQLiteDatabase.quote(column)) IS NULL", .validationMissingMandatoryProperty,
                                  "\(name) is required but nil", &problems)
                    }
                    continue
                case .inverseForeignKey(let other, let column, _, _), .hiddenColumn(let other, let column, _):
                    count = "(SELECT COUNT(*) FROM \(SQLiteDatabase.quote(other)) i WHERE i.\(SQLiteDatabase.quote(column)) = \(table).Z_PK)"
                case .joinTable(let join, let ownColumn, _, _, _):
                    count = "(SELECT COUNT(*) FROM \(SQLiteDatabase.quote(join)) j WHERE j.\(SQLiteDatabase.quote(ownColumn)) = \(table).Z_PK)"
                case .transient:
                    continue
                }
                if relationship.isOptional {
                    if minimum > 1 {
                        try check(entity, table, "\(own) AND \(count) BETWEEN 1 AND \(minimum - 1)", .validationRelationshipLacksMinimumCount,
                                  "\(name) has fewer than \(minimum) instances", &problems)
                    }
                } else {
                    let code: MigrationError.Code = relationship.minCount > 1 ? .validationRelationshipLacksMinimumCount : .validationMissingMandatoryProperty
                    try check(entity, table, "\(own) AND \(count) < \(minimum)", code,
                              code == .validationMissingMandatoryProperty ? "\(name) is required but empty" : "\(name) has fewer than \(minimum) instances", &problems)
                }
                if relationship.isToMany && maximum > 0 {
                    try check(entity, table, "\(own) AND \(count) > \(maximum)", .validationRelationshipExceedsMaximumCount,
                              "\(name) has more than \(maximum) instances", &problems)
                }
            }
        }
        if let error = MigrationError.collecting(problems, code: .validationMultipleErrors, summary: "the migrated store does not validate") {
            throw error
        }
    }

    /// Adds a problem when rows of `entity` match `condition`, naming how many and a few of them.
    private func check(_ entity: EntityDescription, _ table: String, _ condition: String, _ code: MigrationError.Code,
                       _ what: String, _ problems: inout [MigrationError]) throws {
        let rows = try store.database.rows("SELECT Z_PK FROM \(table) WHERE \(condition) ORDER BY Z_PK LIMIT \(examplesPerProblem + 1)")
        guard !rows.isEmpty else { return }
        let total = rows.count > examplesPerProblem
            ? Int(try store.database.scalar("SELECT COUNT(*) FROM \(table) WHERE \(condition)")?.integer ?? 0)
            : rows.count
        let examples = rows.prefix(examplesPerProblem).compactMap { $0.first?.integer }.map {
            ObjectID(storeIdentifier: store.metadata.storeUUID, entityName: entity.name, primaryKey: $0).uriRepresentation
        }
        problems.append(MigrationError(code, "\(what) in \(total) instance\(total == 1 ? "" : "s") (\(examples.joined(separator: ", "))\(total > examples.count ? ", …" : ""))"))
    }
}
