/// The user info of entity and property mappings (Core Data's `NSEntityMapping.userInfo` and
/// `NSPropertyMapping.userInfo`): values keep their types — text, integers, doubles, decimals,
/// booleans, dates, data, UUIDs and URIs — as Xcode archives them and as the mapping JSON writes them.
package enum MappingUserInfo {
    /// The JSON form of one value: strings, numbers and booleans as themselves; the types JSON has
    /// no literal for as a one-member object naming the type (`{"date": "2024-05-01T12:00:00Z"}`,
    /// `{"data": "<base64>"}`, `{"decimal": "1.25"}`, `{"uuid": "…"}`, `{"uri": "…"}`).
    package static func json(_ value: Value) -> JSON {
        switch value {
        case .string(let s): return .string(s)
        case .integer(let i): return .integer(i)
        case .double(let d): return d.isFinite ? .double(d) : .object([("double", .string(String(d)))])
        case .bool(let b): return .bool(b)
        case .date(let d):
            let text = DateConversion.formatISO8601(d)
            // A date the text keeps to the millisecond is written as text, any other as its seconds since 2001.
            return .object([("date", DateConversion.parseISO8601(text) == d ? .string(text) : .double(d))])
        case .binary(let bytes): return .object([("data", .string(Base64.encode(bytes)))])
        case .decimal(let s): return .object([("decimal", .string(s))])
        case .uuid(let bytes): return .object([("uuid", .string(Value.uuidString(bytes)))])
        case .uri(let s): return .object([("uri", .string(s))])
        case .null, .object, .collection, .dictionary, .migrationManager: return .null
        }
    }

    /// A user info dictionary as a JSON object, keys sorted.
    package static func json(_ info: [String: Value]) -> JSON {
        .object(info.sorted { $0.key < $1.key }.map { (key: $0.key, value: json($0.value)) })
    }

    /// One value of the JSON form; nil (with the reason) when it is none of the forms `json(_:)` writes.
    package static func value(_ json: JSON) -> (value: Value?, problem: String?) {
        switch json {
        case .string(let s): return (.string(s), nil)
        case .integer(let i): return (.integer(i), nil)
        case .double(let d): return (.double(d), nil)
        case .bool(let b): return (.bool(b), nil)
        case .object(let members) where members.count == 1:
            let (type, content) = (members[0].key, members[0].value)
            switch (type, content) {
            case ("date", .string(let text)):
                guard let d = DateConversion.parseISO8601(text) else {
                    return (nil, "'\(text)' is not an ISO 8601 date")
                }
                return (.date(d), nil)
            case ("date", .integer(let i)): return (.date(Double(i)), nil)
            case ("date", .double(let d)): return (.date(d), nil)
            case ("data", .string(let text)):
                guard let bytes = Base64.decode(text) else { return (nil, "the data is not base64") }
                return (.binary(bytes), nil)
            case ("decimal", .string(let text)):
                guard Double(text) != nil else { return (nil, "'\(text)' is not a decimal number") }
                return (.decimal(text), nil)
            case ("decimal", .integer(let i)): return (.decimal(String(i)), nil)
            case ("uuid", .string(let text)):
                guard let bytes = Value.uuidBytes(text) else { return (nil, "'\(text)' is not a UUID") }
                return (.uuid(bytes), nil)
            case ("uri", .string(let text)): return (.uri(text), nil)
            case ("double", .string(let text)):
                guard let d = Double(text) else { return (nil, "'\(text)' is not a number") }
                return (.double(d), nil)
            default: break
            }
            return (nil, "must be a string, number, boolean or {\"date\"|\"data\"|\"decimal\"|\"uuid\"|\"uri\": text}")
        default:
            return (nil, "must be a string, number, boolean or {\"date\"|\"data\"|\"decimal\"|\"uuid\"|\"uri\": text}")
        }
    }

    /// A value as text, as the text getters of the C API give it: strings as they are, numbers in
    /// decimal, booleans `YES`/`NO`, dates in ISO 8601, data in base64, UUIDs in their 8-4-4-4-12 form.
    package static func text(_ value: Value) -> String {
        switch value {
        case .date(let d): return DateConversion.formatISO8601(d)
        case .binary(let bytes): return Base64.encode(bytes)
        default: return value.description
        }
    }
}

extension JSONReader {
    /// A mapping's `userInfo` object, each value typed as `MappingUserInfo.value(_:)` reads it.
    mutating func mappingUserInfo(_ key: String = "userInfo") -> [String: Value] {
        guard let v = value(key) else { return [:] }
        guard let members = v.objectValue else {
            fail(key, "'\(key)' must be an object, not \(v.typeName)")
            return [:]
        }
        var info: [String: Value] = [:]
        for (k, member) in members {
            let (value, problem) = MappingUserInfo.value(member)
            if let value {
                info[k] = value
                continue
            }
            problems.append(
                MigrationError(
                    code, "userInfo value '\(k)' \(problem ?? "is not understood")", path: memberPath(key) + "." + k))
        }
        return info
    }
}
