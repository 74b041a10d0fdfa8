/// The form Core Data keeps a derived attribute's derivation expression in, as text.
///
/// NSDerivedAttributeDescription's `setDerivationExpression:` (readable in public decompilations of
/// CoreData.framework) replaces a key path expression ending in `.@count` by the function
/// expression `count:(path)`, and one ending in `.@sum` or `.@total` by `sum:(path)`; the attribute's
/// version hash is the SHA-256 of that expression's `predicateFormat`, and the model cache archives
/// that expression. Every other expression is kept as written.
package enum DerivationForm {
    /// The text of the expression as Core Data keeps it: `items.@count` gives `count:(items)`,
    /// `items.price.@sum` gives `sum:(items.price)`; any other text is returned unchanged.
    package static func keptText(_ text: String) -> String {
        let trimmed = trim(text)
        for (suffix, function) in [(".@count", "count:"), (".@sum", "sum:"), (".@total", "sum:")]
        where trimmed.hasSuffix(suffix) {
            let path = String(trimmed.dropLast(suffix.count))
            guard !path.isEmpty, path.utf8.allSatisfy(isKeyPathByte), !path.hasPrefix("."), !path.hasSuffix(".") else {
                return text
            }
            return function + "(" + path + ")"
        }
        return text
    }

    /// Letters, digits, `_`, `.` and `#` (an escaped key): a plain key path from the object.
    private static func isKeyPathByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "#"):
            return true
        default:
            return byte >= 0x80
        }
    }

    private static func trim(_ text: String) -> String {
        var s = Substring(text)
        while let c = s.first, c == " " || c == "\t" || c == "\n" || c == "\r" { s.removeFirst() }
        while let c = s.last, c == " " || c == "\t" || c == "\n" || c == "\r" { s.removeLast() }
        return String(s)
    }
}
