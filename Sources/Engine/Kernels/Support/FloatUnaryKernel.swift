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

/// `y[i] = f(x[i])` for `count` floats, sixteen lanes a step; the last `count % 16` through one
/// more step on a zero-padded copy, of which only those lanes are stored. For kernels whose
/// per-element function is written on vectors (LOGISTIC, swish).
@inline(always)
func mapLanes(_ x: UnsafePointer<Float>, _ y: UnsafeMutablePointer<Float>, count: Int, _ f: (SIMD16<Float>) -> SIMD16<Float>) {
    typealias Lanes = SIMD16<Float>
    let source = UnsafeRawPointer(x), destination = UnsafeMutableRawPointer(y)
    let stride = MemoryLayout<Float>.stride
    let end = count - count % Lanes.scalarCount
    var i = 0
    while i < end {
        destination.storeBytes(of: f(source.loadUnaligned(fromByteOffset: i &* stride, as: Lanes.self)), toByteOffset: i &* stride,
                               as: Lanes.self)
        i &+= Lanes.scalarCount
    }
    guard end < count else { return }
    var tail = Lanes()
    for lane in 0 ..< count - end { tail[lane] = x[end + lane] }
    let result = f(tail)
    for lane in 0 ..< count - end { y[end + lane] = result[lane] }
}
