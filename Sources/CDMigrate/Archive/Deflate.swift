import CZlib

/// Compresses data as raw DEFLATE (RFC 1951) through zlib: the form of Core Data's model cache,
/// which Apple's Compression library writes for `COMPRESSION_ZLIB` (`NSData.compressed(using: .zlib)`)
/// with `deflateInit2(stream, 5, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY)`: level 5, no zlib header,
/// no checksum, no length prefix. `Inflate` reads it back.
enum Deflate {
    /// Apple's encoder level (its Compression library implements zlib at level 5 only).
    static let appleLevel: Int32 = 5

    /// Deflates `bytes` in one go.
    ///
    /// - Parameters:
    ///   - bytes: the data (at most 1 GiB).
    ///   - level: zlib's compression level (0 to 9).
    ///   - what: how messages name the data.
    /// - Throws: `MigrationError` `.io` when zlib cannot start or fails (out of memory).
    static func deflate(_ bytes: [UInt8], level: Int32 = appleLevel, what: String) throws -> [UInt8] {
        // One call with room for the whole output: zlib's counters are 32-bit, so at most 1 GiB.
        guard bytes.count <= 1 << 30 else {
            throw MigrationError(.io, "\(what) is \(bytes.count) bytes, more than is compressed at once (1 GiB)")
        }
        var stream = z_stream()
        guard cdm_deflate_init2(&stream, min(max(level, 0), 9), -15, 8) == Z_OK else {
            throw MigrationError(.io, "\(what): zlib could not start compressing")
        }
        defer { deflateEnd(&stream) }
        // deflateBound gives the largest output for this input: one call finishes the stream.
        let bound = Int(deflateBound(&stream, uLong(bytes.count)))
        var output = [UInt8](repeating: 0, count: max(bound, 16))
        var input = bytes
        let capacity = output.count
        let status: Int32 = input.withUnsafeMutableBufferPointer { inputBuffer in
            output.withUnsafeMutableBufferPointer { outputBuffer in
                stream.next_in = inputBuffer.baseAddress
                stream.avail_in = uInt(inputBuffer.count)
                stream.next_out = outputBuffer.baseAddress
                stream.avail_out = uInt(capacity)
                return CZlib.deflate(&stream, Z_FINISH)
            }
        }
        guard status == Z_STREAM_END else {
            throw MigrationError(.io, "\(what) cannot be compressed: zlib failed with status \(status)")
        }
        let produced = capacity - Int(stream.avail_out)
        return Array(output[0..<produced])
    }
}
