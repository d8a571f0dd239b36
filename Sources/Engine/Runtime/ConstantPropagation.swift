/// Operators whose inputs are all constants are run once while the plan is prepared, and their
/// outputs become constants. Dynamic-batch exports compute RESHAPE targets from SHAPE through
/// STRIDED_SLICE, PACK, GATHER, REDUCE_PROD and CONCATENATION on int32 tensors; folded, those
/// targets are constants by the time RESHAPE is prepared. The kernel that runs is the operator's
/// own, so a folded value is bit for bit what eval would compute.
enum ConstantPropagation {
    /// Outputs larger than this stay computed at run time (shape arithmetic is a few bytes).
    static let maxFoldedBytes = 1 << 16

    /// Runs `kernel` on the constant inputs of `context`'s node and turns its outputs into
    /// constants, when every input is a constant and the outputs are small; returns the kernel
    /// that keeps the folded bytes alive (eval does nothing), or nil when the node is not folded.
    static func fold(_ kernel: any Kernel, _ context: inout PrepareContext) throws(ModelError) -> (any Kernel)? {
        let node = context.node
        let inputs = node.inputs.filter { $0 >= 0 }
        guard !inputs.isEmpty, inputs.allSatisfy({ context.tensors[$0].isConstant }) else { return nil }
        let outputs = node.outputs.map { context.tensors[$0] }
        guard outputs.allSatisfy({ !$0.isConstant && !$0.isVariable && $0.dataType.byteSize != nil }),
              outputs.reduce(0, { $0 + $1.byteCount }) <= maxFoldedBytes else { return nil }
        let storage = FoldedBytes(outputs.map(\.byteCount) + [context.scratchBytes, context.workerScratchBytes, 64])
        var addresses = [UnsafeMutableRawPointer](repeating: storage.pointers.last!, count: context.tensors.count)
        for t in inputs {
            addresses[t] = UnsafeMutableRawPointer(mutating: context.tensors[t].constantData!.bytes.baseAddress ?? UnsafeRawPointer(storage.pointers.last!))
        }
        for (k, t) in node.outputs.enumerated() { addresses[t] = storage.pointers[k] }
        // One thread: the folded bytes are what any session would compute (outputs never depend
        // on the thread count).
        let pool = WorkerPool(threadCount: 1)
        addresses.withUnsafeBufferPointer {
            kernel.eval(TensorMemory(addresses: $0.baseAddress!, scratch: storage.pointers[outputs.count],
                                     workerScratch: storage.pointers[outputs.count + 1], workerScratchStride: context.workerScratchBytes,
                                     pool: pool))
        }
        withExtendedLifetime(pool) {}
        for (k, t) in outputs.enumerated() {
            context.tensors[t.index] = TensorDescriptor(
                index: t.index, name: t.name, dataType: t.dataType, shape: t.shape, shapeSignature: t.shapeSignature,
                quantization: t.quantization, isVariable: false,
                constantData: ConstantData(bytes: UnsafeRawBufferPointer(start: storage.pointers[k], count: t.byteCount)))
        }
        return FoldedOperator(storage: storage)
    }
}

/// 64-byte-aligned blocks that folded outputs live in, for as long as the plan.
final class FoldedBytes: @unchecked Sendable {
    let pointers: [UnsafeMutableRawPointer]

    init(_ sizes: [Int]) {
        pointers = sizes.map { size in
            let p = UnsafeMutableRawPointer.allocate(byteCount: max(size, 1), alignment: 64)
            p.initializeMemory(as: UInt8.self, repeating: 0, count: max(size, 1))
            return p
        }
    }

    deinit { pointers.forEach { $0.deallocate() } }
}

/// An operator folded at prepare time: its outputs are constants held by `storage`.
struct FoldedOperator: Kernel {
    let storage: FoldedBytes

    func eval(_ memory: TensorMemory) {}
}
