/// Output size and padding of a sliding window, exactly as TFLite computes them.
struct WindowGeometry: Sendable, Equatable {
    var outputSize: Int
    /// Padding before the first input element. SAME puts any odd extra pixel at the end.
    var paddingBefore: Int

    /// - Parameters: input size, filter size, stride and dilation along one axis.
    init(padding: Padding, input: Int, filter: Int, stride: Int, dilation: Int) {
        let effectiveFilter = (filter - 1) * dilation + 1
        switch padding {
        case .same: outputSize = (input + stride - 1) / stride
        case .valid: outputSize = (input + stride - effectiveFilter) / stride
        }
        let total = max((outputSize - 1) * stride + effectiveFilter - input, 0)
        paddingBefore = total / 2
    }
}

extension PrepareContext {
    /// Validates window parameters and computes geometry along one axis.
    func window(_ padding: Padding, input: Int, filter: Int, stride: Int, dilation: Int, axis: String) throws(ModelError) -> WindowGeometry {
        guard filter >= 1, stride >= 1, dilation >= 1 else {
            throw invalid("\(axis): filter \(filter), stride \(stride), dilation \(dilation) must all be ≥ 1")
        }
        guard filter <= 1 << 16, stride <= 1 << 16, dilation <= 1 << 16 else {
            throw invalid("\(axis): filter \(filter), stride \(stride) or dilation \(dilation) is absurdly large")
        }
        let geometry = WindowGeometry(padding: padding, input: input, filter: filter, stride: stride, dilation: dilation)
        guard geometry.outputSize >= 1 else {
            throw invalid("\(axis): a filter of \(filter) (dilation \(dilation)) does not fit an input of \(input) with VALID padding")
        }
        return geometry
    }
}
