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

/// An output cut both ways into tasks: `rows.parts` parts down times `columns.parts` across (for
/// a GEMM: pixels and output channels). Task `t` is column part `t % columns.parts` of row part
/// `t / columns.parts`: the pool gives each thread a contiguous run of tasks, so each thread
/// gets whole row parts (the same pixels as in the operators before and after) where it can.
/// Kernels make one with no more tasks than `TensorMemory.taskCount(work:)` and run it with
/// `TensorMemory.parallelize(_:step:grid:)`.
struct TileGrid {
    let rows: WorkPartition
    let columns: WorkPartition

    /// One tile covering everything.
    init(rows: Int, columns: Int) {
        self.rows = WorkPartition(count: rows, granularity: rows, maxParts: 1)
        self.columns = WorkPartition(count: columns, granularity: columns, maxParts: 1)
    }

    init(rows: WorkPartition, columns: WorkPartition) {
        self.rows = rows
        self.columns = columns
    }

    /// Among the splits into powers of two across (`splits`) that give at least half as many tiles
    /// as the most of them and share the work out on `threads` threads within 1/32 of the best of
    /// them (`makespan`), the one that reads the least: every row part reads `bytesPerRowPart` that
    /// every other row part reads too (a GEMM's weights, for its rows of pixels), every column part
    /// `bytesPerColumnPart` (its input rows); the cost is
    /// `columnParts · bytesPerColumnPart + rowParts · bytesPerRowPart`.
    static func cheapest(tasks: Int, threads: Int, rows: Int, rowGranularity: Int, columns: Int, columnGranularity: Int,
                         bytesPerRowPart: Int, bytesPerColumnPart: Int) -> TileGrid {
        splits(tasks: tasks, threads: threads, rows: rows, rowGranularity: rowGranularity, columns: columns,
               columnGranularity: columnGranularity) { splits in
            let most = splits.reduce(1) { max($0, $1.grid.count) }
            let shortest = splits.reduce(Int.max) { $1.grid.count * 2 >= most ? min($0, $1.span) : $0 }
            var best = TileGrid(rows: rows, columns: columns), bestCost = Int.max
            for (grid, span) in splits where grid.count * 2 >= most && span <= shortest + shortest / 32 {
                let cost = grid.columns.parts * bytesPerColumnPart + grid.rows.parts * bytesPerRowPart
                if cost < bestCost { (best, bestCost) = (grid, cost) }
            }
            return best
        }
    }

    /// The split into powers of two across (`splits`) with the fewest column parts among those
    /// that share the work out on `threads` threads about as evenly as the best of them
    /// (`sharesOutEvenly`): whole row parts per thread where the rows share out about evenly, since
    /// a thread then reads the rows of input it wrote itself in the operator before; the channels
    /// cut as well where they do not (7 rows on 2 threads: 3 and 4).
    static func balanced(tasks: Int, threads: Int, rows: Int, rowGranularity: Int, columns: Int, columnGranularity: Int) -> TileGrid {
        splits(tasks: tasks, threads: threads, rows: rows, rowGranularity: rowGranularity, columns: columns,
               columnGranularity: columnGranularity) { splits in
            let shortest = splits.reduce(Int.max) { min($0, $1.span) }
            return splits.first { sharesOutEvenly($0.span, comparedTo: shortest) }!.grid
        }
    }

    /// Whether a split whose slowest thread takes `span` is near enough to the shortest `shortest`
    /// that a kernel may keep it for its locality: within 1/8. At 19 rows (10 and 9), cutting the
    /// channels 8 ways to even the threads out made the float person detector's depthwise layers
    /// 60 % slower on 2 threads (the threads then read each other's rows).
    static func sharesOutEvenly(_ span: Int, comparedTo shortest: Int) -> Bool { span <= shortest + shortest / 8 }

    /// The grids of 1, 2, 4, … (up to `tasks`) column parts, rows taking the rest of the `tasks`,
    /// each with its `makespan` on `threads` threads, in that order, handed to `body` from the
    /// stack (grids are chosen at a session's first evaluation of an operator, which allocates
    /// nothing).
    private static func splits<R>(tasks: Int, threads: Int, rows: Int, rowGranularity: Int, columns: Int, columnGranularity: Int,
                                  _ body: (UnsafeBufferPointer<(grid: TileGrid, span: Int)>) -> R) -> R {
        let count = Int.bitWidth - max(1, tasks).leadingZeroBitCount
        return withUnsafeTemporaryAllocation(of: (grid: TileGrid, span: Int).self, capacity: count) { buffer in
            for i in 0 ..< count {
                let columnPartition = WorkPartition(count: columns, granularity: columnGranularity, maxParts: 1 << i)
                let rowPartition = WorkPartition(count: rows, granularity: rowGranularity, maxParts: max(1, tasks / columnPartition.parts))
                let grid = TileGrid(rows: rowPartition, columns: columnPartition)
                (buffer.baseAddress! + i).initialize(to: (grid, grid.makespan(threads: threads)))
            }
            defer { buffer.baseAddress!.deinitialize(count: count) }
            return body(UnsafeBufferPointer(buffer))
        }
    }

    /// How long the slowest of `threads` equally fast threads takes over the tiles, in cells (a
    /// tile of r × c cells takes r · c): each takes its own run of tasks from the front, then the
    /// others' from the back, as `WorkerPool.run` deals them. Beyond `simulatedThreads` threads,
    /// the largest of the threads' own runs (the stealing is not followed: its cost grows with
    /// threads × tasks, and this runs in eval, once per operator and session).
    func makespan(threads: Int) -> Int {
        let tasks = count
        guard threads > 1, tasks > 1 else { return rows.count * columns.count }
        func cells(_ task: Int) -> Int {
            let (r, c) = tile(task)
            return r.count * c.count
        }
        guard threads <= Self.simulatedThreads else {
            var longest = 0
            for t in 0 ..< threads {
                var sum = 0
                for task in t * tasks / threads ..< (t + 1) * tasks / threads { sum += cells(task) }
                longest = max(longest, sum)
            }
            return longest
        }
        // Per thread: its run's next task, the end of its run, and its clock.
        return withUnsafeTemporaryAllocation(of: Int.self, capacity: 3 * Self.simulatedThreads) { state in
            for t in 0 ..< threads {
                state[t] = t * tasks / threads
                state[threads + t] = (t + 1) * tasks / threads
                state[2 * threads + t] = 0
            }
            var span = 0
            for _ in 0 ..< tasks {
                // The thread that is free first takes the next task.
                var thread = 0
                for t in 1 ..< threads where state[2 * threads + t] < state[2 * threads + thread] { thread = t }
                var task = 0
                if state[thread] < state[threads + thread] {
                    task = state[thread]
                    state[thread] += 1
                } else {
                    for offset in 1 ..< threads {
                        let other = (thread + offset) % threads
                        if state[other] < state[threads + other] {
                            state[threads + other] -= 1
                            task = state[threads + other]
                            break
                        }
                    }
                }
                state[2 * threads + thread] += cells(task)
                span = max(span, state[2 * threads + thread])
            }
            return span
        }
    }

    /// The most threads `makespan` follows task by task (3 Ints each on the stack).
    static let simulatedThreads = 8

    var count: Int { rows.parts * columns.parts }

    /// The rows and columns of task `index`.
    func tile(_ index: Int) -> (rows: Range<Int>, columns: Range<Int>) {
        (rows.range(index / columns.parts), columns.range(index % columns.parts))
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
