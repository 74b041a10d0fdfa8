/// How a store keeps a relationship (see `StoreLayout` for the naming rules).
///
/// One column or join table holds both directions of a relationship and its inverse, which is
/// why writing either side keeps the inverse consistent without further work.
package enum RelationshipStorage: Equatable {
    /// A to-one: a column on the entity's own table holding the target's `Z_PK`; `entityColumn`
    /// (`Z<n>_<NAME>`) holds the target's `Z_ENT` when the destination has subentities;
    /// `orderColumn` (`Z_FOK_<NAME>`) is the row's position in the inverse when that is an ordered to-many.
    case foreignKey(column: String, entityColumn: String?, orderColumn: String?)
    /// The to-many side of a one-to-many: the inverse to-one's column on the destination's table.
    case inverseForeignKey(table: String, column: String, entityColumn: String?, orderColumn: String?)
    /// A many-to-many: the join table, the column holding this side's `Z_PK`, the column holding
    /// the other side's, and the ordering columns of this relationship and of its inverse (when ordered).
    case joinTable(
        table: String, ownColumn: String, otherColumn: String, orderColumn: String?, inverseOrderColumn: String?)
    /// A to-many without an inverse: a hidden column on the destination's table holding the source's `Z_PK`.
    case hiddenColumn(table: String, column: String, orderColumn: String?)
    /// A transient relationship: nothing in the store.
    case transient

    /// A to-many's links: the table holding one row a link and its column holding the owner's
    /// `Z_PK` (the destination's table for a one-to-many or a to-many without inverse, the join
    /// table for a many-to-many); nil for a to-one and a transient relationship.
    package var toManyLinks: (table: String, ownerColumn: String)? {
        switch self {
        case .inverseForeignKey(let table, let column, _, _), .hiddenColumn(let table, let column, _):
            return (table, column)
        case .joinTable(let table, let ownColumn, _, _, _):
            return (table, ownColumn)
        case .foreignKey, .transient:
            return nil
        }
    }
}
