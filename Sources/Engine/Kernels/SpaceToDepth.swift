/// SPACE_TO_DEPTH: `[N, H, W, C]` → `[N, H / b, W / b, C·b²]`, the inverse of DEPTH_TO_SPACE:
/// output pixel `(y, x)` holds the `b × b` block at `(y·b, x·b)` row by row, each pixel's
/// channels together. Data movement only: every fixed-size type, quantization unchanged.
enum SpaceToDepth {
    static let input = 0, output = 0

    static func prepare(_ context: inout PrepareContext) throws(ModelError) -> any Kernel {
        guard case .blockSize(let b) = context.node.options else { throw context.invalid("missing SpaceToDepthOptions") }
        try context.expect(inputs: 1 ... 1, outputs: 1)
        let input = try context.input(Self.input)
        let size = try context.expectMovedUnchanged()
        try context.expect(input, rank: 4, role: "input")
        let (n, h, w, c) = (input.shape[0], input.shape[1], input.shape[2], input.shape[3])
        guard b >= 1, b <= 1 << 16, h % b == 0, w % b == 0 else {
            throw context.invalid("block_size \(b) must be ≥ 1 and divide the input height \(h) and width \(w)")
        }
        try context.setOutputShape(Self.output, [n, h / b, w / b, c * b * b])
        // Input viewed as [N, H/b, b, W/b, b, C], output as [N, H/b, W/b, b, b, C].
        let plan = Transposition(inputShape: [n, h / b, b, w / b, b, c], permutation: [0, 1, 3, 2, 4, 5], elementSize: size)
        return TranspositionKernel(plan: plan, input: context.node.inputs[Self.input], output: context.node.outputs[Self.output])
    }
}
