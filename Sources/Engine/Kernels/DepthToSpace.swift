/// DEPTH_TO_SPACE: `[N, H, W, C]` → `[N, H·b, W·b, C / b²]`; output pixel `(y·b + i, x·b + j)`
/// takes channels `(i·b + j)·C' ..< (i·b + j + 1)·C'` of input pixel `(y, x)`, as TFLite's
/// reference kernel. Data movement only: every fixed-size type, quantization unchanged.
enum DepthToSpace {
    static let input = 0, output = 0

    static func prepare(_ context: inout PrepareContext) throws(ModelError) -> any Kernel {
        guard case .blockSize(let b) = context.node.options else { throw context.invalid("missing DepthToSpaceOptions") }
        try context.expect(inputs: 1 ... 1, outputs: 1)
        let input = try context.input(Self.input)
        let size = try context.expectMovedUnchanged()
        try context.expect(input, rank: 4, role: "input")
        let (n, h, w, c) = (input.shape[0], input.shape[1], input.shape[2], input.shape[3])
        guard b >= 1, b <= 1 << 16, c % (b * b) == 0 else {
            throw context.invalid("block_size \(b) must be ≥ 1 and its square must divide the \(c) input channels")
        }
        let depth = c / (b * b)
        try context.setOutputShape(Self.output, [n, h * b, w * b, depth])
        // Input viewed as [N, H, W, b, b, C'], output as [N, H, b, W, b, C'].
        let plan = Transposition(inputShape: [n, h, w, b, b, depth], permutation: [0, 1, 3, 2, 4, 5], elementSize: size)
        return TranspositionKernel(plan: plan, input: context.node.inputs[Self.input], output: context.node.outputs[Self.output])
    }
}
