#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

extension FileIO {
    /// Whether two paths name the same file or folder (by device and inode when both exist).
    package static func sameFile(_ a: String, _ b: String) -> Bool {
        if a == b { return true }
        var sa = stat()
        var sb = stat()
        guard stat(a, &sa) == 0, stat(b, &sb) == 0 else { return false }
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino
    }
}
