/// NSFetchRequest, reduced to what a store can answer: an entity, an SQL condition over the
/// entity's table, an optional Swift filter for what SQL cannot say, limit and offset.
public struct FetchRequest {
    /// The entity fetched (Core Data: `entityName`).
    public var entityName: String
    /// Also return instances of subentities (Core Data's default).
    public var includesSubentities = true
    /// A condition over the entity's table columns (`ZTITLE = ?`), with `arguments` bound to its `?`s.
    public var sqlWhere: String?
    /// The values bound to `sqlWhere`'s `?`s, in order.
    public var arguments: [Value] = []
    /// `ORDER BY` text over the table's columns; rows come in `Z_PK` order otherwise.
    public var sqlOrderBy: String?
    /// Applied to each instance after the SQL condition; limit and offset then count only instances it accepts.
    public var filter: ((ManagedObject) throws -> Bool)?
    /// At most this many instances (nil: no limit; Core Data: `fetchLimit`).
    public var fetchLimit: Int?
    /// Instances skipped before the first returned (Core Data: `fetchOffset`).
    public var fetchOffset = 0
    /// The columns `sqlWhere` reads, when known (a migration indexes them for repeated lookups).
    public var columnsUsed: [String] = []

    /// A request for every instance of `entityName` and its subentities.
    public init(entityName: String) {
        self.entityName = entityName
    }

    /// A request for the instances of `entityName` whose row satisfies `sqlWhere`.
    ///
    /// - parameter entityName: The entity.
    /// - parameter sqlWhere: An SQL condition over the entity's columns (`ZTITLE = ?`), nil for all.
    /// - parameter arguments: The values bound to its `?`s.
    public init(entityName: String, sqlWhere: String?, arguments: [Value] = []) {
        self.entityName = entityName
        self.sqlWhere = sqlWhere
        self.arguments = arguments
    }
}

extension FetchRequest {
    /// ` WHERE …` taking the request's rows of `entity`'s table (aliased `t`): its entity numbers
    /// and its SQL condition; empty when every row of the table is taken.
    package func sqlWhereClause(for entity: EntityDescription, in layout: StoreLayout) -> String {
        var conditions: [String] = []
        if let restriction = layout.entityRestriction(
            for: entity, includingSubentities: includesSubentities, qualifier: "t.")
        {
            conditions.append(restriction)
        }
        if let condition = sqlWhere { conditions.append("(\(condition))") }
        return conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
    }
}
