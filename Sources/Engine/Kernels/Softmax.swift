import Foundation

/// SOFTMAX over the last axis: `output[..., c] = exp((x[..., c] − max) · β) / Σ_c exp((x[..., c] − max) · β)`,
/// computed in TFLite's reference order (the max, then each exponential and their running sum, then a
/// division by the sum).
enum Softmax {
    static let input = 0, output = 0

    static func prepare(_ context: inout PrepareContext) throws(ModelError) -> any Kernel {
        guard case .softmax(let beta) = context.node.options else { throw context.invalid("missing SoftmaxOptions") }
        try context.expect(inputs: 1 ... 1, outputs: 1)
        let input = try context.input(Self.input)
        guard let depth = input.shape.last else { throw context.invalid("input '\(input.name)' is a scalar; expected rank ≥ 1") }
        try context.setOutputShape(Self.output, input.shape)
        switch input.dataType {
        case .float32:
            try context.expect(try context.output(Self.output), is: .float32, role: "output")
            return SoftmaxFloat32(rows: depth == 0 ? 0 : input.elementCount / depth, depth: depth, beta: beta,
                                  input: context.node.inputs[Self.input], output: context.node.outputs[Self.output])
        case .uint8, .int8:
            return try prepareQuantized(&context, beta: beta, depth: depth)
        default:
            throw context.unsupported("input type \(input.dataType)")
        }
    }
}

struct SoftmaxFloat32: Kernel {
    /// Rows of `depth` elements, each normalised on its own.
    let rows: Int, depth: Int
    let beta: Float
    let input: Int, output: Int

    func eval(_ memory: TensorMemory) {
        var x = memory.input(input, as: Float.self)
        var y = memory.output(output, as: Float.self)
        for _ in 0 ..< rows {
            var largest = -Float.greatestFiniteMagnitude
            for c in 0 ..< depth { largest = largest < x[c] ? x[c] : largest }
            var sum: Float = 0
            for c in 0 ..< depth {
                let e = exp((x[c] - largest) * beta)
                y[c] = e
                sum += e
            }
            for c in 0 ..< depth { y[c] = y[c] / sum }
            x += depth
            y += depth
        }
    }
}
