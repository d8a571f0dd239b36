@testable import Engine

/// Runs `kernels` in order over `tensors`, each a tensor's bytes at the index the kernels name it
/// by, on a pool of `threads` threads that cuts every operator into parts (no work threshold),
/// and writes every buffer back into `tensors` (so a test sees its guard bytes too). The kernels
/// share `scratchBytes` of scratch and have `workerScratchBytes` per thread.
func evaluate(_ kernels: [any Kernel], on tensors: inout [[UInt8]], threads: Int, scratchBytes: Int = 64, workerScratchBytes: Int = 0) {
    let pool = WorkerPool(threadCount: threads, minimumWork: 0)
    defer { pool.shutdown() }
    let buffers = tensors.map { bytes -> UnsafeMutableRawPointer in
        let p = UnsafeMutableRawPointer.allocate(byteCount: max(bytes.count, 1), alignment: 64)
        bytes.withUnsafeBytes { if let source = $0.baseAddress { p.copyMemory(from: source, byteCount: bytes.count) } }
        return p
    }
    defer { buffers.forEach { $0.deallocate() } }
    let workerStride = (workerScratchBytes + 63) / 64 * 64
    let scratch = UnsafeMutableRawPointer.allocate(byteCount: max(scratchBytes, 64), alignment: 64)
    let workerScratch = UnsafeMutableRawPointer.allocate(byteCount: max(workerStride * threads, 64), alignment: 64)
    defer {
        scratch.deallocate()
        workerScratch.deallocate()
    }
    buffers.withUnsafeBufferPointer { addresses in
        let memory = TensorMemory(addresses: addresses.baseAddress!, scratch: scratch, workerScratch: workerScratch,
                                  workerScratchStride: workerStride, pool: pool)
        for kernel in kernels { kernel.eval(memory) }
    }
    for i in tensors.indices { tensors[i] = Array(UnsafeRawBufferPointer(start: buffers[i], count: tensors[i].count)) }
}
