import XCTest

@testable import CDMigrate

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The byte copy of a store file (`StoreFiles.copyExclusively`, `copyOver`): in the kernel
/// (`sendfile`) where it can, else read and written through a buffer, the same bytes either way.
final class StoreFileCopyTests: XCTestCase {
    var scratch: ScratchDirectory!

    override func setUp() {
        scratch = ScratchDirectory()
    }

    override func tearDown() {
        _ = StoreFiles.useKernelCopy.withLock { $0 = true }
    }

    /// Bytes that no short pattern repeats in (so a block copied twice or skipped shows), across
    /// several of the read-and-write buffer's 1 MiB and not a multiple of a page.
    func bytes(_ count: Int) -> [UInt8] {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        return (0..<count).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: state >> 33)
        }
    }

    /// The file's bytes, read by the engine's plain reader (Foundation's `Data(contentsOf:)`
    /// leaks its buffer for an empty file under LeakSanitizer).
    func contents(_ path: String) throws -> [UInt8] { try FileIO.readBytes(path: path) }

    func testTheKernelCopyAndTheBufferedCopyGiveTheSameBytes() throws {
        let source = scratch.path + "/source.sqlite"
        let content = bytes(2 << 20 + 12_345)
        try Data(content).write(to: URL(fileURLWithPath: source))
        for kernel in [true, false] {
            _ = StoreFiles.useKernelCopy.withLock { $0 = kernel }
            let fresh = scratch.path + "/fresh-\(kernel)"
            try StoreFiles.copyExclusively(source, to: fresh)
            XCTAssertEqual(try contents(fresh), content, "a new file, kernel copy \(kernel)")
            // Over a longer file: emptied first, so nothing of it is left after the copy's end.
            let over = scratch.path + "/over-\(kernel)"
            try Data(repeating: 0xA5, count: 3 << 20).write(to: URL(fileURLWithPath: over))
            try StoreFiles.copyOver(source, to: over)
            XCTAssertEqual(try contents(over), content, "over a longer file, kernel copy \(kernel)")
            // An empty source gives an empty file.
            let empty = scratch.path + "/empty"
            FileManager.default.createFile(atPath: empty, contents: Data())
            try StoreFiles.copyOver(empty, to: over)
            XCTAssertEqual(try contents(over), [], "an empty source, kernel copy \(kernel)")
            XCTAssertThrowsError(try StoreFiles.copyExclusively(source, to: fresh), "the name exists")
        }
    }

    /// Where the kernel cannot copy (a pipe is no file it can send from), it declines before
    /// writing anything, and the caller's buffered copy takes over.
    func testTheKernelCopyDeclinesWhatItCannotCopy() throws {
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&fds), 0)
        defer {
            close(fds[0])
            close(fds[1])
        }
        XCTAssertEqual(write(fds[1], "abc", 3), 3)
        let path = scratch.path + "/out"
        let output = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        XCTAssertGreaterThanOrEqual(output, 0)
        defer { close(output) }
        XCTAssertFalse(try StoreFiles.copyInKernel(fds[0], to: output, source: "pipe", path: path))
        XCTAssertEqual(try contents(path), [])
        var left = [UInt8](repeating: 0, count: 3)
        XCTAssertEqual(read(fds[0], &left, 3), 3)
        XCTAssertEqual(left, Array("abc".utf8))
    }
}
