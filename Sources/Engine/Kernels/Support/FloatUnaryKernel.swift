/// `output[i] = f(input[i])` on float32 tensors.
struct FloatUnaryKernel: Kernel {
    let input: Int, output: Int
    let count: Int
    let f: @Sendable (Float) -> Float

    func eval(_ memory: TensorMemory) {
        let x = memory.input(input, as: Float.self), y = memory.output(output, as: Float.self)
        for i in 0 ..< count { y[i] = f(x[i]) }
    }
}

extension PrepareContext {
    /// The float32 kernel of an elementwise unary operator (input 0 → output 0, same shape):
    /// checks that the output is float32 too.
    func floatUnaryKernel(_ input: TensorDescriptor, output: TensorDescriptor,
                          _ f: @escaping @Sendable (Float) -> Float) throws(ModelError) -> FloatUnaryKernel {
        try expect(output, is: .float32, role: "output")
        return FloatUnaryKernel(input: node.inputs[0], output: node.outputs[0], count: input.elementCount, f: f)
    }
}
