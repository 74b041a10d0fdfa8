/// Reads members of a JSON object with their paths, collecting every problem instead of
/// stopping at the first, so a user fixes a document in one round.
struct JSONReader {
    let members: [(key: String, value: JSON)]
    let path: String
    let code: MigrationError.Code
    var problems: [MigrationError] = []
    private var used = Set<String>()

    init(_ json: JSON, path: String, code: MigrationError.Code, what: String) {
        self.path = path
        self.code = code
        if let members = json.objectValue {
            self.members = members
        } else {
            self.members = []
            problems.append(MigrationError(code, "\(what) must be a JSON object, not \(json.typeName)", path: path))
        }
    }

    func memberPath(_ key: String) -> String { path + "." + key }

    mutating func value(_ key: String) -> JSON? {
        used.insert(key)
        guard let v = members.first(where: { $0.key == key })?.value, !v.isNull else { return nil }
        return v
    }

    mutating func fail(_ key: String, _ message: String) {
        problems.append(MigrationError(code, message, path: memberPath(key)))
    }

    mutating func string(_ key: String, required: Bool = false, what: String = "") -> String? {
        guard let v = value(key) else {
            if required { fail(key, "\(what.isEmpty ? "" : what + ": ")'\(key)' is required") }
            return nil
        }
        guard let s = v.stringValue else {
            fail(key, "'\(key)' must be a string, not \(v.typeName)")
            return nil
        }
        return s
    }

    mutating func bool(_ key: String, default defaultValue: Bool) -> Bool {
        guard let v = value(key) else { return defaultValue }
        guard let b = v.boolValue else {
            fail(key, "'\(key)' must be true or false, not \(v.typeName)")
            return defaultValue
        }
        return b
    }

    mutating func integer(_ key: String) -> Int? {
        guard let v = value(key) else { return nil }
        guard let i = v.integerValue, i >= Int64(Int32.min), i <= Int64(Int32.max) else {
            fail(key, "'\(key)' must be an integer")
            return nil
        }
        return Int(i)
    }

    mutating func number(_ key: String) -> Double? {
        guard let v = value(key) else { return nil }
        guard let d = v.doubleValue else {
            fail(key, "'\(key)' must be a number, not \(v.typeName)")
            return nil
        }
        return d
    }

    mutating func array(_ key: String) -> [JSON] {
        guard let v = value(key) else { return [] }
        guard let a = v.arrayValue else {
            fail(key, "'\(key)' must be an array, not \(v.typeName)")
            return []
        }
        return a
    }

    /// A flat string dictionary (Core Data's userInfo as Xcode writes it); numbers and booleans become text.
    mutating func userInfo(_ key: String = "userInfo") -> [String: String] {
        guard let v = value(key) else { return [:] }
        guard let members = v.objectValue else {
            fail(key, "'\(key)' must be an object, not \(v.typeName)")
            return [:]
        }
        var info: [String: String] = [:]
        for (k, value) in members {
            switch value {
            case .string(let s): info[k] = s
            case .integer(let i): info[k] = String(i)
            case .double(let d): info[k] = Value.format(d)
            case .bool(let b): info[k] = b ? "YES" : "NO"
            default:
                problems.append(
                    MigrationError(
                        code, "userInfo value '\(k)' must be a string, number or boolean",
                        path: memberPath(key) + "." + k))
            }
        }
        return info
    }

    /// A version hash given as base64 (Core Data's form) or as 64 hex digits.
    mutating func hash(_ key: String) -> [UInt8]? {
        guard let text = string(key) else { return nil }
        // ASCII hex only (Character.isHexDigit would also take full-width digits).
        let utf8 = Array(text.utf8)
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - 48
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - 87
            case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - 55
            default: return nil
            }
        }
        if utf8.count == 64, utf8.allSatisfy({ nibble($0) != nil }) {
            var bytes: [UInt8] = []
            for i in stride(from: 0, to: 64, by: 2) {
                bytes.append((nibble(utf8[i]) ?? 0) << 4 | (nibble(utf8[i + 1]) ?? 0))
            }
            return bytes
        }
        guard let bytes = Base64.decode(text), bytes.count == 32 else {
            fail(key, "'\(key)' must be 32 bytes in base64 or 64 hex digits")
            return nil
        }
        return bytes
    }

    /// The case `parse` reads from `text` (a member `key`'s value); nil and a problem —
    /// "`unknown`'text' (expected one of …)" — for a name no case has.
    mutating func oneOf<T>(
        _ text: String, _ key: String, _ parse: (String) -> T?, unknown: String, expected names: [String]
    ) -> T? {
        if let value = parse(text) { return value }
        fail(key, "\(unknown) '\(text)' (expected one of \(names.joined(separator: ", ")))")
        return nil
    }

    /// Reports members nobody asked for: they are usually typos of real ones.
    mutating func rejectUnknownKeys(what: String) {
        for (key, _) in members where !used.contains(key) {
            problems.append(MigrationError(code, "unknown key '\(key)' in \(what)", path: memberPath(key)))
        }
    }

    /// Ends reading a whole document (`what`: "the model", named `name`): its unknown keys refused,
    /// then its own problems and those its parts reported (`parts`) thrown as one error.
    mutating func finishDocument(_ what: String, named name: String?, parts: [MigrationError]) throws {
        rejectUnknownKeys(what: what)
        if let error = MigrationError.collecting(
            problems + parts, code: code, summary: "\(what) \(name.map { "'\($0)' " } ?? "")is not valid")
        {
            throw error
        }
    }
}
