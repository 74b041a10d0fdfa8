import CDMigrate
import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#endif

/// The stores a fleet run migrates, from the command line's arguments: a path names a store; a
/// folder stands for the stores directly in it, told by content as `check` tells them
/// (`StoreFolder`: the other files are skipped, each with the reason); `@FILE` (or `--from-file
/// FILE`) for the paths listed in FILE, one a line (blank lines and lines starting with `#` are
/// skipped; relative paths are relative to the current folder).
enum FleetStoreList {
    /// The stores found, and the files of the folders that are not stores.
    struct Found {
        /// In argument order, each folder's in name order.
        var stores: [String] = []
        /// Files of the folders given that are not stores (with the reason), in the same order.
        var skipped: [StoreFolder.Entry] = []
        /// The folders given.
        var folders: [String] = []
    }

    /// Whether an argument stands for several stores (a folder or a list) rather than one.
    static func isList(_ argument: String) -> Bool {
        argument.hasPrefix("@") || isFolder(argument)
    }

    static func isFolder(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }

    /// The stores the arguments and list files name, in order, and the files of the folders
    /// given that are not stores.
    /// - Throws: `FleetUsageError` when a list file cannot be read or a folder listed.
    static func stores(arguments: [String], listFiles: [String]) throws -> Found {
        var found = Found()
        for argument in arguments {
            if argument.hasPrefix("@") {
                found.stores += try listed(in: String(argument.dropFirst()))
            } else if isFolder(argument) {
                let entries: [StoreFolder.Entry]
                do { entries = try StoreFolder.entries(in: argument) } catch {
                    throw FleetUsageError("cannot list the folder \(argument): \(error)")
                }
                found.folders.append(argument)
                found.stores += entries.filter(\.isStore).map(\.path)
                found.skipped += entries.filter { !$0.isStore }
            } else {
                found.stores.append(argument)
            }
        }
        for file in listFiles { found.stores += try listed(in: file) }
        return found
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
}

/// A fleet run that cannot start: no stores, two stores with one destination, an unreadable list.
struct FleetUsageError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
