/// CONCATENATION: joins any number of inputs along `axis` (negative counts from the end); every
/// other dimension must match.
///
/// Data is copied as bytes, so every element type works; quantized inputs whose scale or zero
/// point differ from the output's need requantizing and go to `prepareQuantized`.
enum Concatenation {
    static let output = 0

    static func prepare(_ context: inout PrepareContext) throws(ModelError) -> any Kernel {
        guard case .concatenation(let axisOption, let activation) = context.node.options else {
            throw context.invalid("missing ConcatenationOptions")
        }
        guard !context.node.inputs.isEmpty, context.node.outputs.count == 1 else {
            throw context.invalid("has \(context.node.inputs.count) inputs and \(context.node.outputs.count) outputs, expected at least 1 and 1")
        }
        var inputs = [TensorDescriptor]()
        for slot in context.node.inputs.indices { inputs.append(try context.input(slot)) }
        let output = try context.output(Self.output)
        let first = inputs[0], rank = first.shape.count
        let axis = axisOption < 0 ? axisOption + rank : axisOption
        guard (0 ..< rank).contains(axis) else {
            throw context.invalid("axis \(axisOption) is out of range for inputs of rank \(rank)")
        }
        var shape = first.shape
        shape[axis] = 0
        for (slot, t) in inputs.enumerated() {
            guard t.dataType == output.dataType else {
                throw context.invalid("input \(slot) ('\(t.name)') has type \(t.dataType), the output \(output.dataType)")
            }
            var expected = first.shape
            expected[axis] = t.shape.count == rank ? t.shape[axis] : 0
            guard t.shape == expected else {
                throw context.invalid("input \(slot) has shape \(t.shape), input 0 has \(first.shape): all dimensions but axis \(axis) must match")
            }
            shape[axis] += t.shape[axis]
        }
        try context.setOutputShape(Self.output, shape)

        guard let size = output.dataType.byteSize else { throw context.unsupported("type \(output.dataType)") }
        let outer = shape[..<axis].reduce(1, *), inner = shape[(axis + 1)...].reduce(1, *)
        let copy = ConcatenationCopy(inputs: context.node.inputs, output: context.node.outputs[Self.output], outerCount: outer,
                                     chunkBytes: inputs.map { $0.shape[axis] * inner * size }, clamp: nil)
        switch output.dataType {
        case .float32:
            guard activation != .none else { return copy }
            let range = try context.floatActivationRange(activation)
            return ConcatenationCopy(inputs: copy.inputs, output: copy.output, outerCount: outer, chunkBytes: copy.chunkBytes,
                                     clamp: (range.lowerBound, range.upperBound, shape.reduce(1, *)))
        case .uint8, .int8:
            let requantizes = inputs.contains {
                $0.quantization?.scale != output.quantization?.scale || $0.quantization?.zeroPoint != output.quantization?.zeroPoint
            }
            if requantizes || activation != .none {
                return try prepareQuantized(&context, axis: axis, activation: activation)
            }
            return copy
        default:
            guard activation == .none else { throw context.unsupported("fused activation \(activation) on \(output.dataType)") }
            return copy
        }
    }
}

/// For each of `outerCount` slices, copies every input's chunk in turn; float outputs may then be
/// clamped by a fused activation.
struct ConcatenationCopy: Kernel {
    let inputs: [Int], output: Int
    let outerCount: Int
    /// Bytes each input contributes per outer slice.
    let chunkBytes: [Int]
    let clamp: (lower: Float, upper: Float, count: Int)?

    func eval(_ memory: TensorMemory) {
        var dst = memory.raw(output)
        for o in 0 ..< outerCount {
            for (i, tensor) in inputs.enumerated() {
                let n = chunkBytes[i]
                dst.copyMemory(from: memory.raw(tensor) + o * n, byteCount: n)
                dst += n
            }
        }
        if let (lower, upper, count) = clamp {
            let out = memory.output(output, as: Float.self)
            for i in 0 ..< count { out[i] = FloatGEMM.clamp(out[i], lower, upper) }
        }
    }
}
