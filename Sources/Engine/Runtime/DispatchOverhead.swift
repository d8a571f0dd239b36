#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What one parallel operator pays for its threads, timed on an empty body (nanoseconds per
/// dispatch: the median, which is the typical cost, and the mean, which includes the times a
/// worker was preempted by another process on a busy machine).
public struct DispatchOverhead: Sendable {
    /// Dispatches that follow one another (the workers spinning), as between the operators of
    /// one invocation.
    public let backToBackMedian: Double, backToBackMean: Double
    /// Dispatches after the workers have parked (the first operator of an invocation that
    /// follows a pause).
    public let afterPauseMedian: Double, afterPauseMean: Double

    /// Times `dispatches` dispatches of an empty partitioned kernel through
    /// `TensorMemory.parallelize` (the path every parallel operator takes: partition, hand-out of
    /// `threadCount · partsPerThread` tasks, wait) on a fresh pool, back to back, and a few each
    /// after a pause long enough for the workers to park.
    public static func measure(threadCount: Int, dispatches: Int = 20_000) throws(ModelError) -> DispatchOverhead {
        try Session.validate(threadCount: threadCount)
        let pool = WorkerPool(threadCount: threadCount, minimumWork: 0)
        defer { pool.shutdown() }
        struct Empty: PartitionedKernel {
            func eval(_ memory: TensorMemory) {}
            func evalPart(_ units: Range<Int>, step: Int, worker: Int, memory: TensorMemory) {}
        }
        let word = UnsafeMutableRawPointer.allocate(byteCount: 64, alignment: 64)
        let addresses = UnsafeMutablePointer<UnsafeMutableRawPointer>.allocate(capacity: 1)
        addresses.initialize(to: word)
        defer { addresses.deallocate(); word.deallocate() }
        let memory = TensorMemory(addresses: UnsafePointer(addresses), scratch: word, workerScratch: word, workerScratchStride: 0, pool: pool)
        func once() -> Double {
            let start = WorkerPool.now()
            memory.parallelize(Empty(), count: 1 << 20, work: Int.max)
            return Double(WorkerPool.now() - start)
        }
        for _ in 0 ..< 100 { _ = once() }
        var hot = [Double](repeating: 0, count: max(1, dispatches))
        for k in hot.indices { hot[k] = once() }
        var cold = [Double](repeating: 0, count: max(1, min(200, dispatches / 50)))
        for k in cold.indices {
            usleep(2_000)
            cold[k] = once()
        }
        hot.sort()
        cold.sort()
        return DispatchOverhead(backToBackMedian: hot[hot.count / 2], backToBackMean: hot.reduce(0, +) / Double(hot.count),
                                afterPauseMedian: cold[cold.count / 2], afterPauseMean: cold.reduce(0, +) / Double(cold.count))
    }
}
