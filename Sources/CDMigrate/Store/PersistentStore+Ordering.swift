/// The order of an ordered to-many as a relationship mapping gives it.
extension PersistentStore {
    /// Places `targets`, members already of `object`'s ordered to-many `relationship`, last in its
    /// list and in the order given (a repeat keeps its first place); the other members keep theirs.
    /// Only this side's ordering column changes: in a many-to-many, the order of the inverse's
    /// lists stays as it is. Nothing happens for an unordered relationship.
    ///
    /// A relationship mapping's result is the source's order (the source's members as the store
    /// lists them, the destinations of each in the order made): set like this, it wins over the
    /// order the members happened to join in, for example when the mapping of the inverse to-one
    /// ran first and appended each member as its turn came.
    ///
    /// Core Data: `setValue(_:forKey:)` with the `NSOrderedSet` the relationship mapping evaluates to.
    package func placeLast(
        _ targets: [ManagedObject], of object: ManagedObject, in relationship: RelationshipDescription
    ) throws {
        guard relationship.isToMany, relationship.isOrdered, !targets.isEmpty else { return }
        let storage = try checkRelationshipWrite(object, relationship, targets)
        var keys: [Int64] = []
        var seen = Set<Int64>()
        for target in targets where seen.insert(target.objectID.primaryKey).inserted {
            keys.append(target.objectID.primaryKey)
        }
        let owner = primaryKeyValue(object)
        let table: String
        let ownerColumn: String
        let memberColumn: String
        let orderColumn: String
        switch storage {
        case .inverseForeignKey(let t, let column, _, let order?), .hiddenColumn(let t, let column, let order?):
            (table, ownerColumn, memberColumn, orderColumn) = (t, column, "Z_PK", order)
        case .joinTable(let t, let own, let other, let order?, _):
            (table, ownerColumn, memberColumn, orderColumn) = (t, own, other, order)
        default:
            return
        }
        try writeBuffer()
        try beginIfNeeded()
        // The list as it is: each member's place; the members not given keep theirs, at the front.
        var current: [Int64: Int64] = [:]
        var others: Int64 = 0
        for row in try database.rows(
            "SELECT \(memberColumn), \(orderColumn) FROM \(table) WHERE \(ownerColumn) = ?", [owner])
        {
            guard row.count == 2, let member = row[0].integer else { continue }
            let place = row[1].integer ?? 0
            current[member] = place
            if !seen.contains(member) { others = max(others, place) }
        }
        let update = try database.prepare(
            "UPDATE \(table) SET \(orderColumn) = ? WHERE \(ownerColumn) = ? AND \(memberColumn) = ?")
        var place = others
        for key in keys {
            guard let was = current[key] else { continue }  // not a member: nothing to place
            let (next, overflow) = place.addingReportingOverflow(1)
            if overflow {
                throw MigrationError(
                    .migration,
                    "'\(object.entity.name).\(relationship.name)' of \(object.objectID): the ordering column '\(orderColumn)' of '\(table)' holds a place too large to follow"
                )
            }
            place = next
            if was != place { try update.run([.integer(place), owner, .integer(key)]) }
        }
    }
}
