import CZlib

/// Decompresses DEFLATE data through zlib, with a cap on the output so that a small,
/// hostile input cannot expand without bound.
enum Inflate {
    /// Inflates raw DEFLATE data (no zlib header: Core Data's model cache); data with a zlib
    /// header is accepted too.
    ///
    /// - Parameters:
    ///   - bytes: the compressed data, which must end where the stream ends.
    ///   - limit: the most bytes the output may have.
    ///   - what: how messages name the data.
    /// - Throws: `MigrationError` with `code` when the data is not a complete DEFLATE stream or
    ///   inflates to more than `limit` bytes.
    static func inflate(_ bytes: [UInt8], limit: Int, code: MigrationError.Code, what: String) throws -> [UInt8] {
        do {
            return try run(bytes, windowBits: -15, limit: limit, code: code, what: what)
        } catch let raw as MigrationError {
            // A zlib header (CMF 0x78, header checksum a multiple of 31) gets a second try.
            if bytes.count >= 2, bytes[0] & 0x0F == 8, (Int(bytes[0]) << 8 | Int(bytes[1])) % 31 == 0,
                let wrapped = try? run(bytes, windowBits: 15, limit: limit, code: code, what: what)
            {
                return wrapped
            }
            throw raw
        }
    }

    private static func run(_ bytes: [UInt8], windowBits: Int32, limit: Int, code: MigrationError.Code, what: String)
        throws -> [UInt8]
    {
        guard !bytes.isEmpty else { throw MigrationError(code, "\(what) is empty: there is nothing to inflate") }
        guard UInt64(bytes.count) <= UInt64(UInt32.max) else {
            throw MigrationError(code, "\(what) is \(bytes.count) bytes, more than zlib takes at once")
        }
        var stream = z_stream()
        guard cdm_inflate_init2(&stream, windowBits) == Z_OK else {
            throw MigrationError(code, "\(what): zlib could not start inflating")
        }
        defer { inflateEnd(&stream) }
        var input = bytes
        var output: [UInt8] = []
        let chunkSize = 64 << 10
        var chunk = [UInt8](repeating: 0, count: chunkSize)
        var status: Int32 = Z_OK
        try input.withUnsafeMutableBufferPointer { inputBuffer in
            stream.next_in = inputBuffer.baseAddress
            stream.avail_in = uInt(inputBuffer.count)
            repeat {
                let produced: Int = chunk.withUnsafeMutableBufferPointer { chunkBuffer in
                    stream.next_out = chunkBuffer.baseAddress
                    stream.avail_out = uInt(chunkSize)
                    status = CZlib.inflate(&stream, Z_NO_FLUSH)
                    return chunkSize - Int(stream.avail_out)
                }
                guard status == Z_OK || status == Z_STREAM_END || (status == Z_BUF_ERROR && produced > 0) else {
                    let reason: String
                    switch status {
                    case Z_BUF_ERROR: reason = "the data ends before the compressed stream does"
                    case Z_DATA_ERROR:
                        reason =
                            "the data is not valid DEFLATE (\(stream.msg.map { String(cString: $0) } ?? "corrupt"))"
                    case Z_MEM_ERROR: reason = "zlib ran out of memory"
                    default: reason = "zlib failed with status \(status)"
                    }
                    throw MigrationError(
                        code,
                        "\(what) cannot be inflated after \(Int(stream.total_in)) of \(bytes.count) bytes: \(reason)")
                }
                if output.count + produced > limit {
                    throw MigrationError(
                        code,
                        "\(what) inflates to more than \(limit) bytes (from \(bytes.count)); refused as a likely decompression bomb"
                    )
                }
                output.append(contentsOf: chunk[0..<produced])
                if status != Z_STREAM_END && stream.avail_in == 0 && produced == 0 {
                    throw MigrationError(
                        code, "\(what) cannot be inflated: the data ends before the compressed stream does")
                }
            } while status != Z_STREAM_END
        }
        if stream.avail_in != 0 {
            throw MigrationError(code, "\(what) has \(stream.avail_in) bytes after the end of its compressed stream")
        }
        return output
    }
}
