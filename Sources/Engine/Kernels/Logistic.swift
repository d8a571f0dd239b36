#if SWIFTLITE_AVX2
import CX86Intrinsics
import SIMDKernelsAVX512
#endif

/// LOGISTIC (sigmoid): `1 / (1 + exp(−x))`, with TFLite's reference cut-offs: exactly 1 above
/// 16.619047…, and `exp(x)` below −9 (where the two agree to float precision).
enum Logistic {
    static let input = 0, output = 0

    static func prepare(_ context: inout PrepareContext) throws(ModelError) -> any Kernel {
        try context.prepareElementwise(float: { LogisticFloat32(count: $0, input: $1, output: $2) },
                                       quantized: prepareQuantized(_:count:))
    }
}

/// Float LOGISTIC, sixteen elements a step through `VectorExponential` (within 1 ulp of `exp`,
/// where the reference calls the C library's `expf`), the reference's three cases chosen lane by
/// lane; threads take ranges of the elements.
struct LogisticFloat32: PartitionedKernel {
    typealias Lanes = SIMD16<Float>
    typealias Lanes8 = VectorExponential.Lanes
    let count: Int
    let input: Int, output: Int

    /// TFLite's cut-offs (`reference_ops::Logistic`).
    static let upperCutoff: Float = 16.619047164916992188, lowerCutoff: Float = -9

    /// The work of one element in the units `TensorMemory.parallelize` counts (a convolution's
    /// multiply-adds): about twenty vector operations per sixteen elements.
    static let elementWork = 20

    func eval(_ memory: TensorMemory) {
        memory.parallelize(self, count: count, granularity: Lanes.scalarCount, work: count * Self.elementWork)
    }

    func evalPart(_ range: Range<Int>, step: Int, worker: Int, memory: TensorMemory) {
        Self.logistic(memory.input(input, as: Float.self) + range.lowerBound, memory.output(output, as: Float.self) + range.lowerBound,
                      count: range.count)
    }

    /// `y[i] = logistic(x[i])` for `count` elements (`mapLanes`; with AVX-512, sixteen lanes in
    /// one register, `FloatElementwise.logistic`).
    static func logistic(_ x: UnsafePointer<Float>, _ y: UnsafeMutablePointer<Float>, count: Int) {
        #if SWIFTLITE_AVX2
        if KernelSelection.runsAVX512 { return FloatElementwise.logistic(x, y, count: count) }
        #endif
        @inline(always) func lanes(_ v: Lanes) -> Lanes { logistic(v) }
        mapLanes(x, y, count: count, lanes)
    }

    /// The reference's value lane by lane, eight lanes at a time.
    @inline(always)
    static func logistic(_ v: Lanes) -> Lanes { Lanes(lowHalf: logistic(v.lowHalf), highHalf: logistic(v.highHalf)) }

    /// The reference's value lane by lane: 1 above the upper cut-off, `exp(v)` below the lower
    /// one, `1 / (1 + exp(−v))` between (and for NaN, which stays NaN). On AVX2 through
    /// `swiftlite_logistic_f32x8`, the same operations with intrinsics.
    @inline(always)
    static func logistic(_ v: Lanes8) -> Lanes8 {
        #if SWIFTLITE_AVX2
        swiftlite_logistic_f32x8(v)
        #else
        portableLogistic(v)
        #endif
    }

    /// `logistic(_:)` in Swift SIMD: the form every target but AVX2 runs.
    @inline(always)
    static func portableLogistic(_ v: Lanes8) -> Lanes8 {
        let below = v .< Lanes8(repeating: lowerCutoff)
        // The argument is at most 9: −v where v ≥ −9, v where v < −9 (NaN stays NaN).
        let e = VectorExponential.exp(notAbove88: (-v).replacing(with: v, where: below))
        return (1 / (1 + e)).replacing(with: e, where: below).replacing(with: 1, where: v .> Lanes8(repeating: upperCutoff))
    }
}
