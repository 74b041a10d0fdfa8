#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The external binary data files of a new store (see `ExternalBinaryData`), handed over with it.
///
/// A migration writes its destination's files into a private folder beside the destination
/// (`<destination>.cdmigrate-data-XXXXXX`, made with `mkdtemp`); values carried unchanged are hard
/// links to the source's files there (copies across file systems). At the hand-over, just before
/// the store's rename, each file is linked into `.<name>_SUPPORT/_EXTERNAL_DATA` beside the final
/// store (a name already there is kept when it is that very file — the in-place case — or holds
/// the same bytes; another file under that name is an error). Should the store's rename fail, the
/// files linked are unlinked again. The private folder is removed in every case. A file linked
/// into the support folder before a crash is inert: no store references it.
enum ExternalDataHandOver {
    /// What `publish` created, to undo it should the store's hand-over fail.
    struct Published {
        var files: [String] = []
        var folders: [String] = []
    }

    /// Links every file of `folder` into the external data folder of the store at `storePath`.
    static func publish(_ folder: String?, toStore storePath: String) throws -> Published {
        var published = Published()
        guard let folder = folder, FileIO.isDirectory(folder) else { return published }
        let names = try FileIO.directoryEntries(path: folder)
        if names.isEmpty { return published }
        let target = ExternalBinaryData.folder(forStore: storePath)
        do {
            for directory in [ExternalBinaryData.supportFolder(forStore: storePath), target]
            where !FileIO.isDirectory(directory) {
                if mkdir(directory, 0o755) != 0 {
                    throw MigrationError(
                        .migrationManagerDestinationStore,
                        "cannot create the external data folder '\(directory)': \(String(cString: strerror(errno)))")
                }
                published.folders.append(directory)
            }
            for name in names {
                let from = folder + "/" + name
                let to = target + "/" + name
                if link(from, to) == 0 {
                    published.files.append(to)
                    continue
                }
                if errno == EEXIST {
                    if StoreFiles.sameFile(from, to)
                        || (try? FileIO.readBytes(path: from)) == (try? FileIO.readBytes(path: to))
                    {
                        continue
                    }
                    throw MigrationError(
                        .migrationManagerDestinationStore,
                        "the external data file '\(to)' exists already with other contents; cdmigrate never overwrites a file it did not make (the migrated store was discarded)"
                    )
                }
                // Another file system (the support folder a mount point): copy.
                try StoreFiles.copyExclusively(from, to: to)
                published.files.append(to)
                try FileIO.fsync(path: to)
            }
            FileIO.syncFolder(path: target)
        } catch {
            unpublish(published)
            throw error
        }
        return published
    }

    /// Undoes `publish`: removes the files and folders it created.
    static func unpublish(_ published: Published) {
        for file in published.files { FileIO.remove(file) }
        for folder in published.folders.reversed() { rmdir(folder) }
    }

    /// Removes a private folder of this run and every file in it.
    static func removeFolder(_ folder: String?) {
        guard let folder = folder, FileIO.isDirectory(folder) else { return }
        for name in (try? FileIO.directoryEntries(path: folder)) ?? [] { FileIO.remove(folder + "/" + name) }
        rmdir(folder)
    }

    /// Removes the external data folder of a store this run made (in a private work folder), and
    /// its support folder when that is left empty.
    static func removeFiles(ofStore storePath: String) {
        removeFolder(ExternalBinaryData.folder(forStore: storePath))
        rmdir(ExternalBinaryData.supportFolder(forStore: storePath))
    }
}
