#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

extension FileIO {
    /// Whether `path` names a directory (following symbolic links).
    package static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        guard stat(path, &info) == 0 else { return false }
        return (info.st_mode & S_IFMT) == S_IFDIR
    }

    /// The names in a directory (hidden ones included, `.` and `..` left out), sorted.
    /// - Throws: `MigrationError` `.io` naming the directory when it cannot be read.
    package static func directoryEntries(path: String) throws -> [String] {
        guard let directory = opendir(path) else {
            throw MigrationError(.io, "cannot read the folder '\(path)': \(String(cString: strerror(errno)))")
        }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: Int(NAME_MAX) + 1) { String(cString: $0) }
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }
}
