#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Core Data's external binary data: how a store keeps the values of attributes with
/// `allowsExternalBinaryDataStorage` (binary and transformable ones), and their files.
///
/// The column holds a marker byte, then either the value itself (`0x01`) or, for a value longer
/// than 128 KiB (`externalThreshold`), the ASCII UUID of a file and a NUL (`0x02`). The file is
/// `.<store name without extension>_SUPPORT/_EXTERNAL_DATA/<UUID>` beside the store and holds
/// the value's bytes. docs/store-layout.md cites the sources.
///
/// One instance per open store: it decodes the columns the store reads (looking the files up in
/// `readFolders`), encodes the values it writes (new files in `writeFolder`, or in a private
/// folder when `stagingTemplate` is set: a migration hands those over with the store), counts
/// the files a column names but the folder lacks, and reuses a file when the value written is
/// one read from a file of the same content (`ExternalFileOrigins`).
package final class ExternalBinaryData {
    /// The marker of a value kept in the row.
    package static let inlineMarker: UInt8 = 1
    /// The marker of a value kept in a file.
    package static let externalMarker: UInt8 = 2
    /// Values longer than this many bytes go to a file, shorter ones stay in the row (Core Data's
    /// `NSSQLSavePlan`: 0x20000).
    package static let externalThreshold = 131_072

    /// The folder holding the store's external files: `<folder>/.<name>_SUPPORT/_EXTERNAL_DATA`,
    /// where name is the store's file name without its extension.
    package static func folder(forStore path: String) -> String {
        supportFolder(forStore: path) + "/_EXTERNAL_DATA"
    }

    /// `<folder>/.<name>_SUPPORT` beside the store (Core Data keeps other support files there too).
    package static func supportFolder(forStore path: String) -> String {
        let directory = FileIO.directory(of: path)
        var name = path.lastIndex(of: "/").map { String(path[path.index(after: $0)...]) } ?? path
        if let dot = name.lastIndex(of: "."), dot != name.startIndex { name = String(name[..<dot]) }
        return directory + "/." + name + "_SUPPORT"
    }

    /// Whether Core Data may keep this attribute's values outside the row.
    package static func applies(to attribute: AttributeDescription) -> Bool {
        attribute.allowsExternalBinaryDataStorage
            && (attribute.attributeType == .binary || attribute.attributeType == .transformable)
    }

    /// Where files named by the columns are looked up, in order.
    package var readFolders: [String]
    /// The folder the store's files belong in: new files go there unless `stagingTemplate` is set
    /// (a migration sets it to the final destination's folder).
    package var storeFolder: String
    /// A `mkdtemp` template: new files go to a private folder made from it on the first write
    /// (a migration's destination, whose files are handed over with the store). A value read
    /// from a file already in `storeFolder` (in place) then keeps that file, as the old store
    /// that referenced it is replaced.
    package var stagingTemplate: String?
    /// The private folder made from `stagingTemplate`, once a file was written.
    package private(set) var stagingFolder: String?
    /// Called with the private folder as soon as it exists (a migration records it in its
    /// destination's lock, so that the next run removes it should this one be killed).
    package var stagingFolderCreated: ((String) -> Void)?
    /// Files read recently, so that writing one of their values again can link the file.
    package var origins = ExternalFileOrigins()
    /// The paths of the files that columns name but that are missing (each once).
    package private(set) var missingFiles: Set<String> = []
    /// The missing files by the attribute whose column names them (`Entity.attribute`).
    package private(set) var missingFilesByProperty: [String: Set<String>] = [:]
    /// Names of files in `storeFolder` this store references again unchanged (in place).
    private var reusedNames: Set<String> = []

    init(storePath: String) {
        storeFolder = ExternalBinaryData.folder(forStore: storePath)
        readFolders = [storeFolder]
    }

    /// For a migration's destination, written under a temporary name: its files belong beside
    /// `finalStorePath`, and new ones go to a private folder made from `stagingTemplate`. The
    /// values it writes that were read from `origins`' files keep those files.
    package func prepareForHandOver(to finalStorePath: String, stagingTemplate: String, origins: ExternalFileOrigins) {
        storeFolder = ExternalBinaryData.folder(forStore: finalStorePath)
        readFolders = [storeFolder]
        self.stagingTemplate = stagingTemplate
        self.origins = origins
    }

    // MARK: Reading

    /// The value of a column: the bytes after the marker, or the file's bytes. A missing file
    /// gives nil, counted in `missingFiles`.
    /// - throws: `.sqlite` for a column without a known marker or with a malformed file name,
    ///   `.io` for a file that exists but cannot be read.
    package func decode(_ raw: [UInt8], property: String? = nil, describe: () -> String) throws -> Value {
        guard let marker = raw.first else { return .binary([]) }
        switch marker {
        case ExternalBinaryData.inlineMarker:
            return .binary(Array(raw.dropFirst()))
        case ExternalBinaryData.externalMarker:
            let nameBytes = raw.dropFirst().prefix { $0 != 0 }
            guard !nameBytes.isEmpty, nameBytes.count <= 128,
                nameBytes.allSatisfy({ ExternalBinaryData.isNameByte($0) })
            else {
                throw MigrationError(
                    .sqlite,
                    "\(describe()) names an external data file '\(String(decoding: nameBytes, as: UTF8.self))' that is not a UUID"
                )
            }
            let name = String(decoding: nameBytes, as: UTF8.self)
            for folder in readFolders {
                let path = folder + "/" + name
                guard FileIO.exists(path) else { continue }
                let bytes: [UInt8]
                do {
                    bytes = try ExternalBinaryData.readFile(path)
                } catch let error as MigrationError {
                    throw MigrationError(
                        .io,
                        "\(describe()) is kept in the external data file '\(path)', which cannot be read: \(error.message)"
                    )
                }
                origins.remember(name: name, folder: folder, bytes: bytes)
                return .binary(bytes)
            }
            missingFiles.insert(storeFolder + "/" + name)
            if let property { missingFilesByProperty[property, default: []].insert(name) }
            return .null
        default:
            throw MigrationError(
                .sqlite,
                "\(describe()) starts with byte 0x\(String(marker, radix: 16)), which is no marker of Core Data's external binary data (0x01 in the row, 0x02 in a file)"
            )
        }
    }

    /// A file's bytes, read straight into an array of its size.
    static func readFile(_ path: String) throws -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw MigrationError(.io, "cannot open '\(path)': \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw MigrationError(.io, "cannot read '\(path)': \(String(cString: strerror(errno)))")
        }
        let size = Int(info.st_size)
        var failure: Int32 = 0
        var bytes = [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
            count = 0
            while count < size, let base = buffer.baseAddress {
                let n = read(fd, base + count, size - count)
                if n < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    return
                }
                if n == 0 { break }
                count += n
            }
        }
        if failure != 0 { throw MigrationError(.io, "cannot read '\(path)': \(String(cString: strerror(failure)))") }
        // A file that grew meanwhile: the rest too.
        if bytes.count == size {
            var more = [UInt8](repeating: 0, count: 65_536)
            while true {
                let n = more.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if n < 0 {
                    if errno == EINTR { continue }
                    throw MigrationError(.io, "cannot read '\(path)': \(String(cString: strerror(errno)))")
                }
                if n == 0 { break }
                bytes.append(contentsOf: more[0..<n])
            }
        }
        return bytes
    }

    static func isNameByte(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
            || byte == 0x2D
    }

    // MARK: Writing

    /// The column for `bytes`: inline up to `externalThreshold`, else a file. A value read from a
    /// file of the same content keeps that file's UUID: in place (the file is already in
    /// `storeFolder`) it is referenced as it is; otherwise it is hard-linked (or copied) into the
    /// folder new files go to. Each file is referenced by one row only, as Core Data does.
    package func encode(_ bytes: [UInt8]) throws -> [UInt8] {
        guard bytes.count > ExternalBinaryData.externalThreshold else {
            return [ExternalBinaryData.inlineMarker] + bytes
        }
        if let origin = origins.match(bytes) {
            if stagingTemplate != nil && FileIO.sameFile(origin.folder, storeFolder) {
                if reusedNames.insert(origin.name).inserted { return ExternalBinaryData.reference(origin.name) }
            } else {
                let folder = try writeFolder()
                let target = folder + "/" + origin.name
                if !FileIO.exists(target) {
                    if link(origin.folder + "/" + origin.name, target) == 0 {
                        return ExternalBinaryData.reference(origin.name)
                    }
                    try ExternalBinaryData.writeExclusively(bytes, to: target)
                    return ExternalBinaryData.reference(origin.name)
                }
            }
        }
        let folder = try writeFolder()
        let name = PersistentStore.randomUUID()
        try ExternalBinaryData.writeExclusively(bytes, to: folder + "/" + name)
        return ExternalBinaryData.reference(name)
    }

    /// Removes the file a column referenced when this store wrote it (in its staging folder) and
    /// the column no longer references it. Files of other stores (the source's, those reused in
    /// place) are never touched.
    func discardWrittenFile(referencedBy column: [UInt8]) {
        guard let folder = stagingFolder, folder != storeFolder, column.first == ExternalBinaryData.externalMarker
        else { return }
        let name = column.dropFirst().prefix { $0 != 0 }
        guard !name.isEmpty, name.allSatisfy({ ExternalBinaryData.isNameByte($0) }) else { return }
        unlink(folder + "/" + String(decoding: name, as: UTF8.self))
    }

    static func reference(_ name: String) -> [UInt8] {
        [externalMarker] + Array(name.utf8) + [0]
    }

    /// The folder new files go to, made on first use.
    func writeFolder() throws -> String {
        if let folder = stagingFolder { return folder }
        if let template = stagingTemplate {
            let folder: String
            do {
                folder = try FileIO.makeTemporaryDirectory(template: template)
            } catch let error as MigrationError {
                throw MigrationError(
                    .migrationManagerDestinationStore,
                    "cannot create a folder for external data files: \(error.message)")
            }
            stagingFolder = folder
            stagingFolderCreated?(folder)
            readFolders.insert(folder, at: 0)
            return folder
        }
        try ExternalBinaryData.makeFolder(ExternalBinaryData.supportFolderOf(storeFolder))
        try ExternalBinaryData.makeFolder(storeFolder)
        stagingFolder = storeFolder
        return storeFolder
    }

    static func supportFolderOf(_ externalFolder: String) -> String { FileIO.directory(of: externalFolder) }

    /// Creates a folder unless it exists.
    static func makeFolder(_ path: String) throws {
        if mkdir(path, 0o755) != 0 && errno != EEXIST {
            throw MigrationError(.io, "cannot create the folder '\(path)': \(String(cString: strerror(errno)))")
        }
    }

    /// Writes a new file (`O_EXCL`) and syncs it.
    static func writeExclusively(_ bytes: [UInt8], to path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            throw MigrationError(
                .io, "cannot create the external data file '\(path)': \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { buffer -> Int in
                guard let base = buffer.baseAddress else { return 0 }
                return write(fd, base + written, bytes.count - written)
            }
            if n < 0 {
                if errno == EINTR { continue }
                let reason = String(cString: strerror(errno))
                unlink(path)
                throw MigrationError(.io, "cannot write the external data file '\(path)': \(reason)")
            }
            written += n
        }
        do { try FileIO.fsync(fd, path: path) } catch {
            unlink(path)
            throw error
        }
    }
}
