/// How the integer convolution kernels read quantized activations: as unsigned bytes. uint8
/// values are used as they are; int8 values are offset by 128 (`x ^ 0x80`), which turns the
/// int8 range into 0...255 without changing any difference `x − zeroPoint`, as long as the
/// zero point is offset the same way.
///
/// Unsigned activations are what lets `IntegerGEMM` multiply bytes by 16-bit weights with one
/// `vpdpwssd`/`vpmaddwd` per 16 products.
///
/// Example: int8, zero point −3: `zeroPoint` is 125 (0x7D), `rawZeroPoint` 0xFD (−3 as a byte),
/// `encode(0xFD)` 0x7D; uint8 bytes pass through unchanged.
struct ActivationEncoding: Sendable {
    /// True for int8 activations.
    let isSigned: Bool
    /// The zero point, encoded: the byte that stands for real 0 (and fills padding).
    let zeroPoint: UInt8
    /// The zero point as the tensor stores it: the int8 or uint8 value.
    let zeroPointValue: Int32

    /// The encoding of a uint8 or int8 tensor whose (range-checked) quantization is `q`.
    init(_ type: DataType, _ q: AffineQuantization) {
        isSigned = type == .int8
        zeroPointValue = q.zeroPoint
        zeroPoint = UInt8(truncatingIfNeeded: isSigned ? q.zeroPoint + 128 : q.zeroPoint)
    }

    /// The encoded byte of a raw tensor byte.
    @inline(__always)
    func encode(_ byte: UInt8) -> UInt8 { isSigned ? byte ^ 0x80 : byte }

    /// The raw tensor byte of an encoded byte (`encode` is its own inverse).
    @inline(__always)
    func decode(_ byte: UInt8) -> UInt8 { encode(byte) }

    /// The zero point as a raw byte of the tensor (what fills padding in raw-byte buffers).
    var rawZeroPoint: UInt8 { decode(zeroPoint) }
}
