#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CDMigrate

/// Directories for the stores a run generates, without Foundation.
public enum TemporaryDirectory {
    /// A new private directory under $TMPDIR (or /tmp).
    public static func make(prefix: String = "cdmigrate-examples") throws -> String {
        let base = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
        var template = Array((base + "/" + prefix + ".XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { buffer -> Bool in
            guard let pointer = buffer.baseAddress else { return false }
            return mkdtemp(pointer) != nil
        }
        guard made else { throw MigrationError(.io, "cannot create a temporary directory under '\(base)'") }
        return String(decoding: template.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Creates a directory (and its parents) if it does not exist.
    public static func create(_ path: String) throws {
        var partial = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            partial += "/" + component
            if mkdir(partial, 0o755) != 0 && errno != EEXIST {
                throw MigrationError(.io, "cannot create directory '\(partial)'")
            }
        }
    }

    /// The names in a directory (no "." and "..").
    public static func list(_ path: String) -> [String] {
        guard let dir = opendir(path) else { return [] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw -> String in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    /// Removes a directory and everything in it (the runs make flat directories of store files,
    /// but nested ones are handled too).
    public static func remove(_ path: String) {
        for name in list(path) {
            let child = path + "/" + name
            var info = stat()
            if lstat(child, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR { remove(child) } else { unlink(child) }
        }
        rmdir(path)
    }
}
