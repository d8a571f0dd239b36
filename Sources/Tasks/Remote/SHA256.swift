/// SHA-256 (FIPS 180-4), for checking downloaded models. Neither CryptoKit nor swift-crypto is
/// available on this Linux toolchain, so this is a plain implementation: fed in pieces with
/// `update(_:)`, finished with `finalize()`.
///
/// ```swift
/// var hash = SHA256()
/// hash.update(Array("abc".utf8))
/// hash.finalize().hexString   // "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
/// ```
/// - Complexity: O(n) in the bytes hashed; 64 rounds per 64-byte block.
public struct SHA256: Sendable {
    private var state: [UInt32] = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]
    /// Bytes not yet hashed (fewer than 64).
    private var pending: [UInt8] = []
    private var length: UInt64 = 0

    public init() {}

    /// The digest of `bytes` in one call.
    public static func hash(_ bytes: some Sequence<UInt8>) -> Digest {
        var h = SHA256()
        h.update(Array(bytes))
        return h.finalize()
    }

    public mutating func update(_ bytes: some Collection<UInt8>) {
        length &+= UInt64(bytes.count)
        pending.append(contentsOf: bytes)
        var offset = 0
        while pending.count - offset >= 64 {
            compress(pending[offset ..< offset + 64])
            offset += 64
        }
        pending.removeFirst(offset)
    }

    /// Pads (a 1 bit, zeros, the bit length big-endian) and returns the digest.
    public mutating func finalize() -> Digest {
        let bitLength = length &* 8
        var tail: [UInt8] = [0x80]
        while (pending.count + tail.count) % 64 != 56 { tail.append(0) }
        for shift in stride(from: 56, through: 0, by: -8) { tail.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift))) }
        pending += tail
        var offset = 0
        while offset < pending.count {
            compress(pending[offset ..< offset + 64])
            offset += 64
        }
        pending = []
        return Digest(bytes: state.flatMap { word in (0 ..< 4).map { UInt8(truncatingIfNeeded: word >> (24 - 8 * $0)) } })
    }

    private static let k: [UInt32] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
    ]

    private static func rotr(_ x: UInt32, _ n: UInt32) -> UInt32 { (x >> n) | (x << (32 - n)) }

    private mutating func compress(_ block: ArraySlice<UInt8>) {
        var w = [UInt32](repeating: 0, count: 64)
        let base = block.startIndex
        for i in 0 ..< 16 {
            w[i] = (0 ..< 4).reduce(0) { $0 << 8 | UInt32(block[base + 4 * i + $1]) }
        }
        for i in 16 ..< 64 {
            let s0 = Self.rotr(w[i - 15], 7) ^ Self.rotr(w[i - 15], 18) ^ (w[i - 15] >> 3)
            let s1 = Self.rotr(w[i - 2], 17) ^ Self.rotr(w[i - 2], 19) ^ (w[i - 2] >> 10)
            w[i] = w[i - 16] &+ s0 &+ w[i - 7] &+ s1
        }
        var (a, b, c, d, e, f, g, h) = (state[0], state[1], state[2], state[3], state[4], state[5], state[6], state[7])
        for i in 0 ..< 64 {
            let s1 = Self.rotr(e, 6) ^ Self.rotr(e, 11) ^ Self.rotr(e, 25)
            let choice = (e & f) ^ (~e & g)
            let t1 = h &+ s1 &+ choice &+ Self.k[i] &+ w[i]
            let s0 = Self.rotr(a, 2) ^ Self.rotr(a, 13) ^ Self.rotr(a, 22)
            let majority = (a & b) ^ (a & c) ^ (b & c)
            let t2 = s0 &+ majority
            (h, g, f, e, d, c, b, a) = (g, f, e, d &+ t1, c, b, a, t1 &+ t2)
        }
        for (i, v) in [a, b, c, d, e, f, g, h].enumerated() { state[i] = state[i] &+ v }
    }

    /// A 32-byte SHA-256 digest.
    public struct Digest: Sendable, Equatable, CustomStringConvertible {
        public let bytes: [UInt8]
        /// Lower-case hex, 64 characters.
        public var hexString: String {
            bytes.map { let s = String($0, radix: 16); return s.count == 1 ? "0" + s : s }.joined()
        }
        public var description: String { hexString }
    }
}
