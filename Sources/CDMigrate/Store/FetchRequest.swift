/// NSFetchRequest, reduced to what a store can answer: an entity, an SQL condition over the
/// entity's table, an optional Swift filter for what SQL cannot say, limit and offset.
public struct FetchRequest {
    public var entityName: String
    /// Also return instances of subentities (Core Data's default).
    public var includesSubentities = true
    /// A condition over the entity's table columns (`ZTITLE = ?`), with `arguments` bound to its `?`s.
    public var sqlWhere: String?
    public var arguments: [Value] = []
    /// `ORDER BY` text over the table's columns; rows come in `Z_PK` order otherwise.
    public var sqlOrderBy: String?
    /// Applied to each instance after the SQL condition; limit and offset then count only instances it accepts.
    public var filter: ((ManagedObject) throws -> Bool)?
    public var fetchLimit: Int?
    public var fetchOffset = 0
    /// The columns `sqlWhere` reads, when known (a migration indexes them for repeated lookups).
    public var columnsUsed: [String] = []

    public init(entityName: String) {
        self.entityName = entityName
    }

    public init(entityName: String, sqlWhere: String?, arguments: [Value] = []) {
        self.entityName = entityName
        self.sqlWhere = sqlWhere
        self.arguments = arguments
    }
}
