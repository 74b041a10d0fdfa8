/// A property list value (what Core Data keeps in `Z_METADATA.Z_PLIST`).
public enum PropertyListValue: Equatable {
    case string(String)
    case integer(Int64)
    case real(Double)
    case bool(Bool)
    /// Seconds since 2001-01-01 UTC.
    case date(Double)
    case data([UInt8])
    case array([PropertyListValue])
    /// Keys in document order.
    case dictionary([(key: String, value: PropertyListValue)])
    /// NSKeyedArchiver's object references (CF$UID).
    case uid(UInt64)

    /// Equal kinds with equal contents; dictionaries compare in key order.
    public static func == (lhs: PropertyListValue, rhs: PropertyListValue) -> Bool {
        switch (lhs, rhs) {
        case (.string(let a), .string(let b)): return a == b
        case (.integer(let a), .integer(let b)): return a == b
        case (.real(let a), .real(let b)): return a == b
        case (.bool(let a), .bool(let b)): return a == b
        case (.date(let a), .date(let b)): return a == b
        case (.data(let a), .data(let b)): return a == b
        case (.array(let a), .array(let b)): return a == b
        case (.uid(let a), .uid(let b)): return a == b
        case (.dictionary(let a), .dictionary(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        default: return false
        }
    }

    /// The value under `key` of a dictionary, nil for a missing key or another kind.
    public subscript(key: String) -> PropertyListValue? {
        if case .dictionary(let members) = self { return members.first(where: { $0.key == key })?.value }
        return nil
    }
}

/// Apple's binary property list format (`bplist00`), read and written without Foundation.
///
/// Layout: the 8-byte header `bplist00`, the objects, a table of object offsets, and a 32-byte
/// trailer (offset size, reference size, object count, top object, offset table position).
/// Every object starts with a marker byte: the high nibble is its kind, the low nibble its size
/// (or 0xF, then the size follows as an integer object).
///
/// `null` and fill markers (which CoreFoundation never writes, and which have no property list
/// value) are skipped inside arrays and dictionaries and are an error as the top object.
/// Sets and ordered sets decode as arrays.
package enum BinaryPropertyList {
    /// Deeper nesting than this is rejected rather than risking the stack.
    static let maximumDepth = 512

    /// Decodes a `bplist00` document; malformed input is an error, never a crash.
    package static func decode(_ bytes: [UInt8]) throws -> PropertyListValue {
        var reader = try Reader(bytes)
        guard let value = try reader.object(reader.topObject, depth: 0) else {
            throw Reader.malformed("the top object is null")
        }
        return value
    }

    /// Encodes a value as a `bplist00` document.
    package static func encode(_ value: PropertyListValue) -> [UInt8] {
        var writer = Writer()
        _ = writer.flatten(value)
        return writer.serialize()
    }
}

// MARK: - Reading

extension BinaryPropertyList {
    struct Reader {
        let bytes: [UInt8]
        let offsetIntSize: Int
        let objectRefSize: Int
        let objectCount: Int
        let topObject: Int
        let offsetTableOffset: Int
        /// Decoded objects, so that shared objects are decoded once (no exponential blow-up).
        var decoded: [PropertyListValue??]
        /// Objects being decoded, to detect reference cycles.
        var inProgress: [Bool]

        static func malformed(_ reason: String) -> MigrationError {
            MigrationError(.io, "malformed binary property list: \(reason)")
        }

        init(_ bytes: [UInt8]) throws {
            self.bytes = bytes
            let header: [UInt8] = Array("bplist00".utf8)
            guard bytes.count >= 8 + 32, Array(bytes[0..<8]) == header else {
                throw Reader.malformed(bytes.count < 40 ? "only \(bytes.count) bytes" : "no bplist00 header")
            }
            let trailer = bytes.count - 32
            offsetIntSize = Int(bytes[trailer + 6])
            objectRefSize = Int(bytes[trailer + 7])
            let count = Reader.bigEndian(bytes, at: trailer + 8, size: 8)
            let top = Reader.bigEndian(bytes, at: trailer + 16, size: 8)
            let tableOffset = Reader.bigEndian(bytes, at: trailer + 24, size: 8)
            guard (1...8).contains(offsetIntSize) else { throw Reader.malformed("offset size \(offsetIntSize)") }
            guard (1...8).contains(objectRefSize) else {
                throw Reader.malformed("object reference size \(objectRefSize)")
            }
            guard tableOffset >= 9, tableOffset < UInt64(trailer) else {
                throw Reader.malformed("offset table at \(tableOffset) outside the document")
            }
            // The offset table lies between the objects and the trailer.
            let tableRoom = UInt64(trailer) - tableOffset
            guard count >= 1, count <= tableRoom / UInt64(offsetIntSize) else {
                throw Reader.malformed("\(count) objects do not fit in the offset table")
            }
            guard top < count else { throw Reader.malformed("top object \(top) of \(count)") }
            objectCount = Int(count)
            topObject = Int(top)
            offsetTableOffset = Int(tableOffset)
            decoded = Array(repeating: nil, count: objectCount)
            inProgress = Array(repeating: false, count: objectCount)
        }

        /// Big-endian unsigned integer of `size` (≤ 8) bytes; the caller has checked the bounds.
        static func bigEndian(_ bytes: [UInt8], at offset: Int, size: Int) -> UInt64 {
            var value: UInt64 = 0
            for i in 0..<size { value = value << 8 | UInt64(bytes[offset + i]) }
            return value
        }

        /// `size` bytes at `offset`, which must lie within the object area.
        func read(_ offset: Int, _ size: Int) throws -> UInt64 {
            guard offset >= 8, size >= 0, size <= offsetTableOffset, offset <= offsetTableOffset - size else {
                throw Reader.malformed("\(size) bytes at \(offset) run past the objects")
            }
            return Reader.bigEndian(bytes, at: offset, size: size)
        }

        /// Checks that `count` items of `size` bytes from `offset` lie within the object area.
        func checkRange(_ offset: Int, count: UInt64, size: Int) throws {
            let (total, overflow) = count.multipliedReportingOverflow(by: UInt64(size))
            guard !overflow, offset >= 8, offset <= offsetTableOffset, total <= UInt64(offsetTableOffset - offset)
            else {
                throw Reader.malformed("\(count) items of \(size) bytes at \(offset) run past the objects")
            }
        }

        func offset(ofObject ref: Int) throws -> Int {
            let entry = offsetTableOffset + ref * offsetIntSize
            let offset = Reader.bigEndian(bytes, at: entry, size: offsetIntSize)
            guard offset >= 8, offset < UInt64(offsetTableOffset) else {
                throw Reader.malformed("object \(ref) at \(offset) outside the objects")
            }
            return Int(offset)
        }

        /// The length in a marker's low nibble, or the integer object after it for 0xF.
        /// Returns the length and where the contents start.
        func length(marker: UInt8, at offset: Int) throws -> (UInt64, Int) {
            let nibble = marker & 0x0F
            if nibble != 0x0F { return (UInt64(nibble), offset + 1) }
            let intMarker = try read(offset + 1, 1)
            guard intMarker & 0xF0 == 0x10, intMarker & 0x0F <= 3 else {
                throw Reader.malformed("bad length marker \(intMarker) at \(offset + 1)")
            }
            let size = 1 << Int(intMarker & 0x0F)
            let value = try read(offset + 2, size)
            return (value, offset + 2 + size)
        }

        func references(at offset: Int, count: UInt64) throws -> [Int] {
            try checkRange(offset, count: count, size: objectRefSize)
            var refs: [Int] = []
            refs.reserveCapacity(Int(count))
            for i in 0..<Int(count) {
                let ref = Reader.bigEndian(bytes, at: offset + i * objectRefSize, size: objectRefSize)
                guard ref < UInt64(objectCount) else {
                    throw Reader.malformed("reference to object \(ref) of \(objectCount)")
                }
                refs.append(Int(ref))
            }
            return refs
        }

        /// The value of object `ref`; nil for null and fill.
        mutating func object(_ ref: Int, depth: Int) throws -> PropertyListValue? {
            if let known = decoded[ref] { return known }
            guard depth < BinaryPropertyList.maximumDepth else {
                throw Reader.malformed("nested deeper than \(BinaryPropertyList.maximumDepth)")
            }
            guard !inProgress[ref] else { throw Reader.malformed("object \(ref) contains itself") }
            inProgress[ref] = true
            let value = try parse(ref, depth: depth)
            inProgress[ref] = false
            decoded[ref] = .some(value)
            return value
        }

        private mutating func parse(_ ref: Int, depth: Int) throws -> PropertyListValue? {
            let start = try offset(ofObject: ref)
            let marker = UInt8(try read(start, 1))
            let nibble = marker & 0x0F
            switch marker >> 4 {
            case 0x0:
                switch marker {
                case 0x00, 0x0F: return nil
                case 0x08: return .bool(false)
                case 0x09: return .bool(true)
                default: throw Reader.malformed("unknown marker \(marker) at \(start)")
                }
            case 0x1:
                guard nibble <= 4 else { throw Reader.malformed("integer of 2^\(nibble) bytes at \(start)") }
                let size = 1 << Int(nibble)
                if size == 16 {
                    // CoreFoundation writes 16 bytes for values beyond Int64; keep those that fit.
                    let high = try read(start + 1, 8)
                    let low = try read(start + 9, 8)
                    let value = Int64(bitPattern: low)
                    guard (high == 0 && value >= 0) || (high == UInt64.max && value < 0) else {
                        throw Reader.malformed("integer at \(start) does not fit in 64 bits")
                    }
                    return .integer(value)
                }
                // 1, 2 and 4 bytes are unsigned; 8 bytes are two's complement.
                return .integer(Int64(bitPattern: try read(start + 1, size)))
            case 0x2:
                switch nibble {
                case 2: return .real(Double(Float(bitPattern: UInt32(try read(start + 1, 4)))))
                case 3: return .real(Double(bitPattern: try read(start + 1, 8)))
                default: throw Reader.malformed("real of 2^\(nibble) bytes at \(start)")
                }
            case 0x3:
                guard marker == 0x33 else { throw Reader.malformed("unknown marker \(marker) at \(start)") }
                return .date(Double(bitPattern: try read(start + 1, 8)))
            case 0x4:
                let (count, contents) = try length(marker: marker, at: start)
                try checkRange(contents, count: count, size: 1)
                return .data(Array(bytes[contents..<(contents + Int(count))]))
            case 0x5:
                let (count, contents) = try length(marker: marker, at: start)
                try checkRange(contents, count: count, size: 1)
                // ASCII; any stray high byte is read as Latin-1 rather than refused.
                var text = String.UnicodeScalarView()
                for byte in bytes[contents..<(contents + Int(count))] { text.append(Unicode.Scalar(byte)) }
                return .string(String(text))
            case 0x6:
                let (count, contents) = try length(marker: marker, at: start)
                try checkRange(contents, count: count, size: 2)
                var units: [UInt16] = []
                units.reserveCapacity(Int(count))
                for i in 0..<Int(count) {
                    units.append(UInt16(bytes[contents + 2 * i]) << 8 | UInt16(bytes[contents + 2 * i + 1]))
                }
                return .string(String(decoding: units, as: UTF16.self))
            case 0x8:
                let size = Int(nibble) + 1
                guard size <= 8 else { throw Reader.malformed("UID of \(size) bytes at \(start)") }
                return .uid(try read(start + 1, size))
            case 0xA, 0xB, 0xC:
                let (count, contents) = try length(marker: marker, at: start)
                var elements: [PropertyListValue] = []
                for element in try references(at: contents, count: count) {
                    if let value = try object(element, depth: depth + 1) { elements.append(value) }
                }
                return .array(elements)
            case 0xD:
                let (count, contents) = try length(marker: marker, at: start)
                let (doubled, overflow) = count.multipliedReportingOverflow(by: 2)
                guard !overflow else { throw Reader.malformed("dictionary of \(count) entries at \(start)") }
                let refs = try references(at: contents, count: doubled)
                let n = Int(count)
                var members: [(key: String, value: PropertyListValue)] = []
                for i in 0..<n {
                    let key = try object(refs[i], depth: depth + 1)
                    guard case .string(let name)? = key else {
                        throw Reader.malformed("dictionary key at \(start) is not a string")
                    }
                    if let value = try object(refs[n + i], depth: depth + 1) { members.append((name, value)) }
                }
                return .dictionary(members)
            default:
                throw Reader.malformed("unknown marker \(marker) at \(start)")
            }
        }
    }
}

// MARK: - Writing

extension BinaryPropertyList {
    /// Scalars that are written once however often they occur.
    enum UniqueKey: Hashable {
        case string(String)
        case integer(Int64)
        case real(UInt64)
        case bool(Bool)
        case date(UInt64)
        case data([UInt8])
        case uid(UInt64)
    }

    enum FlatObject {
        case scalar(PropertyListValue)
        case array([Int])
        case dictionary(keys: [Int], values: [Int])
    }

    struct Writer {
        var objects: [FlatObject] = []
        var unique: [UniqueKey: Int] = [:]

        /// Adds `value` (containers before their contents, so the top object is 0); returns its index.
        mutating func flatten(_ value: PropertyListValue) -> Int {
            let key: UniqueKey
            switch value {
            case .array(let elements):
                let index = objects.count
                objects.append(.array([]))
                let refs = elements.map { flatten($0) }
                objects[index] = .array(refs)
                return index
            case .dictionary(let members):
                let index = objects.count
                objects.append(.array([]))
                let keys = members.map { flatten(.string($0.key)) }
                let values = members.map { flatten($0.value) }
                objects[index] = .dictionary(keys: keys, values: values)
                return index
            case .string(let s): key = .string(s)
            case .integer(let i): key = .integer(i)
            case .real(let d): key = .real(d.bitPattern)
            case .bool(let b): key = .bool(b)
            case .date(let d): key = .date(d.bitPattern)
            case .data(let bytes): key = .data(bytes)
            case .uid(let u): key = .uid(u)
            }
            if let index = unique[key] { return index }
            let index = objects.count
            objects.append(.scalar(value))
            unique[key] = index
            return index
        }

        /// The fewest of 1, 2, 4 or 8 bytes that hold `value`.
        static func byteCount(_ value: UInt64) -> Int {
            if value <= 0xFF { return 1 }
            if value <= 0xFFFF { return 2 }
            if value <= 0xFFFF_FFFF { return 4 }
            return 8
        }

        static func append(_ value: UInt64, size: Int, to out: inout [UInt8]) {
            for i in stride(from: size - 1, through: 0, by: -1) {
                out.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(i))))
            }
        }

        static func appendInteger(_ value: Int64, to out: inout [UInt8]) {
            // 1, 2 and 4-byte integers are unsigned; negatives take all 8 bytes.
            let size = value < 0 ? 8 : byteCount(UInt64(value))
            out.append(0x10 | UInt8(size.trailingZeroBitCount))
            append(UInt64(bitPattern: value), size: size, to: &out)
        }

        static func appendMarker(_ kind: UInt8, count: Int, to out: inout [UInt8]) {
            if count < 15 {
                out.append(kind << 4 | UInt8(count))
            } else {
                out.append(kind << 4 | 0x0F)
                appendInteger(Int64(count), to: &out)
            }
        }

        func serialize() -> [UInt8] {
            let refSize = Writer.byteCount(UInt64(objects.count))
            var out: [UInt8] = Array("bplist00".utf8)
            var offsets: [Int] = []
            offsets.reserveCapacity(objects.count)
            for object in objects {
                offsets.append(out.count)
                switch object {
                case .array(let refs):
                    Writer.appendMarker(0xA, count: refs.count, to: &out)
                    for ref in refs { Writer.append(UInt64(ref), size: refSize, to: &out) }
                case .dictionary(let keys, let values):
                    Writer.appendMarker(0xD, count: keys.count, to: &out)
                    for ref in keys + values { Writer.append(UInt64(ref), size: refSize, to: &out) }
                case .scalar(let value):
                    Writer.appendScalar(value, to: &out)
                }
            }
            let tableOffset = out.count
            let offsetSize = Writer.byteCount(UInt64(tableOffset))
            for offset in offsets { Writer.append(UInt64(offset), size: offsetSize, to: &out) }
            out.append(contentsOf: [0, 0, 0, 0, 0, 0, UInt8(offsetSize), UInt8(refSize)])
            Writer.append(UInt64(objects.count), size: 8, to: &out)
            Writer.append(0, size: 8, to: &out)
            Writer.append(UInt64(tableOffset), size: 8, to: &out)
            return out
        }

        static func appendScalar(_ value: PropertyListValue, to out: inout [UInt8]) {
            switch value {
            case .bool(let b): out.append(b ? 0x09 : 0x08)
            case .integer(let i): appendInteger(i, to: &out)
            case .real(let d):
                out.append(0x23)
                append(d.bitPattern, size: 8, to: &out)
            case .date(let d):
                out.append(0x33)
                append(d.bitPattern, size: 8, to: &out)
            case .data(let bytes):
                appendMarker(0x4, count: bytes.count, to: &out)
                out.append(contentsOf: bytes)
            case .string(let s):
                if s.unicodeScalars.allSatisfy({ $0.isASCII }) {
                    appendMarker(0x5, count: s.utf8.count, to: &out)
                    out.append(contentsOf: s.utf8)
                } else {
                    let units = Array(s.utf16)
                    appendMarker(0x6, count: units.count, to: &out)
                    for unit in units { append(UInt64(unit), size: 2, to: &out) }
                }
            case .uid(let u):
                let size = byteCount(u)
                out.append(0x80 | UInt8(size - 1))
                append(u, size: size, to: &out)
            case .array, .dictionary:
                break  // flatten() never makes containers scalars
            }
        }
    }
}
