/// How a convolution or pooling window is padded (the schema's `Padding`).
public enum Padding: Sendable, Equatable {
    /// Output size `ceil(input / stride)`; padding split with the extra pixel at the end.
    case same
    /// No padding: output size `ceil((input - effectiveFilter + 1) / stride)`.
    case valid
}

/// An activation fused into the operator that precedes it (the schema's `ActivationFunctionType`).
public enum FusedActivation: Sendable, Equatable {
    case none, relu, reluN1To1, relu6, tanh, signBit

    init(schemaCode: Int8) throws(ModelError) {
        switch schemaCode {
        case 0: self = .none
        case 1: self = .relu
        case 2: self = .reluN1To1
        case 3: self = .relu6
        case 4: self = .tanh
        case 5: self = .signBit
        default: throw .malformed("unknown fused activation code \(schemaCode)")
        }
    }
}

public struct Conv2DOptions: Sendable, Equatable {
    public var padding: Padding
    public var strideWidth: Int, strideHeight: Int
    public var dilationWidth: Int, dilationHeight: Int
    public var activation: FusedActivation
}

public struct DepthwiseConv2DOptions: Sendable, Equatable {
    public var padding: Padding
    public var strideWidth: Int, strideHeight: Int
    public var dilationWidth: Int, dilationHeight: Int
    public var depthMultiplier: Int
    public var activation: FusedActivation
}

public struct Pool2DOptions: Sendable, Equatable {
    public var padding: Padding
    public var strideWidth: Int, strideHeight: Int
    public var filterWidth: Int, filterHeight: Int
    public var activation: FusedActivation
}

public struct FullyConnectedOptions: Sendable, Equatable {
    public var activation: FusedActivation
    /// 0 = default row-major weights; others (shuffled formats) are rejected at prepare.
    public var weightsFormat: Int
    public var keepNumDims: Bool
}

public struct StridedSliceOptions: Sendable, Equatable {
    public var beginMask: Int, endMask: Int, ellipsisMask: Int, newAxisMask: Int, shrinkAxisMask: Int
    public var offset: Bool
}

public struct ResizeBilinearOptions: Sendable, Equatable {
    public var alignCorners: Bool
    public var halfPixelCenters: Bool
}

/// The builtin options of an operator, already read out of the flatbuffer.
public enum OperatorOptions: Sendable, Equatable {
    case none
    case conv2D(Conv2DOptions)
    case depthwiseConv2D(DepthwiseConv2DOptions)
    case pool2D(Pool2DOptions)
    case fullyConnected(FullyConnectedOptions)
    case softmax(beta: Float)
    case concatenation(axis: Int, activation: FusedActivation)
    /// ADD, SUB, MUL: only a fused activation.
    case elementwise(activation: FusedActivation)
    case reshape(newShape: [Int]?)
    case reducer(keepDims: Bool)
    case squeeze(dims: [Int])
    case stridedSlice(StridedSliceOptions)
    case pack(valuesCount: Int, axis: Int)
    case leakyRelu(alpha: Float)
    case resizeBilinear(ResizeBilinearOptions)

    /// The fused activation, for operators that have one.
    public var activation: FusedActivation {
        switch self {
        case .conv2D(let o): return o.activation
        case .depthwiseConv2D(let o): return o.activation
        case .pool2D(let o): return o.activation
        case .fullyConnected(let o): return o.activation
        case .concatenation(_, let a), .elementwise(let a): return a
        default: return .none
        }
    }
}
