import CLibXML2

/// An element of an XML document read by libxml2: its name, attributes, child elements and text.
///
/// Xcode's model (`.xcdatamodel/contents`) and mapping (`.xcmappingmodel/xcmapping.xml`) files are
/// small, so the whole document is read into these values and libxml2's tree is freed at once.
/// libxml2 refuses documents nested deeper than 256 elements, which bounds the recursion here.
package struct XMLElement: Equatable {
    package var name: String
    package var attributes: [String: String]
    package var children: [XMLElement]
    /// The element's own text (its text and CDATA children, concatenated).
    package var text: String
    /// The line in the document where the element starts (1-based), for error messages.
    package var line: Int

    package init(
        name: String, attributes: [String: String] = [:], children: [XMLElement] = [], text: String = "", line: Int = 0
    ) {
        self.name = name
        self.attributes = attributes
        self.children = children
        self.text = text
        self.line = line
    }

    /// The child elements named `name`, in document order.
    package func children(named name: String) -> [XMLElement] { children.filter { $0.name == name } }

    /// The first child element named `name`.
    package func child(named name: String) -> XMLElement? { children.first { $0.name == name } }

    package subscript(attribute: String) -> String? { attributes[attribute] }

    /// Reads an XML file.
    /// - Throws: `MigrationError` `.io` when the file cannot be read, `.invalidModel` (or `code`)
    ///   naming the line when it is not well-formed XML.
    package static func parse(file path: String, code: MigrationError.Code = .invalidModel) throws -> XMLElement {
        if let size = FileIO.size(path), size > Int64(XMLInputLimits.maximumBytes) {
            throw MigrationError(
                code,
                "'\(path)' is \(size) bytes, above the limit of \(XMLInputLimits.maximumBytes) bytes for an Xcode XML document"
            )
        }
        return try parse(bytes: try FileIO.readBytes(path: path), name: path, code: code)
    }

    /// Reads an XML document held in memory; `name` is the file named in error messages.
    package static func parse(bytes: [UInt8], name: String, code: MigrationError.Code = .invalidModel) throws
        -> XMLElement
    {
        // Size, attributes per element and entity declarations are bounded before libxml2 reads a byte.
        try XMLInputLimits.check(bytes, name: name, code: code)
        // No network, no external entities or DTDs: Xcode's files name a DTD on the Mac, never read.
        let options = Int32(XML_PARSE_NONET.rawValue | XML_PARSE_NOERROR.rawValue | XML_PARSE_NOWARNING.rawValue)
        let document = bytes.withUnsafeBufferPointer { buffer in
            buffer.baseAddress.map { base in
                base.withMemoryRebound(to: CChar.self, capacity: buffer.count) {
                    xmlReadMemory($0, Int32(buffer.count), name, nil, options)
                }
            } ?? nil
        }
        guard let document else {
            var detail = "not well-formed XML"
            if let error = xmlGetLastError(), let message = error.pointee.message {
                detail = String(cString: message).trimmingTrailingNewlines() + " (line \(error.pointee.line))"
            }
            throw MigrationError(code, "cannot read '\(name)': \(detail)")
        }
        defer { xmlFreeDoc(document) }
        // Whatever the scan let through, a document that declares entities is not read further.
        if let subset = document.pointee.intSubset, subset.pointee.entities != nil {
            throw MigrationError(code, "cannot read '\(name)': it declares XML entities, which Xcode's files never do")
        }
        guard let root = xmlDocGetRootElement(document) else {
            throw MigrationError(code, "cannot read '\(name)': the document has no root element")
        }
        return element(root)
    }

    private static func element(_ node: UnsafeMutablePointer<xmlNode>) -> XMLElement {
        var result = XMLElement(name: string(node.pointee.name), line: Int(node.pointee.line))
        var attribute = node.pointee.properties
        while let a = attribute {
            if let value = xmlNodeListGetString(node.pointee.doc, a.pointee.children, 1) {
                result.attributes[string(a.pointee.name)] = String(cString: value)
                xmlFree(value)
            } else {
                result.attributes[string(a.pointee.name)] = ""
            }
            attribute = a.pointee.next
        }
        var child = node.pointee.children
        while let c = child {
            switch c.pointee.type {
            case XML_ELEMENT_NODE: result.children.append(element(c))
            case XML_TEXT_NODE, XML_CDATA_SECTION_NODE:
                if let content = c.pointee.content { result.text += String(cString: content) }
            default: break
            }
            child = c.pointee.next
        }
        return result
    }

    private static func string(_ name: UnsafePointer<xmlChar>?) -> String {
        name.map { String(cString: $0) } ?? ""
    }
}

extension String {
    func trimmingTrailingNewlines() -> String {
        var s = self[...]
        while let last = s.last, last == "\n" || last == "\r" { s = s.dropLast() }
        return String(s)
    }
}
