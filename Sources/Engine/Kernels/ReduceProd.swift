/// REDUCE_PROD: the product of the input over the constant int32 axes in input 1, in float32,
/// int32 or int64 (wrapping), each output multiplying its inputs in input order from 1, as
/// TFLite's reference `ReduceGeneric`. Dynamic-batch exports use it on int32 shapes. The
/// quantized int8/int16 kernel (TFLite's per-step rescaling) is not implemented.
enum ReduceProd {
    static let input = Mean.input, axes = Mean.axes, output = Mean.output

    static func prepare(_ context: inout PrepareContext) throws(ModelError) -> any Kernel {
        let reduction = try Mean.reduction(&context)
        let input = try context.input(Self.input), output = try context.output(Self.output)
        guard input.dataType == output.dataType else {
            throw context.invalid("output '\(output.name)' has type \(output.dataType), the input \(input.dataType)")
        }
        let (i, o) = (context.node.inputs[Self.input], context.node.outputs[Self.output])
        switch input.dataType {
        case .float32: return ReduceProdKernel<Float>(reduction, input: i, output: o) { $0 * $1 }
        case .int32: return ReduceProdKernel<Int32>(reduction, input: i, output: o) { $0 &* $1 }
        case .int64: return ReduceProdKernel<Int64>(reduction, input: i, output: o) { $0 &* $1 }
        default: throw context.unsupported("input type \(input.dataType), expected float32, int32 or int64 (quantized REDUCE_PROD is not implemented)")
        }
    }
}

/// Walks the input in memory order over merged dimensions (as `ReduceMaxKernel`), so that every
/// output multiplies its inputs in input order.
struct ReduceProdKernel<T: Numeric & Sendable>: Kernel {
    let layout: ReductionLayout
    let input: Int, output: Int
    let multiply: @Sendable (T, T) -> T

    init(_ r: Mean.Reduction, input: Int, output: Int, multiply: @escaping @Sendable (T, T) -> T) {
        layout = ReductionLayout(r)
        self.input = input
        self.output = output
        self.multiply = multiply
    }

    func eval(_ memory: TensorMemory) {
        let out = memory.output(output, as: T.self)
        out.update(repeating: 1, count: layout.outputCount)
        guard layout.inputCount > 0 else { return }
        var source = memory.input(input, as: T.self)
        accumulate(0, &source, out)
    }

    private func accumulate(_ d: Int, _ source: inout UnsafePointer<T>, _ products: UnsafeMutablePointer<T>) {
        let n = layout.extents[d], stride = layout.outputStrides[d]
        if d == layout.extents.count - 1 {
            for i in 0 ..< n { products[i * stride] = multiply(products[i * stride], source[i]) }
            source += n
            return
        }
        for i in 0 ..< n { accumulate(d + 1, &source, products + i * stride) }
    }
}
