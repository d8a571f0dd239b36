import Foundation

/// The mutable memory for running a `Plan`: one activation arena, one scratch area, and the
/// threads its heavy operators run on.
///
/// Create one session per calling thread. Nothing is allocated, and no thread is created, by
/// `invoke`: a session with `threadCount` > 1 starts its worker threads once, at init, and they
/// park between invocations.
///
/// ```swift
/// let session = try Session(plan: plan, threadCount: 2)
/// try session.copy(bytes, toTensor: plan.graph.inputs[0])
/// session.invoke()
/// let scores = session.bytes(ofTensor: plan.graph.outputs[0])
/// ```
public final class Session {
    /// The plan this session runs (shared, immutable).
    public let plan: Plan
    private let arenaMemory: ZeroedMemory
    private var arena: UnsafeMutableRawPointer { arenaMemory.pointer }
    private let scratch: UnsafeMutableRawPointer
    private let workerScratch: UnsafeMutableRawPointer
    private let workerScratchStride: Int
    private let addresses: UnsafeMutablePointer<UnsafeMutableRawPointer>
    private let pool: WorkerPool
    /// Each step's tiles, chosen at its first evaluation (`TensorMemory.grid`): one slot per step,
    /// then one per step for its first operator run alone (`invoke(stopAfter:)` between fused
    /// operators).
    private let grids: UnsafeMutablePointer<TileGrid?>
    private let trace = ProcessInfo.processInfo.environment["SWIFTLITE_TRACE"] != nil

    /// Threads that run each heavy operator (the calling thread and `threadCount − 1` workers).
    public var threadCount: Int { pool.threadCount }

    /// The most threads a session may use.
    public static let maxThreadCount = WorkerPool.maxThreadCount

    /// A session that runs every operator on the calling thread.
    public convenience init(plan: Plan) {
        try! self.init(plan: plan, threadCount: 1)  // 1 is always valid
    }

    /// Allocates (and zeroes) the arena and scratch memory the plan asks for, points every tensor
    /// at its place (arena offsets for activations, the mapped file for constants), and starts
    /// `threadCount − 1` worker threads.
    /// - Parameters:
    ///   - plan: the prepared model; sessions share it.
    ///   - threadCount: threads per operator, `1...Session.maxThreadCount`. Outputs are
    ///     byte-identical for every count.
    /// - Throws: `ModelError.invalidArgument` for a thread count outside that range.
    public init(plan: Plan, threadCount: Int) throws(ModelError) {
        try Self.validate(threadCount: threadCount)
        self.plan = plan
        arenaMemory = ZeroedMemory(byteCount: max(plan.arenaBytes, Plan.alignment), alignment: Plan.alignment)
        // Scratch is paged in by the operators that use it (sized for the largest, it is not all
        // touched).
        scratch = .allocate(byteCount: max(plan.scratchBytes, Plan.alignment), alignment: Plan.alignment)
        workerScratchStride = (plan.workerScratchBytes + Plan.alignment - 1) / Plan.alignment * Plan.alignment
        workerScratch = .allocate(byteCount: max(workerScratchStride * threadCount, Plan.alignment), alignment: Plan.alignment)
        let threshold = ProcessInfo.processInfo.environment["SWIFTLITE_PARALLEL_THRESHOLD"].flatMap { Int($0) }
        pool = WorkerPool(threadCount: threadCount, minimumWork: max(0, threshold ?? TensorMemory.minimumParallelWork))
        grids = .allocate(capacity: max((1 + Plan.maxFused) * plan.steps.count, 1))
        grids.initialize(repeating: nil, count: max((1 + Plan.maxFused) * plan.steps.count, 1))
        addresses = .allocate(capacity: max(plan.tensors.count, 1))
        for t in plan.tensors {
            if let offset = plan.arenaOffsets[t.index] {
                addresses[t.index] = arena + offset
            } else if let base = t.constantData?.bytes.baseAddress {
                // Constants are read in place (the loader aligned them); kernels never write them.
                addresses[t.index] = UnsafeMutableRawPointer(mutating: base)
            } else {
                addresses[t.index] = arena  // unused tensor: never read or written
            }
        }
    }

    /// Throws unless `threadCount` is in `1...maxThreadCount`.
    public static func validate(threadCount: Int) throws(ModelError) {
        guard (1 ... maxThreadCount).contains(threadCount) else {
            throw .invalidArgument("thread count \(threadCount) is invalid: it must be between 1 and \(maxThreadCount)")
        }
    }

    deinit {
        pool.shutdown()
        arenaMemory.deallocate()
        scratch.deallocate()
        workerScratch.deallocate()
        addresses.deallocate()
        grids.deinitialize(count: max((1 + Plan.maxFused) * plan.steps.count, 1))
        grids.deallocate()
    }

    private var memory: TensorMemory {
        TensorMemory(addresses: UnsafePointer(addresses), scratch: scratch, workerScratch: workerScratch,
                     workerScratchStride: workerScratchStride, pool: pool, grids: grids)
    }

    /// Runs every operator in order.
    /// - Parameter stopAfter: run only operators `0...stopAfter` (for bisecting a mismatch).
    public func invoke(stopAfter: Int? = nil) {
        pool.beginInvocation()
        defer { pool.endInvocation() }
        var memory = self.memory
        let last = stopAfter ?? Int.max
        // The steps are used in place (`for step in` copied each one, retaining its node's arrays
        // and its kernel).
        let steps = plan.steps
        for index in steps.indices {
            guard steps[index].node.index <= last else { return }
            memory.step = index
            if last != Int.max, let k = steps[index].fused.firstIndex(where: { $0.node.index > last }) {
                // Stopping between fused operators: those before the stop alone, which write their output
                // (with a grid slot of their own).
                memory.step = (k + 1) * steps.count + index
                steps[index].fused[k].before.eval(memory)
                return
            }
            if trace {
                let start = DispatchTime.now().uptimeNanoseconds
                steps[index].kernel.eval(memory)
                let micros = Double(DispatchTime.now().uptimeNanoseconds - start) / 1000
                let node = steps[index].node
                let name = ([node] + steps[index].fused.map(\.node)).map(\.opName).joined(separator: "+")
                FileHandle.standardError.write(Data("[swiftlite] op \(node.index) \(name) \(String(format: "%.1f", micros)) µs\n".utf8))
            } else {
                steps[index].kernel.eval(memory)
            }
        }
    }

    /// Runs every operator once, timing each: for every operator in execution order, its time
    /// and its threads' busy time, the nanoseconds all threads together spent computing it (the
    /// calling thread all the time except while it waited for workers at the end of a parallel
    /// part; each worker from joining a parallel part to finishing its last task there). One
    /// thread is busy all the time; `threadCount` threads busy all the time would sum to
    /// `threadCount × nanoseconds`. Of fused operators (see `Plan.fusedOperators`) the first
    /// has the times of all, the others 0.
    public func invokeProfiled() -> [(node: Node, nanoseconds: UInt64, busyNanoseconds: UInt64)] {
        pool.beginInvocation()
        pool.recordsBusyTime(true)
        defer {
            pool.recordsBusyTime(false)
            pool.endInvocation()
        }
        var memory = self.memory
        var times = [(node: Node, nanoseconds: UInt64, busyNanoseconds: UInt64)]()
        times.reserveCapacity(plan.graph.nodes.count)
        for (index, step) in plan.steps.enumerated() {
            memory.step = index
            let waited = pool.callerWaitNanoseconds, workersBusy = pool.workerBusyNanoseconds
            let start = WorkerPool.now()
            step.kernel.eval(memory)
            let elapsed = WorkerPool.now() - start
            let busy = elapsed - min(elapsed, pool.callerWaitNanoseconds - waited) + (pool.workerBusyNanoseconds - workersBusy)
            times.append((step.node, elapsed, busy))
            for fused in step.fused { times.append((fused.node, 0, 0)) }
        }
        return times
    }

    /// The bytes of tensor `index` (valid until the next `invoke`); empty for an index out of range.
    /// Empty, too, for a constant the plan discarded after packing (`Plan.discardedConstants`).
    public func bytes(ofTensor index: Int) -> UnsafeRawBufferPointer {
        guard plan.tensors.indices.contains(index), !plan.discardedConstants.contains(index) else {
            return UnsafeRawBufferPointer(start: nil, count: 0)
        }
        let t = plan.tensors[index]
        return UnsafeRawBufferPointer(start: addresses[index], count: t.byteCount)
    }

    /// Copies `data` into tensor `index`, which must be a non-constant tensor of exactly that size.
    public func copy(_ data: UnsafeRawBufferPointer, toTensor index: Int) throws(ModelError) {
        try checkWritable(index, byteCount: data.count)
        if let base = data.baseAddress { addresses[index].copyMemory(from: base, byteCount: data.count) }
    }

    /// Copies `data` into tensor `index`, which must be a non-constant tensor of exactly that size.
    public func copy(_ data: Data, toTensor index: Int) throws(ModelError) {
        try checkWritable(index, byteCount: data.count)
        data.withUnsafeBytes { raw in
            if let base = raw.baseAddress { addresses[index].copyMemory(from: base, byteCount: raw.count) }
        }
    }

    private func checkWritable(_ index: Int, byteCount: Int) throws(ModelError) {
        guard plan.tensors.indices.contains(index) else { throw .invalidArgument("tensor index \(index) out of range") }
        let t = plan.tensors[index]
        guard !t.isConstant else { throw .invalidArgument("tensor \(index) '\(t.name)' is a constant") }
        guard byteCount == t.byteCount else {
            throw .invalidArgument("tensor \(index) '\(t.name)' holds \(t.byteCount) bytes (\(t.shape) \(t.dataType)), got \(byteCount)")
        }
    }
}
