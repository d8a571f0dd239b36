import XCTest
@testable import Engine

/// One integer CONV_2D, DEPTHWISE_CONV_2D or FULLY_CONNECTED prepared by the engine's own
/// `prepare` (inputs after the first are constants: filter or weights, bias) on constant memory
/// of its own, run on fresh tensor memory with separate scratch for each of `workers` workers.
final class PreparedQuantizedOperator {
    static let workers = 3
    let kernel: any Kernel
    let context: PrepareContext
    let input: QuantizedOperand
    private var constants = [UnsafeMutableRawPointer]()

    init(_ op: BuiltinOperator, _ options: OperatorOptions, inputs: [QuantizedOperand], output: QuantizedOperand) throws {
        var tensors = [TensorDescriptor]()
        for (i, operand) in (inputs + [output]).enumerated() {
            var constant: ConstantData?
            if i > 0, i < inputs.count {
                let p = UnsafeMutableRawPointer.allocate(byteCount: max(operand.bytes.count, 1), alignment: 64)
                p.copyMemory(from: operand.bytes, byteCount: operand.bytes.count)
                constants.append(p)
                constant = ConstantData(bytes: UnsafeRawBufferPointer(start: p, count: operand.bytes.count))
            }
            let q = QuantizationParameters(scales: operand.scales, zeroPoints: operand.zeroPoints, quantizedDimension: operand.dimension)
            tensors.append(TensorDescriptor(index: i, name: "t\(i)", dataType: operand.type, shape: operand.shape, shapeSignature: nil,
                                            quantization: q, isVariable: false, constantData: constant))
        }
        let node = Node(index: 0, op: op, customName: nil, version: 1, inputs: Array(0 ..< inputs.count),
                        outputs: [inputs.count], options: options, customOptions: nil)
        var context = PrepareContext(node: node, tensors: tensors)
        do {
            switch op {
            case .conv2D: kernel = try Conv2D.prepare(&context)
            case .depthwiseConv2D: kernel = try DepthwiseConv2D.prepare(&context)
            default: kernel = try FullyConnected.prepare(&context)
            }
        } catch {
            constants.forEach { $0.deallocate() }
            throw error
        }
        self.context = context
        self.input = inputs[0]
    }

    func deallocate() { constants.forEach { $0.deallocate() } }

    /// The output tensor's shape, as prepare set it.
    var outputShape: [Int] { context.tensors[context.tensors.count - 1].shape }

    /// The output bytes after `body` ran on fresh memory (output prefilled with 0xEE).
    func run(_ body: (TensorMemory) -> Void) -> [UInt8] {
        let count = outputShape.reduce(1, *)
        let stride = (context.workerScratchBytes + 63) / 64 * 64
        let inputMemory = UnsafeMutableRawPointer.allocate(byteCount: max(input.bytes.count, 1), alignment: 64)
        let outputMemory = UnsafeMutableRawPointer.allocate(byteCount: max(count, 1), alignment: 64)
        let scratch = UnsafeMutableRawPointer.allocate(byteCount: max(context.scratchBytes, 1), alignment: 64)
        let workerScratch = UnsafeMutableRawPointer.allocate(byteCount: max(Self.workers * stride, 1), alignment: 64)
        defer { [inputMemory, outputMemory, scratch, workerScratch].forEach { $0.deallocate() } }
        inputMemory.copyMemory(from: input.bytes, byteCount: input.bytes.count)
        outputMemory.initializeMemory(as: UInt8.self, repeating: 0xEE, count: count)
        let addresses = [inputMemory] + constants + [outputMemory]
        addresses.withUnsafeBufferPointer { pointers in
            body(TensorMemory(addresses: pointers.baseAddress!, scratch: scratch, workerScratch: workerScratch,
                              workerScratchStride: stride, pool: .callingThread))
        }
        return Array(UnsafeBufferPointer(start: outputMemory.assumingMemoryBound(to: UInt8.self), count: count))
    }
}
