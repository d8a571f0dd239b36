/// Copies a tensor's bytes unchanged: the kernel of every operator that only relabels a shape
/// (RESHAPE, SQUEEZE).
struct ByteCopy: Kernel {
    let input: Int, output: Int
    let byteCount: Int

    func eval(_ memory: TensorMemory) {
        memory.raw(output).copyMemory(from: memory.raw(input), byteCount: byteCount)
    }
}

extension PrepareContext {
    /// Checks that input `input` and output `output` have one element type and sets the output's
    /// shape to `shape`, which must hold as many elements as the input; returns a `ByteCopy`.
    mutating func relabel(input: Int, output: Int, as shape: [Int]) throws(ModelError) -> ByteCopy {
        let source = try self.input(input), target = try self.output(output)
        guard source.dataType == target.dataType, let size = source.dataType.byteSize else {
            throw unsupported("input type \(source.dataType) with output type \(target.dataType)")
        }
        guard checkedByteCount(shape, elementSize: 1) == source.elementCount else {
            throw invalid("output shape \(shape) does not hold the \(source.elementCount) elements of input shape \(source.shape)")
        }
        try setOutputShape(output, shape)
        return ByteCopy(input: node.inputs[input], output: node.outputs[output], byteCount: source.elementCount * size)
    }
}
