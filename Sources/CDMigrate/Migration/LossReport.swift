/// What a migration did not carry from the source into the destination, per entity and property,
/// with counts: part of every `MigrationReport` (docs/loss-report.md lists its keys, which the C
/// API's report JSON, the Python binding and `cdmigrate --json` share).
///
/// Core Data counterpart: none. Core Data drops what a mapping leaves behind without a word
/// (an inferred step drops a removed attribute's values; a custom mapping without an expression
/// for an attribute drops it as well); cdmigrate counts it, and with
/// `MigrationManager.failsOnUnintendedLoss` refuses to hand over a store that lost anything the
/// mapping does not declare as intended.
public struct LossReport: Equatable {
    /// What was not carried.
    public enum Kind: String, CaseIterable, Equatable {
        /// Non-nil values of a source attribute that no property mapping of the entity mapping reads
        /// (a removed attribute, a mapping without an expression for it). `count`: instances with a value.
        case attribute
        /// Source instances no entity mapping took. `count`: instances; no property, no entity mapping.
        case instances
        /// Links of a source relationship that no relationship mapping reads (neither this side
        /// nor, through its inverse, the other). `count`: links (non-nil to-ones, to-many members).
        case relationship
        /// A to-many mapped from the source relationship of the same name that came out shorter:
        /// `count`: links of the source instances the mapping took that their destinations lack.
        case toMany
        /// An attribute mapped from the source attribute of the same name that is nil in the
        /// destination where the source had a value. `count`: instances.
        case nilled
        /// External binary data (a value kept in a file beside the store) whose file was missing.
        /// `count`: values. Reserved: the reader of external binary data reports it.
        case externalData
    }

    /// One line of the report.
    public struct Loss: Equatable {
        /// What was not carried.
        public var kind: Kind
        /// The source entity (for `.instances`, the entity of the instances no mapping took).
        public var entityName: String
        /// The source property, nil for `.instances`.
        public var propertyName: String?
        /// The entity mapping that left it behind, nil for `.instances`.
        public var entityMappingName: String?
        /// The pass (index of the mapping model) of that entity mapping, nil for `.instances`.
        public var pass: Int?
        /// How many (see `Kind`).
        public var count: Int
        /// The custom policy of that entity mapping, if any: its code may carry what the
        /// property mappings do not read (declare it with `cdmigrate.carriedByPolicy`).
        public var policyName: String? = nil
        /// Whether the mapping declares the loss as intended (`cdmigrate.intendedLosses`, a remove
        /// entity mapping or a source predicate of a written mapping model).
        public var isIntended: Bool

        /// A loss as counted by a migration.
        public init(
            kind: Kind, entityName: String, propertyName: String?, entityMappingName: String?, pass: Int?, count: Int,
            isIntended: Bool
        ) {
            self.kind = kind
            self.entityName = entityName
            self.propertyName = propertyName
            self.entityMappingName = entityMappingName
            self.pass = pass
            self.count = count
            self.isIntended = isIntended
        }

        /// One line for people: "Post.color: 1001 values no property mapping reads (entity mapping 'PostToPost')".
        public var summary: String {
            let subject = propertyName.map { "\(entityName).\($0)" } ?? entityName
            let what: String
            switch kind {
            case .attribute: what = "\(count) value\(count == 1 ? "" : "s") that no property mapping reads"
            case .instances: what = "\(count) instance\(count == 1 ? "" : "s") that no entity mapping took"
            case .relationship: what = "\(count) link\(count == 1 ? "" : "s") that no relationship mapping carries"
            case .toMany: what = "\(count) link\(count == 1 ? "" : "s") missing from the destination's to-many"
            case .nilled: what = "\(count) value\(count == 1 ? "" : "s") nil in the destination but not in the source"
            case .externalData: what = "\(count) external binary value\(count == 1 ? "" : "s") whose file is missing"
            }
            let mapping =
                entityMappingName.map { name in
                    " (entity mapping '\(name)'"
                        + (isIntended ? "" : policyName.map { ", whose policy '\($0)' may carry it" } ?? "") + ")"
                } ?? ""
            return "\(subject): \(what)\(mapping)\(isIntended ? ", intended" : "")"
        }
    }

    /// Every loss, in the order counted: per pass and entity mapping, then the untaken instances.
    public var losses: [Loss] = []

    /// An empty report.
    public init() {}

    /// The losses the mapping does not declare as intended: what `failsOnUnintendedLoss` refuses.
    public var unintended: [Loss] { losses.filter { !$0.isIntended } }

    /// Whether nothing was lost (intended losses included).
    public var isEmpty: Bool { losses.isEmpty }

    /// The report as JSON, the same keys in every host (docs/loss-report.md).
    package var json: JSON {
        .array(
            losses.map { loss in
                var members: [(key: String, value: JSON)] = [
                    ("kind", .string(loss.kind.rawValue)), ("entity", .string(loss.entityName)),
                ]
                if let property = loss.propertyName { members.append(("property", .string(property))) }
                if let mapping = loss.entityMappingName { members.append(("entityMapping", .string(mapping))) }
                if let pass = loss.pass { members.append(("pass", .integer(Int64(pass)))) }
                if let policy = loss.policyName { members.append(("policy", .string(policy))) }
                members.append(("count", .integer(Int64(loss.count))))
                members.append(("intended", .bool(loss.isIntended)))
                return .object(members)
            })
    }

    /// The error of a run that lost what its mapping does not declare (`failsOnUnintendedLoss`).
    func unintendedLossError(step: String? = nil) -> MigrationError? {
        let lines = unintended
        guard !lines.isEmpty else { return nil }
        let shown = lines.prefix(10).map { $0.summary }.joined(separator: "; ")
        let more = lines.count > 10 ? "; and \(lines.count - 10) more" : ""
        let prefix = step.map { "\($0): " } ?? ""
        return MigrationError(
            .migration,
            "\(prefix)the migration would lose data its mapping does not declare as intended, so nothing was written: \(shown)\(more). Declare intended losses with the entity mapping's userInfo key '\(IntendedLosses.userInfoKey)' (docs/loss-report.md)"
        )
    }
}
