/// Derived attributes (NSDerivedAttributeDescription) in the destination: their values computed
/// for the migrated rows in SQL, and Core Data's `Z_DA_…` triggers installed to keep them, as a
/// store Core Data creates for the destination model has them (`DerivedAttributeSQL`).
extension MigrationManager {
    /// Computes every derived attribute of the destination model for the rows of `destination`
    /// and installs Core Data's triggers for it. An expression Core Data does not maintain in SQL
    /// keeps the values the mapping gave it, with a warning naming the attribute.
    func maintainDerivedAttributes(in destination: PersistentStore) throws {
        let layout = destination.layout
        var plans: [DerivedAttributeSQL] = []
        for entity in destinationModel.entities {
            for attribute in entity.attributes
            where attribute.derivationExpression != nil && !attribute.isTransient && attribute.entity === entity {
                switch DerivedAttributeSQL.plan(for: attribute, of: entity, layout: layout) {
                case .success(let plan): plans.append(plan)
                case .failure(let problem):
                    run.report.warnings.append(
                        "derived attribute '\(entity.name).\(attribute.name)' keeps the values the mapping gave it and gets no trigger: \(problem.reason)"
                    )
                }
            }
        }
        guard !plans.isEmpty else { return }
        let database = destination.database
        try destination.beginIfNeeded()
        // Values first (triggers would fire on these updates), then the triggers.
        for plan in plans {
            for statement in plan.dataStatements { try database.exec(statement) }
        }
        for plan in plans {
            for statement in plan.triggerStatements { try database.exec(statement) }
        }
    }
}
