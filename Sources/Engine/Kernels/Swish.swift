#if SWIFTLITE_AVX2
import SIMDKernelsAVX512
#endif

/// Swish (SiLU), `x · logistic(x)`, as converters write it: a LOGISTIC (or, in 8 bits, any
/// table-driven activation) whose output only the MUL right after it reads, the MUL's other
/// operand being the activation's own input, both of one shape. `Plan` fuses the pair
/// (`fused(_:_:readers:)`); the activation's output is then never written, and the fused kernel
/// computes what the two compute one after the other, bit for bit.
enum Swish {
    /// The kernel doing `activation` then `product` in one pass, or nil where the two are not
    /// that pattern. `readers`: per tensor, the operators that read it (plus one for a graph
    /// output).
    static func fused(_ activation: any Kernel, _ product: any Kernel, readers: [Int]) -> (any Kernel)? {
        if let logistic = activation as? LogisticFloat32, let mul = product as? ArithmeticFloat32<Multiplication>,
           mul.broadcast.isElementwise, readers[logistic.output] == 1,
           Set([mul.lhs, mul.rhs]) == Set([logistic.input, logistic.output]) {
            return SwishFloat32(input: logistic.input, output: mul.output, count: logistic.count, lower: mul.lower, upper: mul.upper)
        }
        guard let table = activation as? ByteLookupKernel, readers[table.output] == 1 else { return nil }
        if let mul = product as? MulQuantized<Int8> { return composed(table, mul) }
        if let mul = product as? MulQuantized<UInt8> { return composed(table, mul) }
        return nil
    }

    /// In 8 bits the whole pair is a function of one input byte: one table holding, for every
    /// byte `x`, the MUL's reference arithmetic on `x` and the activation's table entry for `x`.
    private static func composed<T: FixedWidthInteger & Sendable>(_ activation: ByteLookupKernel, _ mul: MulQuantized<T>) -> ByteLookupKernel? {
        guard mul.broadcast.isElementwise, activation.count == mul.broadcast.outputCount else { return nil }
        let (x, y) = (activation.input, activation.output)
        guard (mul.lhs, mul.rhs) == (x, y) || (mul.lhs, mul.rhs) == (y, x) else { return nil }
        let table = (0 ..< 256).map { byte -> T in
            let value = T(truncatingIfNeeded: byte), activated = T(truncatingIfNeeded: activation.table.pointer[byte])
            return mul.lhs == x ? mul.multiplied(value, activated) : mul.multiplied(activated, value)
        }
        return ByteLookupKernel(table: table, count: activation.count, input: x, output: mul.output)
    }
}

/// Float swish: per element the LOGISTIC kernel's lanes, then the MUL kernel's product and clamp
/// (`FloatGEMM.clamp(x · s, lower, upper)`); threads take ranges of whole cache lines.
struct SwishFloat32: PartitionedKernel {
    typealias Lanes = LogisticFloat32.Lanes
    let input: Int, output: Int
    let count: Int
    /// The MUL's fused activation range.
    let lower: Float, upper: Float

    func eval(_ memory: TensorMemory) {
        memory.parallelize(self, count: count, granularity: Lanes.scalarCount,
                           work: count * (LogisticFloat32.elementWork + TensorMemory.elementWork))
    }

    func evalPart(_ range: Range<Int>, step: Int, worker: Int, memory: TensorMemory) {
        swish(memory.input(input, as: Float.self) + range.lowerBound, memory.output(output, as: Float.self) + range.lowerBound,
              count: range.count)
    }

    /// `y[i] = swish(x[i])` for `count` elements (`mapLanes`; with AVX-512, sixteen lanes in one
    /// register, `FloatElementwise.swish`).
    func swish(_ x: UnsafePointer<Float>, _ y: UnsafeMutablePointer<Float>, count: Int) {
        let lower = lower, upper = upper
        #if SWIFTLITE_AVX2
        if KernelSelection.runsAVX512 { return FloatElementwise.swish(x, y, count: count, lower: lower, upper: upper) }
        #endif
        @inline(always) func swished(_ v: Lanes) -> Lanes { FloatGEMM.clamp(v * LogisticFloat32.logistic(v), lower, upper) }
        mapLanes(x, y, count: count, swished)
    }
}
