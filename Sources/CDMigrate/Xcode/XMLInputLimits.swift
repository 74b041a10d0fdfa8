/// The bounds an Xcode XML document (`.xcdatamodel/contents`, `xcmapping.xml`, `.xccurrentversion`,
/// a store document) must keep, checked on its bytes before libxml2 reads it, so that no input
/// makes the reader run for minutes or build gigabytes:
/// - at most `maximumBytes` bytes (Xcode writes about 1 KB per entity: a model of 10,000
///   entities is about 10 MB);
/// - at most `maximumAttributesPerElement` attributes on one element (Xcode writes at most about
///   20; libxml2's duplicate-attribute check is quadratic in their number: 100,000 attributes
///   take minutes inside `xmlReadMemory`);
/// - no entity declaration (`<!ENTITY`): Xcode never writes one, and internal entities let a
///   small file expand quadratically when attribute values are read (libxml2's amplification
///   checks pass 20,000 references to a 50 KB entity).
/// Comments, CDATA sections and processing instructions are skipped, so a `<!ENTITY` or a
/// `=` inside them counts for nothing.
package enum XMLInputLimits {
    package static let maximumBytes = 64 << 20
    package static let maximumAttributesPerElement = 256

    /// Refuses a document outside the bounds, naming the limit and the line.
    /// - Throws: `MigrationError` with `code`.
    package static func check(_ bytes: [UInt8], name: String, code: MigrationError.Code) throws {
        guard bytes.count <= maximumBytes else {
            throw MigrationError(
                code,
                "'\(name)' is \(bytes.count) bytes, above the limit of \(maximumBytes) bytes for an Xcode XML document")
        }
        let n = bytes.count
        var i = 0
        var line = 1
        /// Moves past `terminator` (counting lines); false when the document ends first.
        func skip(past terminator: [UInt8]) -> Bool {
            while i < n {
                if bytes[i] == 0x0A { line += 1 }
                if bytes[i] == terminator[0], starts(terminator, at: i) {
                    i += terminator.count
                    return true
                }
                i += 1
            }
            return false
        }
        func starts(_ prefix: [UInt8], at index: Int) -> Bool {
            guard index + prefix.count <= n else { return false }
            for k in 0..<prefix.count where bytes[index + k] != prefix[k] { return false }
            return true
        }
        let lt = UInt8(ascii: "<")
        let gt = UInt8(ascii: ">")
        let equals = UInt8(ascii: "=")
        let comment = Array("<!--".utf8)
        let cdata = Array("<![CDATA[".utf8)
        let entity = Array("<!ENTITY".utf8)
        while i < n {
            let byte = bytes[i]
            if byte == 0x0A { line += 1 }
            guard byte == lt else {
                i += 1
                continue
            }
            if starts(comment, at: i) {
                i += comment.count
                if !skip(past: Array("-->".utf8)) { return }
            } else if starts(cdata, at: i) {
                i += cdata.count
                if !skip(past: Array("]]>".utf8)) { return }
            } else if starts(entity, at: i) {
                throw MigrationError(
                    code,
                    "'\(name)' declares an XML entity at line \(line): Xcode's files never do, and entities are refused (they can expand a small file into gigabytes)"
                )
            } else if i + 1 < n, bytes[i + 1] == UInt8(ascii: "?") {
                i += 2
                if !skip(past: Array("?>".utf8)) { return }
            } else if i + 1 < n, bytes[i + 1] == UInt8(ascii: "!") {
                // <!DOCTYPE …: its internal subset may hold declarations, looked at one by one.
                i += 2
            } else {
                // A start or end tag: its attributes are its `=` outside quoted values.
                let tagLine = line
                var attributes = 0
                var quote: UInt8 = 0
                i += 1
                while i < n {
                    let c = bytes[i]
                    if c == 0x0A { line += 1 }
                    if quote != 0 {
                        if c == quote { quote = 0 }
                    } else if c == UInt8(ascii: "\"") || c == UInt8(ascii: "'") {
                        quote = c
                    } else if c == equals {
                        attributes += 1
                        if attributes > maximumAttributesPerElement {
                            throw MigrationError(
                                code,
                                "'\(name)' has an element with more than \(maximumAttributesPerElement) attributes at line \(tagLine), above the limit for an Xcode XML document"
                            )
                        }
                    } else if c == gt || c == lt {
                        break
                    }
                    i += 1
                }
            }
        }
    }
}
