/// REDUCE_MAX: the largest input over the constant int32 axes in input 1, as TFLite's reference
/// `ReduceGeneric`: each output starts at the type's lowest value (`-Float.greatestFiniteMagnitude`
/// for float32, so an empty reduction gives it) and takes an input only when it is greater (a NaN
/// is never taken). 8-bit tensors compare raw values: input and output must share one
/// quantization. float32, uint8, int8, int16, int32, int64.
enum ReduceMax {
    static let input = Mean.input, axes = Mean.axes, output = Mean.output

    static func prepare(_ context: inout PrepareContext) throws(ModelError) -> any Kernel {
        let reduction = try Mean.reduction(&context)
        let input = try context.input(Self.input)
        _ = try context.expectMovedUnchanged(input: Self.input, output: Self.output)
        let (i, o) = (context.node.inputs[Self.input], context.node.outputs[Self.output])
        switch input.dataType {
        case .float32: return ReduceMaxKernel<Float>(reduction, lowest: -.greatestFiniteMagnitude, input: i, output: o)
        case .uint8: return ReduceMaxKernel<UInt8>(reduction, lowest: .min, input: i, output: o)
        case .int8: return ReduceMaxKernel<Int8>(reduction, lowest: .min, input: i, output: o)
        case .int16: return ReduceMaxKernel<Int16>(reduction, lowest: .min, input: i, output: o)
        case .int32: return ReduceMaxKernel<Int32>(reduction, lowest: .min, input: i, output: o)
        case .int64: return ReduceMaxKernel<Int64>(reduction, lowest: .min, input: i, output: o)
        default: throw context.unsupported("input type \(input.dataType)")
        }
    }
}

/// Walks the input in memory order over merged dimensions (as `MeanQuantized`), keeping the
/// largest value per output; the order does not matter for a maximum.
struct ReduceMaxKernel<T: Comparable & Sendable>: Kernel {
    let layout: ReductionLayout
    let lowest: T
    let input: Int, output: Int

    init(_ r: Mean.Reduction, lowest: T, input: Int, output: Int) {
        layout = ReductionLayout(r)
        self.lowest = lowest
        self.input = input
        self.output = output
    }

    func eval(_ memory: TensorMemory) {
        let out = memory.output(output, as: T.self)
        out.update(repeating: lowest, count: layout.outputCount)
        guard layout.inputCount > 0 else { return }
        var source = memory.input(input, as: T.self)
        accumulate(0, &source, out)
    }

    private func accumulate(_ d: Int, _ source: inout UnsafePointer<T>, _ best: UnsafeMutablePointer<T>) {
        let n = layout.extents[d], stride = layout.outputStrides[d]
        if d == layout.extents.count - 1 {
            for i in 0 ..< n {
                let value = source[i]
                if value > best[i * stride] { best[i * stride] = value }
            }
            source += n
            return
        }
        for i in 0 ..< n { accumulate(d + 1, &source, best + i * stride) }
    }
}
