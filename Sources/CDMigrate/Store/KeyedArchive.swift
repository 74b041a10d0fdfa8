/// An NSKeyedArchiver archive, read without Foundation: the binary property list with
/// `$archiver`, `$top` and `$objects`, whose objects point at each other through UIDs and name
/// their class through `$class` (`$classname`, `$classes`).
///
/// Foundation's plain classes decode into `ArchiveValue`s (NSString, NSNumber, NSData, NSDate,
/// NSUUID, NSURL, NSNull, NSArray, NSSet, NSOrderedSet, NSDictionary and their mutable and
/// private subclasses); any other class stays an `ArchivedObject`, read key by key by whoever
/// knows it (the compiled-model reader, a mapping-model reader).
///
/// Malformed archives are errors with the given code, naming the object and key at fault:
/// never a trap. Containers are memoised by UID and a container that contains itself is an
/// error, so cyclic or deeply nested graphs cannot recurse without bound.
package final class KeyedArchive {
    /// A UID: the index of an object in `$objects`.
    package struct Reference: Hashable {
        package let index: Int
        package init(_ index: Int) { self.index = index }
    }

    /// The error code used for everything wrong with this archive.
    package let code: MigrationError.Code
    /// What the archive is, for messages ("the compiled model 'X.mom'").
    package let what: String
    /// `$objects`.
    package let objects: [PropertyListValue]
    /// `$top`: the archive's named roots (`root` for NSKeyedArchiver's `archivedData(withRootObject:)`).
    package let top: [(key: String, value: PropertyListValue)]

    /// Containers deeper than this are rejected.
    static let maximumDepth = 256

    private var decoded: [Int: ArchiveValue] = [:]
    private var decoding: Set<Int> = []

    /// Reads an archive from the bytes of a binary property list.
    package convenience init(bytes: [UInt8], code: MigrationError.Code, what: String) throws {
        let plist: PropertyListValue
        do {
            plist = try BinaryPropertyList.decode(bytes)
        } catch let error as MigrationError {
            throw MigrationError(code, "\(what) is not a readable binary property list: \(error.message)")
        }
        try self.init(plist: plist, code: code, what: what)
    }

    /// Reads an archive from a decoded property list.
    package init(plist: PropertyListValue, code: MigrationError.Code, what: String) throws {
        self.code = code
        self.what = what
        guard case .dictionary = plist else {
            throw MigrationError(code, "\(what) is not a keyed archive: its top level is not a dictionary")
        }
        guard case .string(let archiver)? = plist["$archiver"] else {
            throw MigrationError(code, "\(what) is not a keyed archive: it has no '$archiver'")
        }
        guard archiver == "NSKeyedArchiver" else {
            throw MigrationError(code, "\(what) is archived by '\(archiver)', not NSKeyedArchiver")
        }
        guard case .dictionary(let top)? = plist["$top"] else {
            throw MigrationError(code, "\(what) is not a keyed archive: '$top' is missing or not a dictionary")
        }
        guard case .array(let objects)? = plist["$objects"], !objects.isEmpty else {
            throw MigrationError(code, "\(what) is not a keyed archive: '$objects' is missing, empty or not an array")
        }
        self.top = top
        self.objects = objects
    }

    package func error(_ message: String) -> MigrationError {
        return MigrationError(code, "\(what): \(message)")
    }

    // MARK: References

    /// The reference a UID value holds.
    package func reference(_ value: PropertyListValue, at position: @autoclosure () -> String) throws -> Reference {
        guard case .uid(let uid) = value else {
            throw error("\(position()) is a \(Self.kind(of: value)), not an object reference")
        }
        guard uid < UInt64(objects.count) else {
            throw error("\(position()) refers to object \(uid), but the archive has \(objects.count) objects")
        }
        return Reference(Int(uid))
    }

    /// A top-level object (`root` by default).
    package func topReference(_ key: String = "root") throws -> Reference {
        guard let value = top.first(where: { $0.key == key })?.value else { throw error("'$top' has no '\(key)'") }
        return try reference(value, at: "'$top.\(key)'")
    }

    /// The archived object (an instance of a class with its keys) a reference points to.
    package func object(_ reference: Reference) throws -> ArchivedObject {
        let index = reference.index
        guard index >= 0, index < objects.count else { throw error("there is no object \(index)") }
        guard case .dictionary(let fields) = objects[index], let classValue = objects[index]["$class"] else {
            throw error("object \(index) is a \(Self.kind(of: objects[index])), not an archived object with a '$class'")
        }
        let (className, classes) = try classDescription(classValue, of: index)
        return ArchivedObject(
            archive: self, reference: reference, className: className, classes: classes, fields: fields)
    }

    /// `$classname` and `$classes` of the class an object's `$class` points to.
    private func classDescription(_ value: PropertyListValue, of index: Int) throws -> (String, [String]) {
        let classReference = try reference(value, at: "'$class' of object \(index)")
        let classObject = objects[classReference.index]
        guard case .string(let name)? = classObject["$classname"] else {
            throw error("the class of object \(index) (object \(classReference.index)) has no '$classname'")
        }
        var classes: [String] = []
        if case .array(let list)? = classObject["$classes"] {
            for item in list { if case .string(let s) = item { classes.append(s) } }
        }
        if classes.isEmpty { classes = [name] }
        return (name, classes)
    }

    // MARK: Values

    /// A field's value: plain scalars as they are, references decoded.
    package func value(_ raw: PropertyListValue, at position: @autoclosure () -> String) throws -> ArchiveValue {
        return try value(raw, at: position(), depth: 0)
    }

    /// The value an object reference stands for.
    package func decode(_ reference: Reference) throws -> ArchiveValue {
        return try decode(reference, depth: 0)
    }

    private func value(_ raw: PropertyListValue, at position: @autoclosure () -> String, depth: Int) throws
        -> ArchiveValue
    {
        if let plain = ArchiveValue(plain: raw) { return plain }
        switch raw {
        case .uid: return try decode(try reference(raw, at: position()), depth: depth)
        case .array(let items):
            guard depth < KeyedArchive.maximumDepth else {
                throw error("\(position()) nests deeper than \(KeyedArchive.maximumDepth) levels")
            }
            var result: [ArchiveValue] = []
            result.reserveCapacity(items.count)
            for (i, item) in items.enumerated() {
                result.append(try value(item, at: "\(position())[\(i)]", depth: depth + 1))
            }
            return .array(result)
        default:
            throw error("\(position()) is an inline dictionary, which keyed archives do not hold")
        }
    }

    private func decode(_ reference: Reference, depth: Int) throws -> ArchiveValue {
        let index = reference.index
        if index == 0 { return .null }
        if let done = decoded[index] { return done }
        guard index < objects.count else { throw error("there is no object \(index)") }
        if let plain = ArchiveValue(plain: objects[index]) { return plain }
        switch objects[index] {
        case .array, .uid:
            throw error("object \(index) is a bare \(Self.kind(of: objects[index])), not an archived object")
        default:
            break  // a dictionary: an archived object, read below
        }
        let object = try self.object(reference)
        guard let kind = FoundationKind(classes: object.classes) else {
            return .object(reference, className: object.className)
        }
        guard depth < KeyedArchive.maximumDepth else {
            throw error("object \(index) (\(object.className)) nests deeper than \(KeyedArchive.maximumDepth) levels")
        }
        guard decoding.insert(index).inserted else {
            throw error("object \(index) (\(object.className)) contains itself")
        }
        defer { decoding.remove(index) }
        let result = try decodeFoundation(object, kind: kind, depth: depth + 1)
        decoded[index] = result
        return result
    }

    /// The Foundation classes decoded into values, found anywhere in an object's `$classes`.
    private enum FoundationKind {
        case knownKeysDictionary, dictionary, array, string, data, date, uuid, url, null, decimalNumber

        init?(classes: [String]) {
            for name in classes {
                switch name {
                case "NSKnownKeysDictionary1":
                    self = .knownKeysDictionary
                    return
                case "NSDecimalNumber":
                    self = .decimalNumber
                    return
                case "NSDictionary":
                    self = .dictionary
                    return
                case "NSArray", "NSSet", "NSOrderedSet":
                    self = .array
                    return
                case "NSString":
                    self = .string
                    return
                case "NSData":
                    self = .data
                    return
                case "NSDate":
                    self = .date
                    return
                case "NSUUID":
                    self = .uuid
                    return
                case "NSURL":
                    self = .url
                    return
                case "NSNull":
                    self = .null
                    return
                default: continue
                }
            }
            return nil
        }
    }

    private func decodeFoundation(_ object: ArchivedObject, kind: FoundationKind, depth: Int) throws -> ArchiveValue {
        func elements(_ key: String) throws -> [ArchiveValue] {
            guard let raw = object.raw(key) else { return [] }
            guard case .array(let items) = raw else {
                throw object.error(key, "is a \(Self.kind(of: raw)), not an array")
            }
            var result: [ArchiveValue] = []
            result.reserveCapacity(items.count)
            for (i, item) in items.enumerated() {
                result.append(
                    try value(
                        item, at: "object \(object.reference.index) (\(object.className)) '\(key)'[\(i)]", depth: depth)
                )
            }
            return result
        }
        func field(_ key: String) throws -> ArchiveValue {
            guard let raw = object.raw(key) else { return .null }
            return try value(raw, at: "object \(object.reference.index) (\(object.className)) '\(key)'", depth: depth)
        }
        switch kind {
        case .dictionary:
            let keys = try elements("NS.keys")
            let values = try elements("NS.objects")
            guard keys.count == values.count else {
                throw object.error("NS.keys", "has \(keys.count) keys for \(values.count) objects")
            }
            return .dictionary(zip(keys, values).map { (key: $0, value: $1) })
        case .knownKeysDictionary:
            // Core Data's NSKnownKeysDictionary1: the keys in its mapping strategy, the values in
            // slots, unused slots holding an empty token.
            guard case .object(let strategyReference, _) = try field("searchMapping") else {
                throw object.error("searchMapping", "is not an archived mapping strategy")
            }
            let strategy = try self.object(strategyReference)
            guard case .array(let keys) = try value(strategy.raw("keys") ?? .uid(0), at: "the known keys", depth: depth)
            else {
                throw strategy.error("keys", "is not an array")
            }
            guard case .array(let values) = try field("values") else { throw object.error("values", "is not an array") }
            guard keys.count == values.count else {
                throw object.error("values", "has \(values.count) values for \(keys.count) keys")
            }
            let empty = try field("emptyToken")
            return .dictionary(zip(keys, values).filter { empty.isNull || $0.1 != empty }.map { (key: $0, value: $1) })
        case .array:
            return .array(try elements("NS.objects"))
        case .string:
            switch try field("NS.string") {
            case .string(let s): return .string(s)
            case .null:
                if case .data(let bytes) = try field("NS.bytes") {
                    return .string(String(decoding: bytes, as: UTF8.self))
                }
                return .string("")
            case let other: throw object.error("NS.string", "is a \(other.typeName), not a string")
            }
        case .data:
            switch try field("NS.data") {
            case .data(let bytes): return .data(bytes)
            case .null: return .data([])
            case let other: throw object.error("NS.data", "is a \(other.typeName), not data")
            }
        case .date:
            switch try field("NS.time") {
            case .real(let d): return .date(d)
            case .integer(let i): return .date(Double(i))
            case .null: return .date(0)
            case let other: throw object.error("NS.time", "is a \(other.typeName), not a number")
            }
        case .uuid:
            guard case .data(let bytes) = try field("NS.uuidbytes"), bytes.count == 16 else {
                throw object.error("NS.uuidbytes", "is not 16 bytes")
            }
            return .uuid(bytes)
        case .url:
            guard case .string(let relative) = try field("NS.relative") else {
                throw object.error("NS.relative", "is not a string")
            }
            if case .url(let base) = try field("NS.base"), !relative.contains("://") {
                return .url(base.hasSuffix("/") || relative.hasPrefix("/") ? base + relative : base + "/" + relative)
            }
            return .url(relative)
        case .null:
            return .null
        case .decimalNumber:
            return .decimal(try decimalText(object))
        }
    }

    /// NSDecimalNumber's keyed form: `NS.mantissa` (16 bytes, `NS.length` 16-bit words in the
    /// byte order of `NS.mantissa.bo`, 1 little-endian), `NS.exponent`, `NS.negative`.
    private func decimalText(_ object: ArchivedObject) throws -> String {
        let exponent = Int(clamping: try object.integer("NS.exponent") ?? 0)
        let negative = try object.bool("NS.negative")
        let length = Int(clamping: try object.integer("NS.length") ?? 0)
        let littleEndian = (try object.integer("NS.mantissa.bo") ?? 1) == 1
        guard case .data(let bytes) = try object.value("NS.mantissa"), length >= 0, length <= 8,
            bytes.count >= 2 * length
        else {
            throw object.error("NS.mantissa", "is not \(max(0, min(length, 8)) * 2) bytes of mantissa")
        }
        guard exponent >= -128, exponent <= 127 else {
            throw object.error("NS.exponent", "is \(exponent), outside -128…127")
        }
        if length == 0 { return negative ? "NaN" : "0" }
        var words: [UInt32] = (0..<length).map { i in
            let a = UInt32(bytes[2 * i])
            let b = UInt32(bytes[2 * i + 1])
            return littleEndian ? a | b << 8 : a << 8 | b
        }
        // The 128-bit mantissa in decimal, by repeated division of its 16-bit words (most significant last).
        var digits: [UInt8] = []
        while words.contains(where: { $0 != 0 }) {
            var remainder: UInt32 = 0
            for i in words.indices.reversed() {
                let current = remainder << 16 | words[i]
                words[i] = current / 10
                remainder = current % 10
            }
            digits.append(UInt8(remainder))
        }
        var text = String(digits.reversed().map { Character(Unicode.Scalar(48 + $0)) })
        if text.isEmpty { text = "0" }
        if exponent > 0 {
            text += String(repeating: "0", count: exponent)
        } else if exponent < 0 {
            let shift = -exponent
            if text.count <= shift { text = String(repeating: "0", count: shift - text.count + 1) + text }
            text.insert(".", at: text.index(text.endIndex, offsetBy: -shift))
            while text.hasSuffix("0") { text.removeLast() }
            if text.hasSuffix(".") { text.removeLast() }
        }
        return (negative && text != "0" ? "-" : "") + text
    }

    /// Every class instantiated in the archive with the union of its instances' keys, by class
    /// name: what a reader for a new archive kind needs to know first.
    package func classKeys() -> [(className: String, keys: [String])] {
        var keysByClass: [String: Set<String>] = [:]
        for index in objects.indices {
            guard case .dictionary(let fields) = objects[index], objects[index]["$class"] != nil,
                let object = try? self.object(Reference(index))
            else { continue }
            keysByClass[object.className, default: []].formUnion(fields.map { $0.key }.filter { $0 != "$class" })
        }
        return keysByClass.sorted { $0.key < $1.key }.map { (className: $0.key, keys: $0.value.sorted()) }
    }

    static func kind(of value: PropertyListValue) -> String {
        switch value {
        case .string: return "string"
        case .integer: return "integer"
        case .real: return "real"
        case .bool: return "boolean"
        case .date: return "date"
        case .data: return "data"
        case .array: return "array"
        case .dictionary: return "dictionary"
        case .uid: return "object reference"
        }
    }
}
