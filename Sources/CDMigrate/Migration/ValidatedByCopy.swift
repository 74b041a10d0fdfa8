/// The destination rows whose attribute rules a checked SQL copy has already enforced, so that
/// stage 3's store-wide validation (`DestinationValidation`) need not scan them again.
///
/// A declarative copy (`DeclarativeMappingSQL`) reads each source value through its per-row
/// `cdm_plain` check. Where a destination attribute's value is a source column copied as it is, the
/// check also tests the destination's rules that stage 3 would test — present when the attribute
/// is required, within the range of its integer type — and records any row that breaks one
/// (`StoredValueRule.ValueCounts.rulesBroken`); where it is a constant, the rules are tested once
/// when the copy is planned. When no row broke a rule and the copy wrote the values bare (no
/// conversion), the keys it wrote are recorded here with the attributes it covered.
///
/// Stage 3 then scans only the rows outside those keys for those attributes. Rows made or changed
/// one at a time, by a policy or a batch, are never covered: an entity written by instance
/// (`PersistentStore.entitiesWrittenByInstance`) is validated whole, and any other writer's rows
/// have keys of their own. Attributes with a minimum or maximum of their own, derived attributes and
/// computed values (arithmetic) are not covered either: stage 3 checks them as before. Either way
/// the errors, their codes and messages are those of a full scan, which stage 3 runs as soon as
/// any row breaks a rule.
struct ValidatedByCopy {
    struct Rows {
        let keys: ClosedRange<Int64>
        let attributes: Set<String>
    }

    /// Per destination entity, the rows covered.
    private(set) var rows: [ObjectIdentifier: [Rows]] = [:]

    mutating func record(_ entity: EntityDescription, keys: ClosedRange<Int64>, attributes: Set<String>) {
        guard !attributes.isEmpty else { return }
        rows[ObjectIdentifier(entity), default: []].append(Rows(keys: keys, attributes: attributes))
    }

    /// The key ranges of `entity`'s rows whose `attribute` needs no scan, sorted and merged.
    func coveredKeys(of entity: EntityDescription, attribute: String) -> [ClosedRange<Int64>] {
        let ranges = (rows[ObjectIdentifier(entity)] ?? []).filter { $0.attributes.contains(attribute) }.map { $0.keys }
            .sorted { $0.lowerBound < $1.lowerBound }
        var merged: [ClosedRange<Int64>] = []
        for range in ranges {
            if let last = merged.last, range.lowerBound <= last.upperBound || range.lowerBound - 1 == last.upperBound {
                merged[merged.count - 1] = last.lowerBound...max(last.upperBound, range.upperBound)
            } else {
                merged.append(range)
            }
        }
        return merged
    }

    /// The key ranges outside `covered` (sorted, merged): the rows left to scan.
    static func gaps(outside covered: [ClosedRange<Int64>]) -> [ClosedRange<Int64>] {
        var gaps: [ClosedRange<Int64>] = []
        var next: Int64? = Int64.min
        for range in covered {
            guard let low = next else { break }
            if range.lowerBound > low { gaps.append(low...(range.lowerBound - 1)) }
            next = range.upperBound == Int64.max ? nil : range.upperBound + 1
        }
        if let low = next { gaps.append(low...Int64.max) }
        return gaps
    }

    /// Whether a constant written into every row meets the rules stage 3 checks for `attribute`.
    static func constantMeetsRules(_ value: Value, of attribute: AttributeDescription) -> Bool {
        if case .null = value { return attribute.isOptional }
        guard attribute.attributeType.isNumeric else { return true }
        let number: Double
        switch value {
        case .integer(let i): number = Double(i)
        case .double(let d): number = d
        case .bool(let b): number = b ? 1 : 0
        default: return false
        }
        let bounds = DestinationValidation.bounds(of: attribute)
        if let lower = bounds.lower, number < lower { return false }
        if let upper = bounds.upper, number > upper { return false }
        return true
    }

    /// The `cdm_plain` code checking a source column of type `source` copied as it is into
    /// `attribute`, with the rules stage 3 checks for it; nil when the check cannot cover them.
    static func ruleCode(copying source: AttributeType, into attribute: AttributeDescription) -> UInt8? {
        guard attribute.derivationExpression == nil, attribute.minValue == nil, attribute.maxValue == nil,
            let plain = StoredValueRule.plainCode(source)
        else { return nil }
        var code = plain
        if let range = attribute.attributeType.integerRange {
            switch plain {
            case UInt8(ascii: "b"): break  // 0 or 1: within every integer range
            case UInt8(ascii: "i"):
                if range == Int64(Int16.min)...Int64(Int16.max) {
                    code = UInt8(ascii: "h")
                } else if range == Int64(Int32.min)...Int64(Int32.max) {
                    code = UInt8(ascii: "w")
                }
            default: return nil
            }
        }
        return attribute.isOptional ? code : StoredValueRule.requiredCode(code)
    }
}
