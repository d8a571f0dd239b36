/// PACK: stacks `values_count` inputs of one shape along a new dimension `axis` (negative counts
/// from the end of the output's dimensions).
enum Pack {
    static let output = 0

    static func prepare(_ context: inout PrepareContext) throws(ModelError) -> any Kernel {
        guard case .pack(let count, let axisOption) = context.node.options else { throw context.invalid("missing PackOptions") }
        guard count >= 1, context.node.inputs.count == count, context.node.outputs.count == 1 else {
            throw context.invalid("values_count \(count) with \(context.node.inputs.count) inputs and \(context.node.outputs.count) outputs, expected values_count ≥ 1 inputs and 1 output")
        }
        let output = try context.output(Self.output), first = try context.input(0)
        let axis = axisOption < 0 ? axisOption + first.shape.count + 1 : axisOption
        guard (0 ... first.shape.count).contains(axis) else {
            throw context.invalid("axis \(axisOption) is out of range for inputs of rank \(first.shape.count)")
        }
        for slot in 0 ..< count {
            let t = try context.input(slot)
            guard t.shape == first.shape, t.dataType == output.dataType else {
                throw context.invalid("input \(slot) is \(t.dataType) \(t.shape), expected \(output.dataType) \(first.shape) like input 0")
            }
            if t.dataType == .uint8 || t.dataType == .int8,
               t.quantization?.scale != output.quantization?.scale || t.quantization?.zeroPoint != output.quantization?.zeroPoint {
                throw context.invalid("input \(slot) is quantized differently from the output (PACK requires equal scale and zero point)")
            }
        }
        guard let size = output.dataType.byteSize else { throw context.unsupported("type \(output.dataType)") }
        var shape = first.shape
        shape.insert(count, at: axis)
        try context.setOutputShape(Self.output, shape)
        // Each input contributes one contiguous chunk of its trailing dimensions per outer slice.
        let outer = first.shape[..<axis].reduce(1, *), chunk = first.shape[axis...].reduce(size, *)
        return ConcatenationCopy(inputs: context.node.inputs, output: context.node.outputs[Self.output], outerCount: outer,
                                 chunkBytes: Array(repeating: chunk, count: count), clamp: nil)
    }
}
