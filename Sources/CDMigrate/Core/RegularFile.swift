#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

extension FileIO {
    /// Opens `path` for reading when it is a regular file (following symbolic links), and refuses
    /// anything else before reading a byte: the open itself is non-blocking, so a FIFO (named
    /// pipe) with no writer cannot hang it, and `fstat` on the open descriptor tells what it is.
    /// The returned descriptor is blocking again; the caller closes it.
    ///
    /// - Parameters:
    ///   - path: the file.
    ///   - what: what the file is meant to be, for the error ("the source store", "the policy library").
    /// - Throws: `MigrationError` `.io` when it cannot be opened or is not a regular file (a FIFO,
    ///   a socket, a device, a folder), naming what it is.
    package static func openRegularFile(_ path: String, what: String? = nil) throws -> Int32 {
        let named = what.map { "\($0) '\(path)'" } ?? "'\(path)'"
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
        guard fd >= 0 else {
            throw MigrationError(.io, "cannot open \(named): \(String(cString: strerror(errno)))")
        }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let failure = errno
            close(fd)
            throw MigrationError(.io, "cannot read \(named): \(String(cString: strerror(failure)))")
        }
        let type = info.st_mode & S_IFMT
        guard type == S_IFREG else {
            close(fd)
            throw MigrationError(
                .io, "\(named) is \(fileTypeName(type)), not a regular file; cdmigrate reads only regular files")
        }
        let flags = fcntl(fd, F_GETFL)
        if flags >= 0 { _ = fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) }
        return fd
    }

    /// Refuses `path` unless it is a regular file (see `openRegularFile`), without reading it.
    package static func requireRegularFile(_ path: String, what: String? = nil) throws {
        close(try openRegularFile(path, what: what))
    }

    /// "a FIFO (named pipe)", "a folder", … for a `st_mode & S_IFMT` value.
    package static func fileTypeName(_ type: mode_t) -> String {
        switch type {
        case S_IFIFO: return "a FIFO (named pipe)"
        case S_IFSOCK: return "a socket"
        case S_IFCHR: return "a character device"
        case S_IFBLK: return "a block device"
        case S_IFDIR: return "a folder"
        case S_IFLNK: return "a symbolic link"
        default: return "not a regular file"
        }
    }
}
