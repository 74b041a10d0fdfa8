import CJansson

/// A JSON document as a Swift value. Parsed and printed by jansson, so the engine needs no
/// Foundation; objects keep their keys in document order (entity and mapping order matter).
package enum JSON: Equatable {
    case null
    case bool(Bool)
    case integer(Int64)
    case double(Double)
    case string(String)
    case array([JSON])
    case object([(key: String, value: JSON)])

    package static func == (lhs: JSON, rhs: JSON) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case (.bool(let a), .bool(let b)): return a == b
        case (.integer(let a), .integer(let b)): return a == b
        case (.double(let a), .double(let b)): return a == b
        case (.string(let a), .string(let b)): return a == b
        case (.array(let a), .array(let b)): return a == b
        case (.object(let a), .object(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        default: return false
        }
    }

    /// Parses JSON text; a syntax error names the line and column.
    package static func parse(_ text: String) throws -> JSON {
        var error = json_error_t()
        var bytes = Array(text.utf8)
        let count = bytes.count
        bytes.append(0)  // never empty, so the buffer has an address
        let root: UnsafeMutablePointer<json_t>? = bytes.withUnsafeBufferPointer { buffer in
            buffer.baseAddress.flatMap { base in
                base.withMemoryRebound(to: CChar.self, capacity: buffer.count) {
                    // Duplicate keys are refused: the later one would silently win, hiding a mistake.
                    json_loadb($0, count, Int(JSON_DECODE_ANY | JSON_ALLOW_NUL | JSON_REJECT_DUPLICATES), &error)
                }
            }
        }
        guard let root = root else {
            let reason = withUnsafeBytes(of: error.text) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            throw MigrationError(
                .invalidJSON, "JSON syntax error at line \(error.line), column \(error.column): \(reason)")
        }
        defer { cdm_json_decref(root) }
        return JSON(jansson: root)
    }

    /// Reads and parses a JSON file; a file that is not UTF-8 is refused with the line and byte
    /// offset of its first invalid byte.
    package static func load(path: String) throws -> JSON {
        return try parse(try UTF8Text.decode(try FileIO.readBytes(path: path), file: path, code: .invalidJSON))
    }

    /// Converts a borrowed jansson value.
    package init(jansson value: UnsafeMutablePointer<json_t>) {
        switch cdm_json_typeof(value) {
        case Int32(JSON_OBJECT.rawValue):
            var members: [(key: String, value: JSON)] = []
            var iterator = json_object_iter(value)
            while let it = iterator {
                let key = String(cString: json_object_iter_key(it))
                if let member = json_object_iter_value(it) { members.append((key, JSON(jansson: member))) }
                iterator = json_object_iter_next(value, it)
            }
            // jansson keeps insertion order since 2.8.
            self = .object(members)
        case Int32(JSON_ARRAY.rawValue):
            var items: [JSON] = []
            let count = json_array_size(value)
            items.reserveCapacity(count)
            for i in 0..<count { if let item = json_array_get(value, i) { items.append(JSON(jansson: item)) } }
            self = .array(items)
        case Int32(JSON_STRING.rawValue):
            let length = json_string_length(value)
            let bytes = UnsafeRawBufferPointer(start: json_string_value(value), count: length)
            self = .string(String(decoding: bytes, as: UTF8.self))
        case Int32(JSON_INTEGER.rawValue): self = .integer(Int64(json_integer_value(value)))
        case Int32(JSON_REAL.rawValue): self = .double(json_real_value(value))
        case Int32(JSON_TRUE.rawValue): self = .bool(true)
        case Int32(JSON_FALSE.rawValue): self = .bool(false)
        default: self = .null
        }
    }

    /// A new jansson value (a new reference: the caller owns it and must `json_decref` it).
    package func makeJansson() -> UnsafeMutablePointer<json_t>? {
        switch self {
        case .null: return json_null()
        case .bool(let b): return b ? json_true() : json_false()
        case .integer(let i): return json_integer(json_int_t(i))
        case .double(let d): return d.isFinite ? json_real(d) : json_null()
        case .string(let s):
            var bytes = Array(s.utf8)
            let count = bytes.count
            bytes.append(0)
            return bytes.withUnsafeBufferPointer { buffer in
                buffer.baseAddress.flatMap { base in
                    base.withMemoryRebound(to: CChar.self, capacity: buffer.count) { json_stringn($0, count) }
                }
            }
        case .array(let items):
            guard let array = json_array() else { return nil }
            for item in items { if let v = item.makeJansson() { json_array_append_new(array, v) } }
            return array
        case .object(let members):
            guard let object = json_object() else { return nil }
            for (key, value) in members { if let v = value.makeJansson() { json_object_set_new(object, key, v) } }
            return object
        }
    }

    /// Serialises to JSON text (compact, or indented by `indent` spaces), keys in document order.
    package func serialized(indent: Int = 0) -> String {
        guard let value = makeJansson() else { return "null" }
        defer { cdm_json_decref(value) }
        var flags = Int(JSON_ENCODE_ANY | JSON_PRESERVE_ORDER)
        if indent > 0 { flags |= min(indent, 31) } else { flags |= Int(JSON_COMPACT) }
        guard let text = json_dumps(value, flags) else { return "null" }
        defer { free(text) }
        return String(cString: text)
    }

    // MARK: Access

    package subscript(key: String) -> JSON? {
        if case .object(let members) = self { return members.first(where: { $0.key == key })?.value }
        return nil
    }

    package var stringValue: String? { if case .string(let s) = self { return s } else { return nil } }
    package var boolValue: Bool? { if case .bool(let b) = self { return b } else { return nil } }
    package var arrayValue: [JSON]? { if case .array(let a) = self { return a } else { return nil } }
    package var objectValue: [(key: String, value: JSON)]? {
        if case .object(let o) = self { return o } else { return nil }
    }
    package var integerValue: Int64? {
        switch self {
        case .integer(let i): return i
        case .double(let d) where d == d.rounded() && abs(d) < 9e18: return Int64(d)
        default: return nil
        }
    }
    package var doubleValue: Double? {
        switch self {
        case .integer(let i): return Double(i)
        case .double(let d): return d
        default: return nil
        }
    }
    package var isNull: Bool { self == .null }

    package var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "boolean"
        case .integer, .double: return "number"
        case .string: return "string"
        case .array: return "array"
        case .object: return "object"
        }
    }
}
