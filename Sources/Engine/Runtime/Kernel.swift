/// Work for `WorkerPool.run`: task `task` of a job, on worker `worker`. Jobs are small values
/// (a kernel's address, its memory, its partition), copied to no heap.
protocol PoolJob {
    func run(task: Int, worker: Int)
}

/// A prepared operator: validated, shapes known, constants packed. `eval` only computes.
///
/// Kernels are immutable and shared by every `Session` of a `Plan`, so they hold no per-run state;
/// per-run memory comes from `TensorMemory` (tensors and a scratch area sized at prepare time).
protocol Kernel: Sendable {
    func eval(_ memory: TensorMemory)
    /// The folded constant this kernel owns, if it is one (`FoldedConstant`). A requirement, not
    /// a cast: `as? any DiscardableConstant` searches the conformance records of every loaded
    /// library (Foundation's are many) the first time it meets a kernel type.
    var discardableConstant: (any DiscardableConstant)? { get }
}

extension Kernel {
    var discardableConstant: (any DiscardableConstant)? { nil }
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
///
/// The job holds its kernel by address (`TensorMemory.parallelize` keeps the kernel alive on its
/// stack until every task has finished) and each task calls it through `withBorrowedCopy`. A
/// job holding its kernel by value was copied, kernel and all, for every task: each copy
/// retained and released every buffer the kernel holds, atomic writes to the same objects from
/// all threads at once, about 4 % of a two-thread MobileNetV2 int8 invocation.
struct PartitionJob<K: PartitionedKernel>: PoolJob {
    let kernel: UnsafePointer<K>
    let memory: TensorMemory
    let partition: WorkPartition
    let step: Int

    func run(task: Int, worker: Int) {
        let units = partition.range(task)
        guard !units.isEmpty else { return }
        withBorrowedCopy(of: kernel) { kernel in kernel.evalPart(units, step: step, worker: worker, memory: memory) }
    }
}

/// `body` on a bitwise copy of `value` that owns nothing: it retains none of the references
/// inside and is never destroyed, so it costs one `memcpy`. Sound because `value` outlives the
/// call and nothing changes it meanwhile. `inout` (on memory only this call uses) lets the
/// callee borrow the copy where it is: a method called on `value.pointee` gets a retaining copy.
/// The copy is on the stack for values of a few hundred bytes, as kernels are (664 at most in
/// the default build); `compare_litert.py --allocations` would report one that is not.
@inline(__always)
func withBorrowedCopy<T, Result>(of value: UnsafePointer<T>, _ body: (inout T) -> Result) -> Result {
    withUnsafeTemporaryAllocation(of: T.self, capacity: 1) { copy in
        UnsafeMutableRawPointer(copy.baseAddress!).copyMemory(from: value, byteCount: MemoryLayout<T>.size)
        return body(&copy[0])
    }
}

/// A kernel whose parallel steps are grids of tiles (`TileGrid`): `eval` makes a step's grid once
/// and hands it to `TensorMemory.parallelize(_:step:grid:)`; each task computes one tile.
protocol TiledKernel: Kernel {
    /// Computes tile `rows` × `columns` of step `step` (both non-empty), with worker `worker`'s
    /// scratch.
    func evalTile(rows: Range<Int>, columns: Range<Int>, step: Int, worker: Int, memory: TensorMemory)
}

/// One step of a tiled kernel as a `PoolJob`: task `i` is tile `i` of the grid.
/// It holds its kernel by address, as `PartitionJob` does.
struct TileJob<K: TiledKernel>: PoolJob {
    let kernel: UnsafePointer<K>
    let memory: TensorMemory
    let grid: TileGrid
    let step: Int

    func run(task: Int, worker: Int) {
        let (rows, columns) = grid.tile(task)
        guard !rows.isEmpty, !columns.isEmpty else { return }
        withBorrowedCopy(of: kernel) { kernel in
            kernel.evalTile(rows: rows, columns: columns, step: step, worker: worker, memory: memory)
        }
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
    /// The session's grids, one per step of its plan (`grid(_:)`); nil outside a session.
    var grids: UnsafeMutablePointer<TileGrid?>? = nil
    /// The step of the plan being evaluated: its place in `grids`.
    var step = 0

    /// Operators smaller than this (multiply-adds or element operations) run on one thread: a
    /// dispatch costs about a microsecond between operators and a few after the workers parked
    /// (see `swiftlite bench --dispatch`), about what a convolution of this size would win back.
    /// The bound is that low because an operator on one thread also reads the parts of its input
    /// that the other threads wrote, from their cores' caches, and the small operators of the
    /// small models (pools, pads, channel tails of 8 or fewer) do less per unit of work than a
    /// convolution's tiles. `SWIFTLITE_PARALLEL_THRESHOLD=N` overrides it for a session (the
    /// tests set 0 to push every operator through the threads).
    static let minimumParallelWork = 50_000
    /// The work of one element of a float elementwise operator (a load, a store and an operation
    /// or two) in the units `parallelize` counts, a convolution's multiply-adds, of which one
    /// vector step does sixteen.
    static let elementWork = 4
    /// Tasks per thread: more than one lets a thread that was preempted (the machine is shared)
    /// be covered by the others.
    static let partsPerThread = 4

    var threadCount: Int { pool.threadCount }

    /// The tiles of the operator being evaluated: `choose()` at the session's first evaluation of
    /// it, the same grid after that. A grid depends only on the operator's shapes and the
    /// session's threads, and choosing one (`TileGrid.cheapest`, `balanced`: a makespan per
    /// candidate) is work the other threads would wait for in every evaluation. One grid per
    /// operator: an operator must not choose two different grids in one evaluation.
    @inline(__always)
    func grid(_ choose: () -> TileGrid) -> TileGrid {
        guard let grids else { return choose() }
        if let grid = grids[step] { return grid }
        let grid = choose()
        grids[step] = grid
        return grid
    }

    /// How many tasks `parallelize` cuts an operator of `work` into at most: 1 when it runs it on
    /// the calling thread (one thread, or below the threshold).
    func taskCount(work: Int) -> Int {
        pool.threadCount > 1 && work >= pool.minimumWork ? pool.threadCount * Self.partsPerThread : 1
    }

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
        withUnsafePointer(to: kernel) { kernel in
            pool.run(tasks: partition.parts, PartitionJob(kernel: kernel, memory: self, partition: partition, step: step))
        }
    }

    /// Runs every tile of `grid` (made with no more tasks than `taskCount(work:)`, so a single
    /// tile below the threshold) as one task across the session's threads; with one thread or
    /// one tile, in order on the calling thread.
    @inline(__always)
    func parallelize<K: TiledKernel>(_ kernel: K, step: Int = 0, grid: TileGrid) {
        withUnsafePointer(to: kernel) { kernel in
            pool.run(tasks: grid.count, TileJob(kernel: kernel, memory: self, grid: grid, step: step))
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
    func scratch<T>(as type: T.Type, worker: Int, offset: Int = 0) -> UnsafeMutablePointer<T> {
        (workerScratch + worker * workerScratchStride + offset).assumingMemoryBound(to: T.self)
    }
}
