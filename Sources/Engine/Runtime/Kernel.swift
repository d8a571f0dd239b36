/// A prepared operator: validated, shapes known, constants packed. `eval` only computes.
///
/// Kernels are immutable and shared by every `Session` of a `Plan`, so they hold no per-run state;
/// per-run memory comes from `TensorMemory` (tensors and a scratch area sized at prepare time).
protocol Kernel: Sendable {
    func eval(_ memory: TensorMemory)
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

    /// Runs `body(units, worker)` over `0 ..< count` units of output cut into parts of whole
    /// multiples of `granularity`, across the session's threads. With one thread, or when `work`
    /// is below the session's threshold (`minimumParallelWork`), it is one call on the whole
    /// range on the calling thread.
    /// Every part computes the same bytes whichever thread runs it, so the partition must only
    /// cut the *output* (never a sum).
    @inline(__always)
    func parallelize(count: Int, granularity: Int = 1, work: Int, _ body: (_ units: Range<Int>, _ worker: Int) -> Void) {
        guard pool.threadCount > 1, work >= pool.minimumWork, count > granularity else {
            body(0 ..< count, 0)
            return
        }
        let partition = WorkPartition(count: count, granularity: granularity, maxParts: pool.threadCount * Self.partsPerThread)
        guard partition.parts > 1 else {
            body(0 ..< count, 0)
            return
        }
        pool.run(tasks: partition.parts) { task, worker in
            let units = partition.range(task)
            if !units.isEmpty { body(units, worker) }
        }
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
