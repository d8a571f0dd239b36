/// The operands the integer CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED check alike, as
/// TFLite's conv.cc and fully_connected.cc prepare do: input, weights and output of one 8-bit
/// type, an optional int32 bias, per-tensor input and output quantization (zero points checked
/// by `affineQuantization`), and weights with quantization parameters. What the weights' scales
/// and zero points may be differs per operator and stays with it (`ConvolutionQuantization`,
/// `FullyConnectedQuantized`).
struct QuantizedOperands {
    let input: TensorDescriptor, weights: TensorDescriptor, output: TensorDescriptor
    let bias: TensorDescriptor?
    let inputQ: AffineQuantization, outputQ: AffineQuantization
    /// Not empty.
    let weightsQ: QuantizationParameters
    /// How the input's bytes are read.
    let encoding: ActivationEncoding

    /// uint8 or int8, the type of input, weights and output.
    var type: DataType { input.dataType }
}

extension PrepareContext {
    /// Checks and reads the operands at the given slots; `role` names the weights in errors
    /// ("filter", "weights").
    func quantizedOperands(input: Int, weights: Int, bias: Int, output: Int, role: String) throws(ModelError) -> QuantizedOperands {
        let inputTensor = try self.input(input), weightsTensor = try self.input(weights)
        let outputTensor = try self.output(output)
        let type = inputTensor.dataType
        try expect(weightsTensor, is: type, role: role)
        try expect(outputTensor, is: type, role: "output")
        let biasTensor = optionalInput(bias)
        if let biasTensor { try expect(biasTensor, is: .int32, role: "bias") }
        let inputQ = try affineQuantization(of: inputTensor, role: "input")
        let outputQ = try affineQuantization(of: outputTensor, role: "output")
        guard let weightsQ = weightsTensor.quantization, !weightsQ.scales.isEmpty else {
            throw invalid("\(role) '\(weightsTensor.name)' (\(type)) has no quantization parameters")
        }
        return QuantizedOperands(input: inputTensor, weights: weightsTensor, output: outputTensor, bias: biasTensor,
                                 inputQ: inputQ, outputQ: outputQ, weightsQ: weightsQ, encoding: ActivationEncoding(type, inputQ))
    }
}
