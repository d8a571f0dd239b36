extension Node {
    /// Multiply-accumulates this operator performs (CONV_2D, DEPTHWISE_CONV_2D and
    /// FULLY_CONNECTED; 0 for the rest), from its filter and output shapes in `tensors`
    /// (a plan's prepared descriptors, or a graph's declared ones).
    ///
    /// ```swift
    /// let total = plan.graph.nodes.reduce(0) { $0 + $1.multiplyAccumulates(tensors: plan.tensors) }
    /// ```
    public func multiplyAccumulates(tensors: [TensorDescriptor]) -> Int {
        func shape(_ list: [Int], _ slot: Int) -> [Int]? {
            guard list.indices.contains(slot), list[slot] >= 0, tensors.indices.contains(list[slot]) else { return nil }
            return tensors[list[slot]].shape
        }
        guard let out = shape(outputs, 0), let filter = shape(inputs, 1) else { return 0 }
        let pixels = out.reduce(1, *)
        switch op {
        case .conv2D where filter.count == 4: return pixels * filter[1] * filter[2] * filter[3]
        case .depthwiseConv2D where filter.count == 4: return pixels * filter[1] * filter[2]
        case .fullyConnected where filter.count == 2: return pixels * filter[1]
        default: return 0
        }
    }
}

extension Plan {
    /// Multiply-accumulates of `node` with the shapes inferred by preparation.
    public func multiplyAccumulates(_ node: Node) -> Int { node.multiplyAccumulates(tensors: tensors) }
}
