/// User info read from a keyed archive: the archive's types become `Value`s as `MappingUserInfo`
/// types them in JSON.
extension MappingUserInfo {
    /// An archived `NSUserInfo` dictionary (a `.cdm`'s, or the one Xcode keeps in `userinfodata`),
    /// each value as the type it was archived as.
    ///
    /// - Parameters:
    ///   - entries: the dictionary's entries.
    ///   - fail: the error naming where the dictionary is, given what is wrong with it.
    /// - Throws: what `fail` makes, for a key that is not text or a value that is a collection or an object.
    package static func fromArchive(
        _ entries: [(key: ArchiveValue, value: ArchiveValue)], fail: (String) -> MigrationError
    ) throws -> [String: Value] {
        var info: [String: Value] = [:]
        for (key, value) in entries {
            guard case .string(let name) = key else { throw fail("has a \(key.typeName) key, not a string") }
            switch value {
            case .string(let s): info[name] = .string(s)
            case .integer(let i): info[name] = .integer(i)
            case .real(let d): info[name] = .double(d)
            case .decimal(let s): info[name] = .decimal(s)
            case .bool(let b): info[name] = .bool(b)
            case .date(let d): info[name] = .date(d)
            case .data(let bytes): info[name] = .binary(bytes)
            case .uuid(let bytes): info[name] = .uuid(bytes)
            case .url(let s): info[name] = .uri(s)
            default: throw fail("holds '\(name)' as a \(value.typeName), not a string, number, boolean, date or data")
            }
        }
        return info
    }
}
