import CDMigrate
import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#endif

/// The stores a fleet run migrates, from the command line's arguments: a path names a store; a
/// folder stands for the stores directly in it (files ending in .sqlite, .sqlite3, .store or
/// .db); `@FILE` (or `--from-file FILE`) for the paths listed in FILE, one a line (blank lines
/// and lines starting with `#` are skipped; relative paths are relative to the current folder).
enum FleetStoreList {
    /// File name extensions of the stores a folder stands for.
    static let storeExtensions: Set<String> = ["sqlite", "sqlite3", "store", "db"]

    /// Whether an argument stands for several stores (a folder or a list) rather than one.
    static func isList(_ argument: String) -> Bool {
        argument.hasPrefix("@") || isFolder(argument)
    }

    static func isFolder(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }

    /// The stores the arguments and list files name, in order.
    /// - Throws: `FleetUsageError` when a list file cannot be read or a folder listed.
    static func stores(arguments: [String], listFiles: [String]) throws -> [String] {
        var stores: [String] = []
        for argument in arguments {
            if argument.hasPrefix("@") {
                stores += try listed(in: String(argument.dropFirst()))
            } else if isFolder(argument) {
                stores += try inFolder(argument)
            } else {
                stores.append(argument)
            }
        }
        for file in listFiles { stores += try listed(in: file) }
        return stores
    }

    static func listed(in file: String) throws -> [String] {
        guard let bytes = try? FileIO.readBytes(path: file) else {
            throw FleetUsageError("cannot read the list of stores \(file)")
        }
        return String(decoding: bytes, as: UTF8.self).split(whereSeparator: \.isNewline)
            .map {
                String(
                    $0.drop(while: { $0 == " " || $0 == "\t" }).reversed().drop(while: { $0 == " " || $0 == "\t" })
                        .reversed())
            }
            .filter { !$0.isEmpty && !$0.hasPrefix("#") }
    }

    static func inFolder(_ folder: String) throws -> [String] {
        let names: [String]
        do { names = try FileManager.default.contentsOfDirectory(atPath: folder) } catch {
            throw FleetUsageError("cannot list the folder \(folder): \(error)")
        }
        let prefix = folder.hasSuffix("/") ? folder : folder + "/"
        return names.filter { name in
            guard !name.hasPrefix("."), let dot = name.lastIndex(of: ".") else { return false }
            return storeExtensions.contains(name[name.index(after: dot)...].lowercased()) && !isFolder(prefix + name)
        }.sorted().map { prefix + $0 }
    }
}

/// A fleet run that cannot start: no stores, two stores with one destination, an unreadable list.
struct FleetUsageError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
