/// SPLIT: cuts input 1 into `num_splits` equal parts along the constant axis in input 0
/// (negative counts from the end). Every fixed-size element type; quantization unchanged.
enum Split {
    static let axis = 0, input = 1

    static func prepare(_ context: inout PrepareContext) throws(ModelError) -> any Kernel {
        guard case .split(let count) = context.node.options else { throw context.invalid("missing SplitOptions") }
        try context.expect(inputs: 2 ... 2, outputs: context.node.outputs.count)
        let input = try context.input(Self.input)
        guard count >= 1, context.node.outputs.count == count else {
            throw context.invalid("num_splits \(count) must be ≥ 1 and equal the \(context.node.outputs.count) outputs")
        }
        let axes = try context.integerConstant(Self.axis, role: "axis")
        guard axes.count == 1 else { throw context.invalid("axis holds \(axes.count) values, expected 1") }
        let axis = try context.normalizedAxis(axes[0], rank: input.shape.count, of: input)
        let extent = input.shape[axis]
        guard extent % count == 0 else {
            throw context.invalid("dimension \(axis) of input shape \(input.shape) is not divisible into \(count) splits")
        }
        return try context.splitKernel(input: Self.input, axis: axis, sizes: Array(repeating: extent / count, count: count))
    }
}

/// Copies consecutive slices of one axis into the operator's outputs, in order.
struct SplitKernel: Kernel {
    let input: Int, outputs: [Int]
    /// Products of the dimensions before the axis, and bytes of one step along it.
    let outer: Int, rowBytes: Int
    /// Each output's size along the axis, and the axis size of the input.
    let sizes: [Int], extent: Int

    func eval(_ memory: TensorMemory) {
        let source = UnsafeRawPointer(memory.raw(input))
        var start = 0
        for (k, size) in sizes.enumerated() {
            let destination = memory.raw(outputs[k]), bytes = size * rowBytes
            for o in 0 ..< outer {
                (destination + o * bytes).copyMemory(from: source + (o * extent + start) * rowBytes, byteCount: bytes)
            }
            start += size
        }
    }
}

extension PrepareContext {
    /// `axis` in `-rank ..< rank`, made non-negative.
    func normalizedAxis(_ axis: Int, rank: Int, of tensor: TensorDescriptor) throws(ModelError) -> Int {
        guard axis >= -rank, axis < rank else {
            throw invalid("axis \(axis) is out of range for '\(tensor.name)' of rank \(rank) (shape \(tensor.shape))")
        }
        return axis < 0 ? axis + rank : axis
    }

    /// Validates the outputs of a split of input `slot` along `axis` into `sizes` and returns
    /// the kernel; each output takes the input's shape with its own size along the axis.
    mutating func splitKernel(input slot: Int, axis: Int, sizes: [Int]) throws(ModelError) -> SplitKernel {
        let input = try input(slot)
        for k in sizes.indices {
            _ = try expectMovedUnchanged(input: slot, output: k)
            var shape = input.shape
            shape[axis] = sizes[k]
            try setOutputShape(k, shape)
        }
        let elementSize = input.dataType.byteSize ?? 1
        return SplitKernel(input: node.inputs[slot], outputs: node.outputs,
                           outer: input.shape[..<axis].reduce(1, *),
                           rowBytes: input.shape[(axis + 1)...].reduce(1, *) * elementSize,
                           sizes: sizes, extent: input.shape[axis])
    }
}
