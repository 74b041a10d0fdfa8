@testable import CDMigrate

/// A model written out line by line with everything structural (names, hierarchy, types,
/// optionality, defaults, counts, rules, renaming identifiers, modifiers, user info), sorted,
/// so that two models read from different formats compare with a readable difference.
enum ModelStructure {
    static func lines(_ model: ManagedObjectModel) -> [String] {
        var lines: [String] = []
        for entity in model.entities.sorted(by: { $0.name < $1.name }) {
            lines.append(
                "entity \(entity.name) parent=\(entity.parent?.name ?? "-") abstract=\(entity.isAbstract) renaming=\(entity.renamingIdentifier ?? "-") modifier=\(entity.versionHashModifier ?? "-") userInfo=\(userInfo(entity.userInfo))"
            )
            for a in entity.ownAttributes.sorted(by: { $0.name < $1.name }) {
                lines.append(
                    "  attribute \(entity.name).\(a.name) \(a.attributeType.rawValue) optional=\(a.isOptional) transient=\(a.isTransient) default=\(a.defaultValue) min=\(a.minValue.map { "\($0)" } ?? "-") max=\(a.maxValue.map { "\($0)" } ?? "-") renaming=\(a.renamingIdentifier ?? "-") modifier=\(a.versionHashModifier ?? "-") userInfo=\(userInfo(a.userInfo)) transformer=\(a.valueTransformerName ?? "-") external=\(a.allowsExternalBinaryDataStorage)"
                )
            }
            for r in entity.ownRelationships.sorted(by: { $0.name < $1.name }) {
                lines.append(
                    "  relationship \(entity.name).\(r.name) -> \(r.destinationEntityName) inverse=\(r.inverseName ?? "-") toMany=\(r.isToMany) ordered=\(r.isOrdered) min=\(r.minCount) max=\(r.maxCount) rule=\(r.deleteRule.rawValue) optional=\(r.isOptional) transient=\(r.isTransient) renaming=\(r.renamingIdentifier ?? "-") modifier=\(r.versionHashModifier ?? "-") userInfo=\(userInfo(r.userInfo))"
                )
            }
        }
        return lines
    }

    private static func userInfo(_ info: [String: String]) -> String {
        return "{" + info.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",") + "}"
    }

    /// The lines of `a` missing from `b` and those of `b` missing from `a`, for failure messages.
    static func difference(_ a: ManagedObjectModel, _ b: ManagedObjectModel) -> String {
        let la = lines(a)
        let lb = lines(b)
        let onlyA = la.filter { !lb.contains($0) }
        let onlyB = lb.filter { !la.contains($0) }
        return "only in the first:\n" + onlyA.joined(separator: "\n") + "\nonly in the second:\n"
            + onlyB.joined(separator: "\n")
    }
}
