extension PrepareContext {
    /// The prepare shared by the elementwise activations (RELU, LEAKY_RELU, LOGISTIC, TANH,
    /// HARD_SWISH): one input (slot 0), one output (slot 0) that takes the input's shape.
    /// A float32 input gets `float(count, input, output)` (tensor indices, the output checked to be
    /// float32 too), a uint8 or int8 input `quantized(&context, count)`; other types are unsupported.
    mutating func prepareElementwise(
        float: (_ count: Int, _ input: Int, _ output: Int) -> any Kernel,
        quantized: (inout PrepareContext, _ count: Int) throws(ModelError) -> any Kernel
    ) throws(ModelError) -> any Kernel {
        try expect(inputs: 1 ... 1, outputs: 1)
        let input = try self.input(0)
        try setOutputShape(0, input.shape)
        switch input.dataType {
        case .float32:
            try expect(try output(0), is: .float32, role: "output")
            return float(input.elementCount, node.inputs[0], node.outputs[0])
        case .uint8, .int8:
            return try quantized(&self, input.elementCount)
        default:
            throw unsupported("input type \(input.dataType)")
        }
    }

    /// The operands of a quantized binary elementwise op (ADD, SUB, MUL, DIV, SQUARED_DIFFERENCE,
    /// PRELU): inputs 0 and 1 and output 0, each with its per-tensor scale and zero point.
    /// `roles` name the two inputs in errors.
    func binaryQuantized(roles: (String, String) = ("input 0", "input 1")) throws(ModelError)
        -> (lhs: TensorDescriptor, lhsQ: AffineQuantization, rhs: TensorDescriptor, rhsQ: AffineQuantization,
            output: TensorDescriptor, outputQ: AffineQuantization) {
        let lhs = try input(0), rhs = try input(1), output = try output(0)
        return (lhs, try affineQuantization(of: lhs, role: roles.0), rhs, try affineQuantization(of: rhs, role: roles.1),
                output, try affineQuantization(of: output, role: "output"))
    }
}
