import CSQLite

/// The bit vector Core Data's persistent history keeps of the properties a change touched
/// (`ACHANGE.ZCOLUMNS`): one bit per slot of the changed entity, most significant bit of the first
/// byte first, the slots in the order of Core Data's `_NSPersistentHistoryChange`
/// (`_propertyDataForEntity:withSetOfPropertyNames:` and `_updatedPropertiesForEntity:andData:`, as
/// public decompilations of CoreData.framework show them): the to-ones' foreign key columns, their
/// entity columns (`Z<n>_<NAME>`), their order columns (`Z_FOK_<NAME>`), the attribute columns,
/// the to-manys, the many-to-manys — each slot standing for its property's name.
///
/// Within each group cdmigrate orders the properties by name (the order of a compiled model's
/// property dictionaries); Core Data's own order inside a group is not confirmed by a store.
package struct HistoryColumnSlots: Equatable {
    /// The property name of each slot, in bit order.
    package let names: [String]

    /// The slots of `entity` in a store laid out as `layout`.
    package init(entity: EntityDescription, layout: StoreLayout) {
        var foreignKeys: [String] = []
        var entityColumns: [String] = []
        var orderColumns: [String] = []
        var toManys: [String] = []
        var manyToManys: [String] = []
        for relationship in entity.relationships.sorted(by: { $0.name < $1.name }) {
            switch layout.storage(of: relationship) {
            case .foreignKey(_, let entityColumn, let orderColumn):
                foreignKeys.append(relationship.name)
                if entityColumn != nil { entityColumns.append(relationship.name) }
                if orderColumn != nil { orderColumns.append(relationship.name) }
            case .inverseForeignKey, .hiddenColumn: toManys.append(relationship.name)
            case .joinTable: manyToManys.append(relationship.name)
            case .transient: break
            }
        }
        let attributes = entity.attributes.filter { layout.column(for: $0) != nil }.map { $0.name }.sorted()
        names = foreignKeys + entityColumns + orderColumns + attributes + toManys + manyToManys
    }

    /// The property names whose bits are set in `bytes` (bits past the slots are ignored).
    package func properties(in bytes: [UInt8]) -> [String] {
        names.enumerated().compactMap { i, name in
            let byte = i >> 3
            return byte < bytes.count && bytes[byte] & (0x80 >> UInt8(i & 7)) != 0 ? name : nil
        }
    }

    /// The bit vector of `properties` over these slots (names without a slot are dropped). The
    /// same slot name may appear in several groups (a to-one's key, entity and order columns): each gets its bit.
    package func bits(for properties: [String]) -> [UInt8] {
        let wanted = Set(properties)
        var bytes = [UInt8](repeating: 0, count: (names.count + 7) / 8)
        for (i, name) in names.enumerated() where wanted.contains(name) { bytes[i >> 3] |= 0x80 >> UInt8(i & 7) }
        return bytes
    }
}
