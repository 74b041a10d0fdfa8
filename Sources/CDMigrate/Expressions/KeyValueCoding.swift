/// Key-value coding on values (`valueForKey:` / `valueForKeyPath:`), as the key paths of
/// expressions apply it: instances answer their properties, collections map the key over their
/// members (flattening, as KVC does for to-many paths) or apply a collection operator
/// (`@count`, `@sum`, `@avg`, `@min`, `@max`, `@unionOfObjects`, `@distinctUnionOfObjects`,
/// `@unionOfArrays`, `@distinctUnionOfArrays`, `@unionOfSets`, `@distinctUnionOfSets`), other
/// values answer their zero-argument selectors (`name.length`, `flag.boolValue`). Nil stays nil.
enum KeyValueCoding {
    static func value(_ start: Value, keys: ArraySlice<String>) throws -> Value {
        guard let key = keys.first else { return start }
        let rest = keys.dropFirst()
        switch start {
        case .null:
            return .null
        case .object(let object):
            let next: Value
            do {
                next = try object.value(forKey: key)
            } catch let error as MigrationError where error.code == .invalidArgument {
                // An unknown key is the expression's fault; store errors keep their own code.
                throw MigrationError(.expressionEvaluation, error.message)
            }
            return try value(next, keys: rest)
        case .collection(let items):
            if key.hasPrefix("@") { return try collectionOperator(key, items, rest: rest) }
            var result: [Value] = []
            result.reserveCapacity(items.count)
            for item in items {
                let v = try value(item, keys: keys)
                if case .collection(let inner) = v { result += inner } else if !v.isNull { result.append(v) }
            }
            return .collection(result)
        default:
            if key.hasPrefix("@") { return try collectionOperator(key, [start], rest: rest) }
            return try value(try SelectorTable.perform(key, on: start, arguments: []), keys: rest)
        }
    }

    /// `@op.rest`: the operator applies to the values of `rest` over the members.
    private static func collectionOperator(_ op: String, _ items: [Value], rest: ArraySlice<String>) throws -> Value {
        if op == "@count" && rest.isEmpty { return .integer(Int64(items.count)) }
        let operands = rest.isEmpty ? items : try value(.collection(items), keys: rest).elements
        switch op {
        case "@count": return .integer(Int64(operands.count))
        case "@sum": return try Aggregates.sum(operands)
        case "@avg": return try Aggregates.average(operands) ?? .integer(0)
        case "@min": return try Aggregates.extreme(operands, max: false)
        case "@max": return try Aggregates.extreme(operands, max: true)
        // The members' values are flattened already (a to-many path), so the union of their
        // arrays or sets is the union of their objects.
        case "@unionOfObjects", "@unionOfArrays": return .collection(operands)
        case "@distinctUnionOfObjects", "@distinctUnionOfArrays", "@unionOfSets", "@distinctUnionOfSets":
            return .collection(Aggregates.distinct(operands))
        default:
            throw MigrationError(.expressionEvaluation, "unknown collection operator '\(op)'")
        }
    }

    /// The first of `keys` that a value of an attribute of `type` does not answer, or nil when
    /// every key is a message its values answer (`boolValue`, `length`, `@count`, …). Types
    /// whose values are not known before the run (transformable, undefined) answer everything.
    static func unansweredKey(_ keys: ArraySlice<String>, afterValueOf type: AttributeType) -> String? {
        guard let sample = sampleValue(of: type) else { return nil }
        var value = sample
        for key in keys {
            do {
                value = try Self.value(value, keys: [key][...])
            } catch {
                return key
            }
            if value.isNull { return nil }
        }
        return nil
    }

    private static func sampleValue(of type: AttributeType) -> Value? {
        switch type {
        case .integer16, .integer32, .integer64: return .integer(1)
        case .double, .float: return .double(1)
        case .decimal: return .decimal("1")
        case .boolean: return .bool(true)
        case .string: return .string("1")
        case .date: return .date(0)
        case .binary: return .binary([1])
        case .uuid: return .uuid([UInt8](repeating: 1, count: 16))
        case .uri: return .uri("https://example.org")
        case .transformable, .undefined, .objectID, .composite: return nil
        }
    }
}
