/// NSEntityMappingType. As in Core Data, the label is informative: what runs depends on the
/// source expression and the destination entity.
public enum EntityMappingType: String, CaseIterable {
    case undefined, custom, add, remove, copy, transform
}
