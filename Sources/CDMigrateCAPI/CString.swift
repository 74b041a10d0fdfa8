import CDMigrate

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Strings across the boundary: C strings in are checked for NULL and UTF-8; strings out are
/// malloc'd copies whose owner (a handle, a scope, or the caller) frees them.
enum CString {
    /// A malloc'd NUL-terminated copy (the caller frees it with free()).
    static func copy(_ text: String) -> UnsafeMutablePointer<CChar> {
        var utf8 = Array(text.utf8)
        utf8.append(0)
        guard let raw = copyBytes(utf8) else { return UnsafeMutablePointer(mutating: empty) }
        return raw.assumingMemoryBound(to: CChar.self)
    }

    /// A malloc'd copy of `bytes` with a NUL after them (a C string of text's UTF-8); nil when out of memory.
    static func terminatedCopy(_ bytes: UnsafeBufferPointer<UInt8>) -> UnsafeMutableRawPointer? {
        guard let raw = malloc(bytes.count + 1) else { return nil }
        if let base = bytes.baseAddress { raw.copyMemory(from: base, byteCount: bytes.count) }
        raw.storeBytes(of: 0, toByteOffset: bytes.count, as: UInt8.self)
        return raw
    }

    /// A malloc'd copy of bytes (at least one byte, so never NULL for an empty value).
    static func copyBytes(_ bytes: [UInt8]) -> UnsafeMutableRawPointer? {
        guard let raw = malloc(max(bytes.count, 1)) else { return nil }
        bytes.withUnsafeBytes { if let base = $0.baseAddress { raw.copyMemory(from: base, byteCount: $0.count) } }
        return raw
    }

    private static let emptyStorage: UnsafeMutablePointer<CChar> = {
        let p = UnsafeMutablePointer<CChar>.allocate(capacity: 1)
        p.pointee = 0
        return p
    }()
    static var empty: UnsafePointer<CChar> { UnsafePointer(emptyStorage) }

    /// Static strings (names of codes): made once, kept for the life of the process.
    private static let internedStrings = LockedValue<[String: UnsafeMutablePointer<CChar>]>([:])
    static func interned(_ text: String) -> UnsafePointer<CChar> {
        internedStrings.withLock { strings in
            if let p = strings[text] { return UnsafePointer(p) }
            let p = copy(text)
            strings[text] = p
            return UnsafePointer(p)
        }
    }

    /// A required string argument: NULL is misuse, invalid UTF-8 an encoding error.
    static func argument(_ pointer: UnsafePointer<CChar>?, _ what: @autoclosure () -> String) throws -> String {
        guard let pointer = pointer else { throw MigrationError.misuse("\(what()) is NULL") }
        return try decode(UnsafeRawBufferPointer(start: pointer, count: strlen(pointer)), what())
    }

    /// A string argument with a size_t length: CDM_NUL_TERMINATED ((size_t)-1, -1 as an Int)
    /// means up to the NUL; any other length past Int.max is refused.
    static func argument(_ pointer: UnsafePointer<CChar>?, length: Int, _ what: @autoclosure () -> String) throws
        -> String
    {
        guard let pointer = pointer else { throw MigrationError.misuse("\(what()) is NULL") }
        guard length >= -1 else {
            throw MigrationError(
                .invalidArgument,
                "the length of \(what()) (\(UInt(bitPattern: length)) bytes) is not a length: pass CDM_NUL_TERMINATED or the byte count"
            )
        }
        let count = length == -1 ? strlen(pointer) : length
        return try decode(UnsafeRawBufferPointer(start: pointer, count: count), what())
    }

    private static func decode(_ bytes: UnsafeRawBufferPointer, _ what: @autoclosure () -> String) throws -> String {
        // ASCII (entity and attribute names, most keys) is valid UTF-8 as it is: no validating decoder.
        var ascii = true
        for byte in bytes where byte >= 0x80 {
            ascii = false
            break
        }
        if ascii { return String(decoding: bytes, as: UTF8.self) }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw MigrationError(.encoding, "\(what()) is not valid UTF-8")
        }
        return text
    }
}
