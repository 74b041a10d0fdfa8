/// Text files the engine reads (JSON models, mappings, model sets) must be UTF-8, as JSON is
/// (RFC 8259, section 8.1): a byte that is not part of a valid UTF-8 sequence is refused with
/// the file, its line and its byte offset, never replaced by U+FFFD (which would write a
/// replacement character into every migrated row).
package enum UTF8Text {
    /// The first byte of `bytes` that does not start (or continue) a valid UTF-8 sequence:
    /// overlong forms, surrogates and code points above U+10FFFF count as invalid, as in
    /// Unicode's definition of well-formed UTF-8 (table 3-7). Nil when all of it is valid.
    package static func firstInvalidByte(_ bytes: [UInt8]) -> Int? {
        bytes.withUnsafeBufferPointer { UTF8Check.firstInvalidByte($0) }
    }

    /// `bytes` as a String, or an error naming `file`, the line (1-based) and the byte offset
    /// (0-based) of the first invalid byte.
    /// - Throws: `MigrationError` with `code`.
    package static func decode(_ bytes: [UInt8], file: String, code: MigrationError.Code) throws -> String {
        if let bad = firstInvalidByte(bytes) {
            var line = 1
            for byte in bytes[..<bad] where byte == 0x0A { line += 1 }
            let hex = String(bytes[bad], radix: 16, uppercase: true)
            throw MigrationError(
                code,
                "'\(file)' is not valid UTF-8: byte 0x\(hex.count == 1 ? "0" : "")\(hex) at line \(line), byte offset \(bad) (the file must be UTF-8; convert it, e.g. with iconv -f LATIN1 -t UTF-8)",
                path: file, offset: bad, byteOffset: bad)
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
