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

/// CONV_2D's options (strides and dilations in pixels).
public struct Conv2DOptions: Sendable, Equatable {
    /// SAME or VALID, as TFLite computes the output size and the padding before.
    public var padding: Padding
    /// Window steps in pixels, at least 1.
    public var strideWidth: Int, strideHeight: Int
    /// Gaps between filter taps in pixels (1: adjacent taps).
    public var dilationWidth: Int, dilationHeight: Int
    /// The activation applied to the output (clamped in the output type for quantized kernels).
    public var activation: FusedActivation
}

/// DEPTHWISE_CONV_2D's options; `depthMultiplier` is as stored (kernels derive it from the shapes).
public struct DepthwiseConv2DOptions: Sendable, Equatable {
    /// SAME or VALID, as TFLite computes the output size and the padding before.
    public var padding: Padding
    /// Window steps in pixels, at least 1.
    public var strideWidth: Int, strideHeight: Int
    /// Gaps between filter taps in pixels (1: adjacent taps).
    public var dilationWidth: Int, dilationHeight: Int
    /// Output channels per input channel, as the file stores it.
    public var depthMultiplier: Int
    /// The activation applied to the output (clamped in the output type for quantized kernels).
    public var activation: FusedActivation
}

/// AVERAGE_POOL_2D's and MAX_POOL_2D's options.
public struct Pool2DOptions: Sendable, Equatable {
    /// SAME or VALID, as TFLite computes the output size and the padding before.
    public var padding: Padding
    /// Window steps in pixels, at least 1.
    public var strideWidth: Int, strideHeight: Int
    /// The pooling window in pixels.
    public var filterWidth: Int, filterHeight: Int
    /// The activation applied to the output (clamped in the output type for quantized kernels).
    public var activation: FusedActivation
}

/// FULLY_CONNECTED's options.
public struct FullyConnectedOptions: Sendable, Equatable {
    /// The activation applied to the output (clamped in the output type for quantized kernels).
    public var activation: FusedActivation
    /// 0 = default row-major weights; others (shuffled formats) are rejected at prepare.
    public var weightsFormat: Int
    /// Keep the input rank (batch dimensions) in the output instead of flattening to 2-D.
    public var keepNumDims: Bool
    /// Hybrid (float input, int8 weights) only: quantize each input row with its own zero point
    /// instead of symmetrically.
    public var asymmetricQuantizeInputs = false
}

/// TRANSPOSE_CONV's options (the output shape is an input tensor).
public struct TransposeConvOptions: Sendable, Equatable {
    /// SAME or VALID, as TFLite computes the output size and the padding before.
    public var padding: Padding
    /// Window steps in pixels, at least 1.
    public var strideWidth: Int, strideHeight: Int
    /// The activation applied to the output (clamped in the output type for quantized kernels).
    public var activation: FusedActivation
}

/// MIRROR_PAD's mode: `reflect` leaves out the edge element, `symmetric` repeats it.
public enum MirrorPadMode: Sendable, Equatable {
    case reflect, symmetric
}

/// STRIDED_SLICE's bit masks (bit i refers to dimension i), as TFLite defines them.
public struct StridedSliceOptions: Sendable, Equatable {
    /// Bit i set: ignore begin[i] / end[i]; dimension i is the ellipsis; insert an axis; drop dimension i.
    public var beginMask: Int, endMask: Int, ellipsisMask: Int, newAxisMask: Int, shrinkAxisMask: Int
    /// End values are offsets from begin (TFLite `offset`), not positions.
    public var offset: Bool
}

/// The coordinate flags of RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR.
public struct ResizeBilinearOptions: Sendable, Equatable {
    /// Map the corner pixels of input and output onto each other.
    public var alignCorners: Bool
    /// Sample at pixel centres (`(x + 0.5) * scale - 0.5`), as TF2 resize does.
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
    /// RESIZE_NEAREST_NEIGHBOR has the same two flags.
    case resizeNearestNeighbor(ResizeBilinearOptions)
    /// SPLIT and SPLIT_V.
    case split(numSplits: Int)
    case transposeConv(TransposeConvOptions)
    /// DEPTH_TO_SPACE and SPACE_TO_DEPTH.
    case blockSize(Int)
    /// ARG_MAX and ARG_MIN: the index type (nil when the schema code is not one the engine knows).
    case argMinMax(outputType: DataType?)
    case gather(axis: Int, batchDims: Int)
    case mirrorPad(MirrorPadMode)
    case gelu(approximate: Bool)

    /// The fused activation, for operators that have one.
    public var activation: FusedActivation {
        switch self {
        case .conv2D(let o): return o.activation
        case .depthwiseConv2D(let o): return o.activation
        case .pool2D(let o): return o.activation
        case .fullyConnected(let o): return o.activation
        case .concatenation(_, let a), .elementwise(let a): return a
        case .transposeConv(let o): return o.activation
        default: return .none
        }
    }
}

extension FusedActivation: CustomStringConvertible {
    /// The schema's name: `NONE`, `RELU`, `RELU_N1_TO_1`, `RELU6`, `TANH`, `SIGN_BIT`.
    public var description: String {
        switch self {
        case .none: return "NONE"
        case .relu: return "RELU"
        case .reluN1To1: return "RELU_N1_TO_1"
        case .relu6: return "RELU6"
        case .tanh: return "TANH"
        case .signBit: return "SIGN_BIT"
        }
    }
}

extension OperatorOptions: CustomStringConvertible {
    /// The options as `key=value` pairs in the schema's terms, e.g.
    /// `padding=SAME stride=2x2 dilation=1x1 activation=RELU6` (empty for operators without options).
    public var description: String {
        func padding(_ p: Padding) -> String { p == .same ? "SAME" : "VALID" }
        switch self {
        case .none:
            return ""
        case .conv2D(let o):
            return "padding=\(padding(o.padding)) stride=\(o.strideHeight)x\(o.strideWidth) dilation=\(o.dilationHeight)x\(o.dilationWidth) activation=\(o.activation)"
        case .depthwiseConv2D(let o):
            return "padding=\(padding(o.padding)) stride=\(o.strideHeight)x\(o.strideWidth) dilation=\(o.dilationHeight)x\(o.dilationWidth) depth_multiplier=\(o.depthMultiplier) activation=\(o.activation)"
        case .pool2D(let o):
            return "padding=\(padding(o.padding)) filter=\(o.filterHeight)x\(o.filterWidth) stride=\(o.strideHeight)x\(o.strideWidth) activation=\(o.activation)"
        case .fullyConnected(let o):
            return "activation=\(o.activation) keep_num_dims=\(o.keepNumDims)\(o.weightsFormat == 0 ? "" : " weights_format=\(o.weightsFormat)")\(o.asymmetricQuantizeInputs ? " asymmetric_quantize_inputs=true" : "")"
        case .softmax(let beta):
            return "beta=\(beta)"
        case .concatenation(let axis, let activation):
            return "axis=\(axis) activation=\(activation)"
        case .elementwise(let activation):
            return "activation=\(activation)"
        case .reshape(let shape):
            return shape.map { "new_shape=\($0)" } ?? ""
        case .reducer(let keepDims):
            return "keep_dims=\(keepDims)"
        case .squeeze(let dims):
            return "squeeze_dims=\(dims)"
        case .stridedSlice(let o):
            return "begin_mask=\(o.beginMask) end_mask=\(o.endMask) ellipsis_mask=\(o.ellipsisMask) new_axis_mask=\(o.newAxisMask) shrink_axis_mask=\(o.shrinkAxisMask) offset=\(o.offset)"
        case .pack(let count, let axis):
            return "values_count=\(count) axis=\(axis)"
        case .leakyRelu(let alpha):
            return "alpha=\(alpha)"
        case .resizeBilinear(let o), .resizeNearestNeighbor(let o):
            return "align_corners=\(o.alignCorners) half_pixel_centers=\(o.halfPixelCenters)"
        case .split(let n):
            return "num_splits=\(n)"
        case .transposeConv(let o):
            return "padding=\(padding(o.padding)) stride=\(o.strideHeight)x\(o.strideWidth) activation=\(o.activation)"
        case .blockSize(let b):
            return "block_size=\(b)"
        case .argMinMax(let type):
            return "output_type=\(type?.rawValue ?? "unknown")"
        case .gather(let axis, let batchDims):
            return "axis=\(axis) batch_dims=\(batchDims)"
        case .mirrorPad(let mode):
            return "mode=\(mode == .reflect ? "REFLECT" : "SYMMETRIC")"
        case .gelu(let approximate):
            return "approximate=\(approximate)"
        }
    }
}
