#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The few file operations the engine needs, on the C library (no Foundation).
package enum FileIO {
    package static func readBytes(path: String) throws -> [UInt8] {
        // A FIFO would block the open (and Ctrl-C with it): only regular files are read.
        let fd = try openRegularFile(path)
        guard let file = fdopen(fd, "rb") else {
            close(fd)
            throw MigrationError(.io, "cannot open '\(path)': \(String(cString: strerror(errno)))")
        }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = fread(&buffer, 1, buffer.count, file)
            if n > 0 { bytes.append(contentsOf: buffer[0..<n]) }
            if n < buffer.count {
                if ferror(file) != 0 { throw MigrationError(.io, "cannot read '\(path)'") }
                break
            }
        }
        return bytes
    }

    package static func readText(path: String) throws -> String {
        return String(decoding: try readBytes(path: path), as: UTF8.self)
    }

    package static func write(_ bytes: [UInt8], path: String) throws {
        guard let file = fopen(path, "wb") else {
            throw MigrationError(.io, "cannot create '\(path)': \(String(cString: strerror(errno)))")
        }
        defer { fclose(file) }
        if !bytes.isEmpty && fwrite(bytes, 1, bytes.count, file) != bytes.count {
            throw MigrationError(.io, "cannot write '\(path)'")
        }
    }

    package static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    /// The file's size in bytes; nil when it cannot be read.
    package static func size(_ path: String) -> Int64? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Int64(info.st_size)
    }

    /// Removes a file if it is there; a missing file is not an error.
    package static func remove(_ path: String) {
        unlink(path)
    }

    /// Atomically replaces `destination` by `source` (same file system).
    package static func rename(_ source: String, to destination: String) throws {
        if Glibc.rename(source, destination) != 0 {
            throw MigrationError(
                .io, "cannot rename '\(source)' to '\(destination)': \(String(cString: strerror(errno)))")
        }
    }

    /// A new private folder (mode 0700) made from a `mkdtemp` template ending in `XXXXXX`.
    /// - Throws: `.io` naming the template and the system's reason.
    package static func makeTemporaryDirectory(template: String) throws -> String {
        var buffer = Array(template.utf8CString)
        let made = buffer.withUnsafeMutableBufferPointer { pointer -> Bool in
            guard let base = pointer.baseAddress else { return false }
            return mkdtemp(base) != nil
        }
        if !made {
            throw MigrationError(.io, "cannot create a folder from '\(template)': \(String(cString: strerror(errno)))")
        }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Flushes a file's data to disk.
    /// - Throws: `.io` naming the file and the system's reason when it cannot be opened or flushed:
    ///   its data may then not be on disk, and a failed flush is not retried (the kernel may have
    ///   dropped the pages it could not write, so a second flush could succeed without them).
    package static func fsync(path: String) throws {
        let fd = open(path, O_RDONLY)
        if fd < 0 {
            throw MigrationError(.io, "cannot open '\(path)' to flush it to disk: \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        try fsync(fd, path: path)
    }

    /// Flushes the open file `fd` (named `path` in the error) to disk; see `fsync(path:)`.
    package static func fsync(_ fd: Int32, path: String) throws {
        var result = Glibc.fsync(fd)
        while result != 0 && errno == EINTR { result = Glibc.fsync(fd) }
        if result != 0 {
            throw MigrationError(.io, "cannot flush '\(path)' to disk: \(String(cString: strerror(errno)))")
        }
    }

    /// Flushes a folder's entries (names made, renamed or removed in it) to disk, as far as its
    /// file system can: one that cannot sync a folder (`EINVAL`) or a folder that cannot be opened
    /// leaves the names as the system keeps them. Best effort: it runs after the step it makes
    /// durable (a rename, links), which an error could no longer undo.
    package static func syncFolder(path: String) {
        let fd = open(path, O_RDONLY | O_DIRECTORY)
        if fd >= 0 {
            _ = Glibc.fsync(fd)
            close(fd)
        }
    }

    package static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}
