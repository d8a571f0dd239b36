/// How an operator's output is cut into tasks: `count` units (rows, pixels, elements) in parts
/// of whole multiples of `granularity` (the last part takes the remainder), as even as that allows.
struct WorkPartition {
    let count: Int
    let granularity: Int
    let parts: Int

    /// Units `0 ..< count` in up to `maxParts` parts.
    init(count: Int, granularity: Int, maxParts: Int) {
        self.count = count
        self.granularity = max(1, granularity)
        let granules = (count + self.granularity - 1) / self.granularity
        parts = max(1, min(maxParts, granules))
    }

    /// The units of part `index`.
    func range(_ index: Int) -> Range<Int> {
        let granules = (count + granularity - 1) / granularity
        let start = index * granules / parts * granularity
        let end = (index + 1) * granules / parts * granularity
        return min(start, count) ..< min(end, count)
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
    /// that a kernel may keep it for its locality: within 1/8. At 19 rows (10 and 9) on 2 threads,
    /// row parts are kept: cutting the channels to even the threads out would make each thread
    /// read rows the other's core wrote in the operator before, which costs more than the
    /// imbalance.
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
