/// The float32 and int32 arithmetic shared by ADD, SUB and MUL: the options, validation and
/// broadcasting are the same; only the operation and the quantized rescaling differ.
///
/// Kernels are generic over the operation so that each one is specialised and its per-element
/// closure inlined into the broadcast loop.
protocol ArithmeticOperation {
    static var name: String { get }
    static func apply(_ a: Float, _ b: Float) -> Float
    /// Int32 arithmetic wraps on overflow (two's complement), as the reference kernel does in practice.
    static func apply(_ a: Int32, _ b: Int32) -> Int32
}

enum Addition: ArithmeticOperation {
    static let name = "Add"
    @inline(__always) static func apply(_ a: Float, _ b: Float) -> Float { a + b }
    @inline(__always) static func apply(_ a: Int32, _ b: Int32) -> Int32 { a &+ b }
}

enum Subtraction: ArithmeticOperation {
    static let name = "Sub"
    @inline(__always) static func apply(_ a: Float, _ b: Float) -> Float { a - b }
    @inline(__always) static func apply(_ a: Int32, _ b: Int32) -> Int32 { a &- b }
}

enum Multiplication: ArithmeticOperation {
    static let name = "Mul"
    @inline(__always) static func apply(_ a: Float, _ b: Float) -> Float { a * b }
    @inline(__always) static func apply(_ a: Int32, _ b: Int32) -> Int32 { a &* b }
}

enum Arithmetic {
    static let lhs = 0, rhs = 1, output = 0

    typealias PrepareQuantized = (inout PrepareContext, Broadcast, FusedActivation) throws(ModelError) -> any Kernel

    /// Validates a binary arithmetic operator and returns its kernel; uint8/int8 go to `quantized`.
    static func prepare<Op: ArithmeticOperation>(_ context: inout PrepareContext, _ op: Op.Type,
                                                 quantized: PrepareQuantized) throws(ModelError) -> any Kernel {
        guard case .elementwise(let activation) = context.node.options else { throw context.invalid("missing \(Op.name)Options") }
        try context.expect(inputs: 2 ... 2, outputs: 1)
        let broadcast = try context.broadcast(lhs: lhs, rhs: rhs, output: output)
        let a = context.node.inputs[lhs], b = context.node.inputs[rhs], out = context.node.outputs[output]
        switch try context.input(lhs).dataType {
        case .float32:
            let range = try context.floatActivationRange(activation)
            return ArithmeticFloat32<Op>(lhs: a, rhs: b, output: out, broadcast: broadcast,
                                         lower: range.lowerBound, upper: range.upperBound)
        case .int32:
            let range = try context.int32ActivationRange(activation)
            return ArithmeticInt32<Op>(lhs: a, rhs: b, output: out, broadcast: broadcast,
                                       lower: range.lowerBound, upper: range.upperBound)
        case .uint8, .int8:
            return try quantized(&context, broadcast, activation)
        case let type:
            throw context.unsupported("operand type \(type)")
        }
    }
}

/// Float ADD, SUB, MUL, DIV. Threads take ranges of the broadcast's runs (`Broadcast.spans`):
/// of whole cache lines of the elements for same-shape operands, of the rows for broadcast ones
/// (a squeeze-and-excitation block's `[1, h, w, c] · [1, 1, 1, c]`: rows of `c`). The same
/// expression per element either way.
struct ArithmeticFloat32<Op: ArithmeticOperation>: PartitionedKernel {
    let lhs: Int, rhs: Int, output: Int
    let broadcast: Broadcast
    let lower: Float, upper: Float

    func eval(_ memory: TensorMemory) {
        memory.parallelize(self, count: broadcast.units, granularity: broadcast.unitGranularity,
                           work: broadcast.outputCount * TensorMemory.elementWork)
    }

    // Kernels run behind `any Kernel`, whose witness would be the unspecialised generic code;
    // these make it jump to the specialisation for each operation.
    @_specialize(where Op == Addition)
    @_specialize(where Op == Subtraction)
    @_specialize(where Op == Multiplication)
    @_specialize(where Op == Division)
    func evalPart(_ units: Range<Int>, step: Int, worker: Int, memory: TensorMemory) {
        let lower = lower, upper = upper
        let x = memory.input(lhs, as: Float.self), y = memory.input(rhs, as: Float.self), z = memory.output(output, as: Float.self)
        // Always clamped, as TFLite does: with no activation that still maps ±inf to ±max.
        @inline(__always) func f(_ a: Float, _ b: Float) -> Float { FloatGEMM.clamp(Op.apply(a, b), lower, upper) }
        let (xStep, yStep) = broadcast.innerStrides
        broadcast.spans(units) { l, r, o, count in
            let a = x + l, b = y + r, c = z + o
            switch (xStep, yStep) {
            case (1, 1): for i in 0 ..< count { c[i] = f(a[i], b[i]) }
            case (0, 1): for i in 0 ..< count { c[i] = f(a[0], b[i]) }
            case (1, 0): for i in 0 ..< count { c[i] = f(a[i], b[0]) }
            default: for i in 0 ..< count { c[i] = f(a[0], b[0]) }
            }
        }
    }
}

struct ArithmeticInt32<Op: ArithmeticOperation>: Kernel {
    let lhs: Int, rhs: Int, output: Int
    let broadcast: Broadcast
    let lower: Int32, upper: Int32

    // Kernels run behind `any Kernel`, whose witness would be the unspecialised generic code;
    // these make it jump to the specialisation for each operation.
    @_specialize(where Op == Addition)
    @_specialize(where Op == Subtraction)
    @_specialize(where Op == Multiplication)
    @_specialize(where Op == Division)
    func eval(_ memory: TensorMemory) {
        let lower = lower, upper = upper
        broadcast.apply(memory.input(lhs, as: Int32.self), memory.input(rhs, as: Int32.self),
                        memory.output(output, as: Int32.self)) { a, b in min(max(Op.apply(a, b), lower), upper) }
    }
}
