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

struct ArithmeticFloat32<Op: ArithmeticOperation>: PartitionedKernel {
    let lhs: Int, rhs: Int, output: Int
    let broadcast: Broadcast
    let lower: Float, upper: Float

    // Kernels run behind `any Kernel`, whose witness would be the unspecialised generic code;
    // these make it jump to the specialisation for each operation.
    @_specialize(where Op == Addition)
    @_specialize(where Op == Subtraction)
    @_specialize(where Op == Multiplication)
    @_specialize(where Op == Division)
    func eval(_ memory: TensorMemory) {
        let lower = lower, upper = upper
        let x = memory.input(lhs, as: Float.self), y = memory.input(rhs, as: Float.self), z = memory.output(output, as: Float.self)
        guard broadcast.isElementwise else {
            // Always clamped, as TFLite does: with no activation that still maps ±inf to ±max.
            broadcast.apply(x, y, z) { a, b in min(max(Op.apply(a, b), lower), upper) }
            return
        }
        // Same shapes: threads take ranges of whole cache lines; the same expression per element.
        let count = broadcast.outputCount
        memory.parallelize(self, count: count, granularity: 16, work: count * 4)
    }

    /// Same-shape elements `range`.
    @_specialize(where Op == Addition)
    @_specialize(where Op == Subtraction)
    @_specialize(where Op == Multiplication)
    func evalPart(_ range: Range<Int>, step: Int, worker: Int, memory: TensorMemory) {
        let lower = lower, upper = upper
        let x = memory.input(lhs, as: Float.self), y = memory.input(rhs, as: Float.self), z = memory.output(output, as: Float.self)
        for i in range { z[i] = min(max(Op.apply(x[i], y[i]), lower), upper) }
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
