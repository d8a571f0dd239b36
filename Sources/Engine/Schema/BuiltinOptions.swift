/// Reads the builtin options table of an operator into engine types.
///
/// Slot numbers are the field positions in the schema's options tables.
enum BuiltinOptionsReader {
    static func read(_ op: BuiltinOperator, _ t: Table?) throws -> OperatorOptions {
        // A missing options table means every field takes its schema default.
        func int(_ slot: Int, _ value: Int32 = 0) throws -> Int { Int(try t?.scalar(slot, default: value) ?? value) }
        func bool(_ slot: Int) throws -> Bool { try t?.bool(slot) ?? false }
        func float(_ slot: Int, _ value: Float = 0) throws -> Float { try t?.float(slot, default: value) ?? value }
        func padding(_ slot: Int) throws -> Padding {
            switch try t?.scalar(slot, default: Int8(0)) ?? 0 {
            case 0: return .same
            case 1: return .valid
            case let code: throw ModelError.malformed("unknown padding code \(code)")
            }
        }
        func activation(_ slot: Int) throws -> FusedActivation {
            try FusedActivation(schemaCode: t?.scalar(slot, default: Int8(0)) ?? 0)
        }

        switch op {
        case .conv2D:
            return .conv2D(Conv2DOptions(
                padding: try padding(0), strideWidth: try int(1), strideHeight: try int(2),
                dilationWidth: try int(4, 1), dilationHeight: try int(5, 1), activation: try activation(3)))
        case .depthwiseConv2D:
            return .depthwiseConv2D(DepthwiseConv2DOptions(
                padding: try padding(0), strideWidth: try int(1), strideHeight: try int(2),
                dilationWidth: try int(5, 1), dilationHeight: try int(6, 1),
                depthMultiplier: try int(3), activation: try activation(4)))
        case .averagePool2D, .maxPool2D:
            return .pool2D(Pool2DOptions(
                padding: try padding(0), strideWidth: try int(1), strideHeight: try int(2),
                filterWidth: try int(3), filterHeight: try int(4), activation: try activation(5)))
        case .fullyConnected:
            return .fullyConnected(FullyConnectedOptions(
                activation: try activation(0),
                weightsFormat: Int(try t?.scalar(1, default: Int8(0)) ?? 0), keepNumDims: try bool(2),
                asymmetricQuantizeInputs: try bool(3)))
        case .softmax:
            return .softmax(beta: try float(0))
        case .concatenation:
            return .concatenation(axis: try int(0), activation: try activation(1))
        case .add, .sub, .mul, .div:
            return .elementwise(activation: try activation(0))
        case .reshape:
            return .reshape(newShape: try t?.vector(0)?.integers(Int32.self))
        case .mean, .sum, .reduceMax, .reduceProd:
            return .reducer(keepDims: try bool(0))
        case .squeeze:
            return .squeeze(dims: try t?.vector(0)?.integers(Int32.self) ?? [])
        case .stridedSlice:
            return .stridedSlice(StridedSliceOptions(
                beginMask: try int(0), endMask: try int(1), ellipsisMask: try int(2),
                newAxisMask: try int(3), shrinkAxisMask: try int(4), offset: try bool(5)))
        case .pack:
            return .pack(valuesCount: try int(0), axis: try int(1))
        case .leakyRelu:
            return .leakyRelu(alpha: try float(0))
        case .resizeBilinear:
            return .resizeBilinear(ResizeBilinearOptions(alignCorners: try bool(2), halfPixelCenters: try bool(3)))
        case .resizeNearestNeighbor:
            return .resizeNearestNeighbor(ResizeBilinearOptions(alignCorners: try bool(0), halfPixelCenters: try bool(1)))
        case .split, .splitV:
            return .split(numSplits: try int(0))
        case .transposeConv:
            return .transposeConv(TransposeConvOptions(
                padding: try padding(0), strideWidth: try int(1), strideHeight: try int(2), activation: try activation(3)))
        case .depthToSpace, .spaceToDepth:
            return .blockSize(try int(0))
        case .argMax, .argMin:
            // ArgMaxOptions.output_type defaults to FLOAT32 (0) in the schema; TFLite only
            // accepts int32 and int64, and prepare rejects anything else.
            return .argMinMax(outputType: DataType(schemaCode: try t?.scalar(0, default: Int8(0)) ?? 0))
        case .gelu:
            return .gelu(approximate: try bool(0))
        case .gather:
            return .gather(axis: try int(0), batchDims: try int(1))
        case .mirrorPad:
            switch try t?.scalar(0, default: Int8(0)) ?? 0 {
            case 0: return .mirrorPad(.reflect)
            case 1: return .mirrorPad(.symmetric)
            case let code: throw ModelError.malformed("unknown mirror pad mode \(code)")
            }
        default:
            return .none
        }
    }
}
