/// What SHA-256 and SHA-512 share (FIPS 180-4): the padding, the message schedule and the
/// compression rounds. They differ in the word (32 or 64 bits), the constants and the rotation
/// amounts, which `SHA256` and `SHA512` give.
struct SHA2<Word: FixedWidthInteger & UnsignedInteger> {
    /// The round constants (one per round).
    let k: [Word]
    /// The initial hash value.
    let initial: [Word]
    /// σ0 and σ1 of the message schedule: two rotations and a shift each.
    let schedule: (s0: (Int, Int, Int), s1: (Int, Int, Int))
    /// Σ0 and Σ1 of the rounds: three rotations each.
    let rounds: (s0: (Int, Int, Int), s1: (Int, Int, Int))

    static var wordBytes: Int { Word.bitWidth / 8 }

    /// The message padded to whole blocks of 16 words: 0x80, zeros, and the length in bits in the
    /// last two words (big-endian; messages here are far below 2^64 bits, so a 128-bit length's
    /// high half is zero).
    static func padded(_ message: [UInt8]) -> [UInt8] {
        let block = 16 * wordBytes
        let lengthField = 2 * wordBytes
        let bitLength = UInt64(message.count) &* 8
        var data = message
        data.reserveCapacity(message.count + block + lengthField)
        data.append(0x80)
        while data.count % block != block - lengthField { data.append(0) }
        data += [UInt8](repeating: 0, count: lengthField - 8)
        for i in (0..<8).reversed() { data.append(UInt8(truncatingIfNeeded: bitLength >> (UInt64(i) * 8))) }
        return data
    }

    /// The digest of `message`: the final hash value's words, big-endian.
    func hash(_ message: [UInt8]) -> [UInt8] {
        let data = Self.padded(message)
        let wordBytes = Self.wordBytes
        var h = initial
        var w = [Word](repeating: 0, count: k.count)
        for chunk in stride(from: 0, to: data.count, by: 16 * wordBytes) {
            for i in 0..<16 {
                var word: Word = 0
                for j in 0..<wordBytes { word = word << 8 | Word(data[chunk + i * wordBytes + j]) }
                w[i] = word
            }
            for i in 16..<k.count {
                let s0 = rotr(w[i - 15], schedule.s0.0) ^ rotr(w[i - 15], schedule.s0.1) ^ (w[i - 15] &>> schedule.s0.2)
                let s1 = rotr(w[i - 2], schedule.s1.0) ^ rotr(w[i - 2], schedule.s1.1) ^ (w[i - 2] &>> schedule.s1.2)
                w[i] = w[i - 16] &+ s0 &+ w[i - 7] &+ s1
            }
            var a = h[0]
            var b = h[1]
            var c = h[2]
            var d = h[3]
            var e = h[4]
            var f = h[5]
            var g = h[6]
            var hh = h[7]
            for i in 0..<k.count {
                let s1 = rotr(e, rounds.s1.0) ^ rotr(e, rounds.s1.1) ^ rotr(e, rounds.s1.2)
                let ch = (e & f) ^ (~e & g)
                let t1 = hh &+ s1 &+ ch &+ k[i] &+ w[i]
                let s0 = rotr(a, rounds.s0.0) ^ rotr(a, rounds.s0.1) ^ rotr(a, rounds.s0.2)
                let maj = (a & b) ^ (a & c) ^ (b & c)
                let t2 = s0 &+ maj
                hh = g
                g = f
                f = e
                e = d &+ t1
                d = c
                c = b
                b = a
                a = t1 &+ t2
            }
            h[0] = h[0] &+ a
            h[1] = h[1] &+ b
            h[2] = h[2] &+ c
            h[3] = h[3] &+ d
            h[4] = h[4] &+ e
            h[5] = h[5] &+ f
            h[6] = h[6] &+ g
            h[7] = h[7] &+ hh
        }
        var digest: [UInt8] = []
        digest.reserveCapacity(8 * wordBytes)
        for word in h {
            for shift in stride(from: Word.bitWidth - 8, through: 0, by: -8) {
                digest.append(UInt8(truncatingIfNeeded: word &>> shift))
            }
        }
        return digest
    }

    @inline(__always) private func rotr(_ x: Word, _ n: Int) -> Word { (x &>> n) | (x &<< (Word.bitWidth - n)) }
}
