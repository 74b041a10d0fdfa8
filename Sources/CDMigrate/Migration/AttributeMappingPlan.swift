/// An entity mapping's attribute mappings resolved against a source and a destination entity: the
/// destination attribute of each and, for a plain `$source.<attribute>`, the source attribute it
/// reads. Made once and reused while a policy applies the same mapping instance after instance,
/// so each application looks no name up. A class: the run keeps the last one, and taking it
/// for an instance is one reference, not a copy of every field.
final class AttributeMappingPlan {
    struct Step {
        let property: PropertyMapping
        let expression: ValueExpression
        /// Nil when the destination entity has no such attribute (an error when the step runs).
        let attribute: AttributeDescription?
        /// The source attribute of a `$source.<attribute>` expression; nil: evaluate the expression.
        let sourceAttribute: AttributeDescription?
    }

    let mapping: EntityMapping
    let sourceEntity: EntityDescription?
    let destinationEntity: EntityDescription
    let steps: [Step]
    /// The attribute mappings' revisions added up: a policy that changes an expression makes the plan stale.
    let revisions: Int

    init(mapping: EntityMapping, sourceEntity: EntityDescription?, destinationEntity: EntityDescription) {
        self.mapping = mapping
        self.sourceEntity = sourceEntity
        self.destinationEntity = destinationEntity
        revisions = AttributeMappingPlan.revisions(of: mapping)
        steps = mapping.attributeMappings.compactMap { property in
            guard let expression = property.valueExpression else { return nil }
            var sourceAttribute: AttributeDescription? = nil
            if case .keyPath(.variable("source"), let keys) = expression, keys.count == 1, let source = sourceEntity {
                sourceAttribute = source.attributesByName[keys[0]]
            }
            return Step(
                property: property, expression: expression,
                attribute: destinationEntity.attribute(named: property.name),
                sourceAttribute: sourceAttribute)
        }
    }

    /// Whether the plan was made for these entities and this mapping.
    func fits(_ mapping: EntityMapping, _ sourceEntity: EntityDescription?, _ destinationEntity: EntityDescription)
        -> Bool
    {
        self.mapping === mapping && self.sourceEntity === sourceEntity && self.destinationEntity === destinationEntity
            && revisions == AttributeMappingPlan.revisions(of: mapping)
    }

    static func revisions(of mapping: EntityMapping) -> Int {
        mapping.attributeMappings.reduce(0) { $0 &+ $1.revision }
    }
}
