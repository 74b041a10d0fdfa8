import CDMigrate

/// Bytes a host passes with a size_t length (Swift sees size_t as Int: lengths past Int.max
/// arrive negative and are refused rather than read).
enum HostBytes {
    /// A copy of `length` bytes at `pointer`; `what` names the pointer in errors. A zero length
    /// needs no pointer.
    static func copy(_ pointer: UnsafeRawPointer?, length: Int, _ what: @autoclosure () -> String) throws -> [UInt8] {
        guard length >= 0 else {
            throw MigrationError(
                .invalidArgument,
                "\(what()) comes with a length of \(UInt(bitPattern: length)) bytes, larger than any buffer")
        }
        guard length > 0 else { return [] }
        guard let pointer = pointer else { throw MigrationError.misuse("\(what()) is NULL") }
        return Array(UnsafeRawBufferPointer(start: pointer, count: length))
    }
}
