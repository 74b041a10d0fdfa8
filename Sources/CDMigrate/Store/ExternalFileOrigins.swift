/// Which external files recently read hold which content, so that a value written unchanged
/// keeps its file: looked up by size and a 64-bit FNV-1a hash, confirmed by comparing the file's
/// bytes. Bounded: the oldest entries are forgotten past `capacity`.
package final class ExternalFileOrigins {
    package struct Origin {
        package let name: String
        package let folder: String
    }
    struct Key: Hashable {
        let count: Int
        let hash: UInt64
    }
    var capacity = 65_536
    private var entries: [Key: Origin] = [:]
    private var order: [Key] = []
    private var start = 0

    package init() {}

    /// FNV-1a over 8-byte words (then the tail byte by byte): a lookup key, not a proof of equality.
    static func hash(_ bytes: [UInt8]) -> UInt64 {
        bytes.withUnsafeBytes { buffer -> UInt64 in
            var h: UInt64 = 0xcbf2_9ce4_8422_2325
            let words = buffer.count / 8
            for i in 0..<words {
                h = (h ^ buffer.loadUnaligned(fromByteOffset: i * 8, as: UInt64.self)) &* 0x0000_0100_0000_01b3
            }
            for i in (words * 8)..<buffer.count { h = (h ^ UInt64(buffer[i])) &* 0x0000_0100_0000_01b3 }
            return h
        }
    }

    func remember(name: String, folder: String, bytes: [UInt8]) {
        let key = Key(count: bytes.count, hash: ExternalFileOrigins.hash(bytes))
        if entries.updateValue(Origin(name: name, folder: folder), forKey: key) != nil { return }
        order.append(key)
        if order.count - start > capacity {
            entries[order[start]] = nil
            start += 1
            if start > capacity {
                order.removeFirst(start)
                start = 0
            }
        }
    }

    /// The file last read with exactly these bytes, if it still holds them.
    func match(_ bytes: [UInt8]) -> Origin? {
        guard !entries.isEmpty else { return nil }
        let key = Key(count: bytes.count, hash: ExternalFileOrigins.hash(bytes))
        guard let origin = entries[key], FileIO.size(origin.folder + "/" + origin.name) == Int64(bytes.count),
            (try? ExternalBinaryData.readFile(origin.folder + "/" + origin.name)) == bytes
        else { return nil }
        return origin
    }
}
