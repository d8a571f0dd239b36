/// A prepared operator: validated, shapes known, constants packed. `eval` only computes.
///
/// Kernels are immutable and shared by every `Session` of a `Plan`, so they hold no per-run state;
/// per-run memory comes from `TensorMemory` (tensors and a scratch area sized at prepare time).
protocol Kernel: Sendable {
    func eval(_ memory: TensorMemory)
}

/// A kernel whose `eval` cuts its output into parts (`TensorMemory.parallelize`) that any of the
/// session's threads may compute.
protocol PartitionedKernel: Kernel {
    /// Computes output `units` of step `step` (kernels with several parallel steps, such as a
    /// padding pass then a convolution, or one per batch, number them), using worker `worker`'s
    /// scratch.
    func evalPart(_ units: Range<Int>, step: Int, worker: Int, memory: TensorMemory)
}

/// One parallel step of a kernel as a `PoolJob`: task `i` is part `i` of the partition.
struct PartitionJob<K: PartitionedKernel>: PoolJob {
    let kernel: K
    let memory: TensorMemory
    let partition: WorkPartition
    let step: Int

    func run(task: Int, worker: Int) {
        let units = partition.range(task)
        if !units.isEmpty { kernel.evalPart(units, step: step, worker: worker, memory: memory) }
    }
}

/// The memory of one session as kernels see it: an address per tensor, a scratch area shared by
/// the operator's threads, one scratch area per worker thread, and the session's threads.
///
/// Addresses are typed by the caller; prepare has checked each tensor's type and size, so the
/// accessors do no checking of their own.
struct TensorMemory {
    let addresses: UnsafePointer<UnsafeMutableRawPointer>
    let scratch: UnsafeMutableRawPointer
    /// Worker `w`'s scratch starts `w · workerScratchStride` bytes after `workerScratch`.
    let workerScratch: UnsafeMutableRawPointer
    let workerScratchStride: Int
    /// The session keeps its pool alive for as long as any `TensorMemory` of it is in use.
    unowned(unsafe) let pool: WorkerPool

    /// Operators smaller than this (multiply-adds or element operations) run on one thread: a
    /// dispatch costs a few microseconds (see `swiftlite bench --dispatch`), which such an
    /// operator would not win back. `SWIFTLITE_PARALLEL_THRESHOLD=N` overrides it for a session
    /// (the tests set 0 to push every operator through the threads).
    static let minimumParallelWork = 150_000
    /// Tasks per thread: more than one lets a thread that was preempted (the machine is shared)
    /// be covered by the others.
    static let partsPerThread = 4

    var threadCount: Int { pool.threadCount }

    /// Runs `kernel.evalPart(units, step: step, ...)` over `0 ..< count` units of output cut into
    /// parts of whole multiples of `granularity`, across the session's threads. With one thread,
    /// or when `work` is below the session's threshold (`minimumParallelWork`), it is one call on
    /// the whole range on the calling thread. Every part computes the same bytes whichever thread
    /// runs it, so the partition must only cut the *output* (never a sum).
    @inline(__always)
    func parallelize<K: PartitionedKernel>(_ kernel: K, step: Int = 0, count: Int, granularity: Int = 1, work: Int) {
        guard pool.threadCount > 1, work >= pool.minimumWork, count > granularity else {
            kernel.evalPart(0 ..< count, step: step, worker: 0, memory: self)
            return
        }
        let partition = WorkPartition(count: count, granularity: granularity, maxParts: pool.threadCount * Self.partsPerThread)
        guard partition.parts > 1 else {
            kernel.evalPart(0 ..< count, step: step, worker: 0, memory: self)
            return
        }
        pool.run(tasks: partition.parts, PartitionJob(kernel: kernel, memory: self, partition: partition, step: step))
    }

    @inline(__always)
    func input<T>(_ tensor: Int, as type: T.Type = T.self) -> UnsafePointer<T> {
        UnsafePointer(addresses[tensor].assumingMemoryBound(to: T.self))
    }

    @inline(__always)
    func output<T>(_ tensor: Int, as type: T.Type = T.self) -> UnsafeMutablePointer<T> {
        addresses[tensor].assumingMemoryBound(to: T.self)
    }

    @inline(__always)
    func raw(_ tensor: Int) -> UnsafeMutableRawPointer { addresses[tensor] }

    @inline(__always)
    func scratch<T>(as type: T.Type, offset: Int = 0) -> UnsafeMutablePointer<T> {
        (scratch + offset).assumingMemoryBound(to: T.self)
    }

    /// Worker `worker`'s own scratch (`PrepareContext.requestWorkerScratch`).
    @inline(__always)
    func scratch<T>(as type: T.Type, worker: Int) -> UnsafeMutablePointer<T> {
        (workerScratch + worker * workerScratchStride).assumingMemoryBound(to: T.self)
    }
}
