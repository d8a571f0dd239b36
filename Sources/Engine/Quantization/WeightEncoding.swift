/// How the integer kernels read a quantized weight byte: int8 as a signed value, uint8 as an
/// unsigned one, minus the weights' zero point (0 for TFLite's symmetric int8 weights).
///
/// Example: uint8 with zero point 128: byte 0x00 → −128, 0xFF → 127; int8 with zero point 0:
/// byte 0xFF → −1.
struct WeightEncoding: Sendable, Equatable {
    /// True for int8 weights.
    let isSigned: Bool
    let zeroPoint: Int32

    /// Weights of `type` (uint8 or int8) whose range-checked zero point is `zeroPoint`.
    init(_ type: DataType, zeroPoint: Int32) {
        isSigned = type == .int8
        self.zeroPoint = zeroPoint
    }

    /// `w − zeroPoint` for the raw weight byte `byte`.
    @inline(__always)
    func value(_ byte: UInt8) -> Int32 {
        (isSigned ? Int32(Int8(bitPattern: byte)) : Int32(byte)) - zeroPoint
    }
}
