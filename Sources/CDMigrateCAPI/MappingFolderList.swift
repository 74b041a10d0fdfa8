import CDMigrate

extension CString {
    /// At most this many mapping folders in one call: a list without its terminating NULL is
    /// refused here rather than read without end.
    static let maximumFolderCount = 1024

    /// A NULL-terminated array of folder paths (`const char *const *mapping_dirs`); NULL is none.
    /// - Throws: `.invalidArgument` for an entry that is not UTF-8 or a list longer than
    ///   `maximumFolderCount`.
    static func folders(_ list: UnsafePointer<UnsafePointer<CChar>?>?) throws -> [String] {
        guard let list = list else { return [] }
        var folders: [String] = []
        var index = 0
        while let entry = list[index] {
            guard index < maximumFolderCount else {
                throw MigrationError(
                    .invalidArgument,
                    "mapping_dirs lists more than \(maximumFolderCount) folders: is it NULL-terminated?")
            }
            folders.append(try argument(entry, "mapping_dirs[\(index)]"))
            index += 1
        }
        return folders
    }
}
