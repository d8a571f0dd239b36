import Foundation
import Synchronization
import XCTest
@testable import Engine
import TestSupport

/// Intra-operator threads: every thread count gives the same bytes, and bad counts are rejected.
///
/// The threads split operators only above a work threshold; these tests set
/// `SWIFTLITE_PARALLEL_THRESHOLD=0` so that even the golden suites' tiny operators are cut into
/// parts (the uneven, one-row and tail parts are exactly what a partition bug would break).
final class ThreadingTests: XCTestCase {
    override func setUp() { setenv("SWIFTLITE_PARALLEL_THRESHOLD", "0", 1) }
    override func tearDown() { unsetenv("SWIFTLITE_PARALLEL_THRESHOLD") }

    // MARK: Whole models: 1, 2 and 3 threads byte-identical

    func testSharedModelsIdenticalAcrossThreadCounts() throws {
        let names = ["mobilenet_v1_0.25_128_quant", "mobilenet_v2_1.0_224_quant", "mobilenet_v2_1.0_224_inat_bird_quant",
                     "tf2_mobilenet_v2_1.0_224_ptq", "ssd_mobilenet_v1_coco_quant",
                     "perf/mobilenet_v2_1.0_224_f32", "perf/mobilenet_v2_1.0_224_int8"]
        for name in names { try checkThreadCounts(Fixtures.shared("models/\(name).tflite").path) }
    }

    func testBundledModelsIdenticalAcrossThreadCounts() throws {
        for name in ["efficientnet_lite0_f32", "efficientnet_lite0_int8", "person_detector_f32", "person_detector_int8"] {
            try checkThreadCounts(Fixtures.repositoryRoot.appendingPathComponent("Models/\(name).tflite").path)
        }
    }

    /// The arena keeps the graph's inputs (as TFLite's planner does): after `invoke` an input
    /// still holds what was copied in, and invoking again gives the same outputs. (Before, the
    /// input's memory went to a later tensor once read: a second invoke ran on that tensor.)
    func testInvokeAgainRunsTheSameInputs() throws {
        for name in ["efficientnet_lite0_f32", "person_detector_int8"] {
            let interpreter = try Interpreter(modelPath: Fixtures.repositoryRoot.appendingPathComponent("Models/\(name).tflite").path)
            try interpreter.allocateTensors()
            var state: UInt64 = 7
            let data = randomInput(try interpreter.input(at: 0), state: &state)
            try interpreter.copy(data, toInputAt: 0)
            try interpreter.invoke()
            XCTAssertEqual(try interpreter.input(at: 0).data, data, "\(name): input after invoke")
            let first = try (0 ..< interpreter.outputTensorCount).map { try interpreter.output(at: $0).data }
            try interpreter.invoke()
            let second = try (0 ..< interpreter.outputTensorCount).map { try interpreter.output(at: $0).data }
            XCTAssertEqual(first, second, "\(name): outputs of a second invoke")
        }
    }

    /// Runs `path` on two seeded random inputs with 1, 2 and 3 threads and requires every
    /// output, and every intermediate tensor, to be byte-identical to the 1-thread run.
    private func checkThreadCounts(_ path: String, file: StaticString = #filePath, line: UInt = #line) throws {
        var options = Interpreter.Options(threadCount: 1)
        options.preserveAllTensors = true
        let interpreters = try [1, 2, 3].map { threads in
            options.threadCount = threads
            let interpreter = try Interpreter(modelPath: path, options: options)
            try interpreter.allocateTensors()
            return interpreter
        }
        let graph = interpreters[0].graph
        let computed = Set(graph.nodes.flatMap(\.outputs)).union(graph.outputs).sorted()
        for seed in [1, 2] as [UInt64] {
            for interpreter in interpreters {
                var state = seed
                for i in 0 ..< interpreter.inputTensorCount {
                    let input = try interpreter.input(at: i)
                    try interpreter.copy(randomInput(input, state: &state), toInputAt: i)
                }
                try interpreter.invoke()
            }
            for t in computed {
                let expected = try interpreters[0].tensor(t).data
                for (k, threads) in [2, 3].enumerated() {
                    let actual = try interpreters[k + 1].tensor(t).data
                    guard actual != expected else { continue }
                    let differing = zip(actual, expected).filter { $0 != $1 }.count
                    let producer = graph.nodes.first { $0.outputs.contains(t) }
                    return XCTFail("\((path as NSString).lastPathComponent) seed \(seed): tensor \(t) (written by operator \(producer.map { "\($0.index) \($0.opName)" } ?? "none")) differs with \(threads) threads: \(differing) of \(expected.count) bytes",
                                   file: file, line: line)
                }
            }
        }
        print("threads: \((path as NSString).lastPathComponent): \(computed.count) tensors identical for 1, 2 and 3 threads")
    }

    /// Uniform [-1, 1) floats, or uniform bytes, from a xorshift generator.
    private func randomInput(_ tensor: Tensor, state: inout UInt64) -> Data {
        func next() -> UInt64 {
            state ^= state << 13; state ^= state >> 7; state ^= state << 17
            return state
        }
        if tensor.dataType == .float32 {
            let floats = (0 ..< tensor.data.count / 4).map { _ in Float(next() >> 40) / Float(1 << 23) - 1 }
            return floats.withUnsafeBytes { Data($0) }
        }
        return Data((0 ..< tensor.data.count).map { _ in UInt8(truncatingIfNeeded: next()) })
    }

    // MARK: Golden suites on 2 and 3 threads

    func testFloatGoldensOnTwoThreads() throws {
        try checkSuite(Fixtures.directory("EngineTests").appendingPathComponent("float"), options: .init(threadCount: 2))
    }

    func testQuantizedGoldensOnThreeThreads() throws {
        try checkSuite(Fixtures.directory("EngineTests").appendingPathComponent("quant"), options: .init(threadCount: 3))
    }

    func testQuantizedOpGoldensOnTwoThreads() throws {
        try checkSuite(Fixtures.directory("EngineTests").appendingPathComponent("quant_ops"), options: .init(threadCount: 2))
    }

    func testDetectorGoldensOnTwoThreads() throws {
        try checkSuite(Fixtures.directory("EngineTests").appendingPathComponent("person_detector"), options: .init(threadCount: 2))
    }

    // MARK: Invalid counts

    func testInvalidThreadCountsAreRejected() throws {
        let model = Fixtures.directory("EngineTests").appendingPathComponent("float/net_mobilenet_v1_025_128/model.tflite").path
        for count in [0, -1, -64, Session.maxThreadCount + 1, 1000, Int.max, Int.min] {
            XCTAssertThrowsError(try Interpreter(modelPath: model, options: .init(threadCount: count)), "thread count \(count)") { error in
                guard case .invalidArgument(let message) = error as? ModelError else {
                    return XCTFail("thread count \(count): expected ModelError.invalidArgument, got \(error)")
                }
                XCTAssertTrue(message.contains("thread count \(count)"), message)
                XCTAssertTrue(message.contains("between 1 and \(Session.maxThreadCount)"), message)
            }
        }
        let plan = try Plan(graph: Graph(contentsOf: model))
        XCTAssertThrowsError(try Session(plan: plan, threadCount: 0))
        XCTAssertEqual(try Session(plan: plan, threadCount: Session.maxThreadCount).threadCount, Session.maxThreadCount)
        XCTAssertEqual(try Interpreter(modelPath: model, options: .init(threadCount: nil)).options.threadCount, nil)
    }

    /// Sessions come and go (workers are joined) and a pool survives many short invocations.
    func testSessionsStartAndStopWorkers() throws {
        let model = Fixtures.directory("EngineTests").appendingPathComponent("float/net_mobilenet_v1_025_128/model.tflite").path
        let plan = try Plan(graph: Graph(contentsOf: model))
        for _ in 0 ..< 20 {
            let session = try Session(plan: plan, threadCount: 3)
            for _ in 0 ..< 5 { session.invoke() }
        }
    }

    // MARK: The pool and the partition

    /// Parts are contiguous, cover every unit once, start at multiples of the granularity and
    /// differ by at most one granule.
    func testWorkPartitionCoversEveryUnitOnce() {
        for count in [1, 2, 7, 15, 16, 17, 49, 64, 100, 3136] {
            for granularity in [1, 4, 7, 16] {
                for maxParts in [1, 2, 3, 8, 1000] {
                    let p = WorkPartition(count: count, granularity: granularity, maxParts: maxParts)
                    var next = 0, sizes = [Int]()
                    for i in 0 ..< p.parts {
                        let r = p.range(i)
                        XCTAssertEqual(r.lowerBound, next, "count \(count) granularity \(granularity) parts \(maxParts)")
                        XCTAssertEqual(r.lowerBound % granularity, 0)
                        XCTAssertFalse(r.isEmpty)
                        next = r.upperBound
                        if r.upperBound < count { sizes.append(r.count / granularity) }
                    }
                    XCTAssertEqual(next, count)
                    XCTAssertLessThanOrEqual(p.parts, maxParts)
                    XCTAssertLessThanOrEqual((sizes.max() ?? 0) - (sizes.min() ?? 0), 1)
                }
            }
        }
    }

    /// `makespan` deals tasks as the pool does (a thread's own run from the front, then the
    /// others' from the back); `balanced` cuts the channels only where the rows do not share out
    /// within 1/8, so the 7-row late layers even out and 14, 19 or 56 rows stay whole row parts.
    func testBalancedGridsShareTheWorkOut() {
        let sevenRows = TileGrid(rows: WorkPartition(count: 7, granularity: 1, maxParts: 8),
                                 columns: WorkPartition(count: 64, granularity: 64, maxParts: 1))
        XCTAssertEqual(sevenRows.makespan(threads: 1), 7 * 64)
        XCTAssertEqual(sevenRows.makespan(threads: 2), 4 * 64, "runs of 3 and 4 rows: one thread ends with 4")
        XCTAssertEqual(sevenRows.makespan(threads: 7), 64)
        // Beyond the simulated threads, the largest own run: 7 tasks on 9 threads, one each at most.
        XCTAssertEqual(sevenRows.makespan(threads: 9), 64)
        // Cells beyond Int32 (a batch of large images) neither trap nor wrap.
        let huge = TileGrid(rows: WorkPartition(count: 1 << 24, granularity: 1, maxParts: 8),
                            columns: WorkPartition(count: 1 << 12, granularity: 16, maxParts: 1))
        XCTAssertEqual(huge.makespan(threads: 2), (1 << 36) / 2)
        let late = TileGrid.balanced(tasks: 8, threads: 2, rows: 7, rowGranularity: 1, columns: 1152, columnGranularity: 16)
        XCTAssertEqual(late.rows.parts, 1)
        XCTAssertEqual(late.makespan(threads: 2), 7 * 1152 / 2)
        for rows in [14, 19, 28, 56] {
            let grid = TileGrid.balanced(tasks: 8, threads: 2, rows: rows, rowGranularity: 1, columns: 384, columnGranularity: 16)
            XCTAssertEqual(grid.columns.parts, 1, "\(rows) rows")
            XCTAssertEqual(grid.rows.parts, 8, "\(rows) rows")
        }
        // A 7 × 7 GEMM whose weights and input cost alike to split: pixels in 2 parts (21 and 28)
        // would leave one thread a third more, so the channels are cut.
        let gemm = TileGrid.cheapest(tasks: 8, threads: 2, rows: 49, rowGranularity: 7, columns: 192, columnGranularity: 16,
                                     bytesPerRowPart: 192 * 672 * 4, bytesPerColumnPart: 49 * 672 * 4)
        XCTAssertEqual(gemm.makespan(threads: 2), 49 * 192 / 2)
    }

    /// Every task of every dispatch runs exactly once, on a worker index in range, with no two
    /// concurrent tasks sharing a worker index.
    /// Workers park once a job is long past, but not inside an invocation, however long a serial
    /// stretch of it lasts; after it ends they park again.
    func testPoolWorkersDoNotParkInsideAnInvocation() {
        let pool = WorkerPool(threadCount: 3, minimumWork: 0)
        defer { pool.shutdown() }
        func waitUntil(_ condition: () -> Bool) -> Bool {
            for _ in 0 ..< 2000 where !condition() { usleep(1000) }
            return condition()
        }
        XCTAssertTrue(waitUntil { pool.parkedWorkers == 2 }, "idle workers park")
        pool.beginInvocation()
        pool.run(tasks: 8, NoWork())
        XCTAssertTrue(waitUntil { pool.parkedWorkers == 0 }, "the job wakes the workers")
        usleep(20_000)  // a serial stretch far longer than the spin and yield
        XCTAssertEqual(pool.parkedWorkers, 0, "a worker parked inside the invocation")
        pool.endInvocation()
        XCTAssertTrue(waitUntil { pool.parkedWorkers == 2 }, "workers park after the invocation")
    }

    private struct NoWork: PoolJob {
        func run(task: Int, worker: Int) {}
    }

    func testPoolRunsEveryTaskOnce() {
        let pool = WorkerPool(threadCount: 3, minimumWork: 0)
        defer { pool.shutdown() }
        let counts = UnsafeMutablePointer<Int>.allocate(capacity: 64)
        let busy = UnsafeMutablePointer<Int>.allocate(capacity: 3)
        defer { counts.deallocate(); busy.deallocate() }
        for dispatch in 0 ..< 2000 {
            let tasks = 1 + dispatch % 64
            counts.initialize(repeating: 0, count: 64)
            busy.initialize(repeating: 0, count: 3)
            pool.run(tasks: tasks, CountingJob(counts: counts, busy: busy))
            if dispatch % 3 == 0 { usleep(dispatch % 2 == 0 ? 0 : 500) }
            XCTAssertEqual((0 ..< tasks).filter { counts[$0] != 1 }, [], "dispatch \(dispatch)")
        }
    }
}

extension ThreadingTests {
    /// More threads than cores, and jobs shorter than a wake-up: most workers join late or not at
    /// all (the caller closes a job once its tasks are taken), and a late worker must neither run a
    /// task twice nor touch the next job's tasks as if they were the last one's.
    func testLateWorkersNeitherRepeatNorLoseTasks() {
        let pool = WorkerPool(threadCount: 8, minimumWork: 0)
        defer { pool.shutdown() }
        let counts = UnsafeMutablePointer<Int>.allocate(capacity: 64)
        let busy = UnsafeMutablePointer<Int>.allocate(capacity: 8)
        defer { counts.deallocate(); busy.deallocate() }
        for dispatch in 0 ..< 20_000 {
            let tasks = 2 + dispatch % 9
            counts.initialize(repeating: 0, count: 64)
            busy.initialize(repeating: 0, count: 8)
            pool.run(tasks: tasks, CountingJob(counts: counts, busy: busy, threads: 8))
            if dispatch % 1000 == 999 { usleep(300) }
            guard (0 ..< tasks).allSatisfy({ counts[$0] == 1 }) else { return XCTFail("dispatch \(dispatch): \((0 ..< tasks).map { counts[$0] })") }
        }
    }
}

extension ThreadingTests {
    /// Thread `i` owns the `i`-th contiguous run of a job's tasks and takes them from the front;
    /// others take them from the back. Whoever was scheduled when, the tasks its owner ran are a
    /// prefix of each run and the stolen ones the rest of it.
    func testThreadsTakeTheirOwnRunFromTheFrontAndOthersFromTheBack() {
        let threads = 3
        let pool = WorkerPool(threadCount: threads, minimumWork: 0)
        defer { pool.shutdown() }
        let ranWith = UnsafeMutablePointer<Int>.allocate(capacity: 64)
        defer { ranWith.deallocate() }
        for dispatch in 0 ..< 3000 {
            let tasks = 2 + dispatch % 40
            ranWith.initialize(repeating: -1, count: 64)
            pool.run(tasks: tasks, RecordingJob(ranWith: ranWith, spin: dispatch % 2 == 0 ? 0 : 2000))
            for owner in 0 ..< threads {
                let run = Array(owner * tasks / threads ..< (owner + 1) * tasks / threads)
                let byOwner = run.map { ranWith[$0] == owner }
                guard !byOwner.isEmpty else { continue }
                let firstStolen = byOwner.firstIndex(of: false) ?? byOwner.count
                guard byOwner[firstStolen...].allSatisfy({ !$0 }), run.allSatisfy({ ranWith[$0] >= 0 }) else {
                    return XCTFail("dispatch \(dispatch), run of thread \(owner) \(run): workers \(run.map { ranWith[$0] })")
                }
            }
        }
    }
}

extension ThreadingTests {
    /// With recording on, the threads' busy time is the time they spent in tasks, wherever the
    /// tasks ran (up to the microseconds of taking them): not the caller's wait for a worker's
    /// long last task. (Each task measures its own time, which counts a thread the host
    /// preempted inside a task as busy, as the pool does.)
    func testPoolRecordsBusyTime() {
        let pool = WorkerPool(threadCount: 2, minimumWork: 0)
        defer { pool.shutdown() }
        pool.beginInvocation()
        defer { pool.endInvocation() }
        let flag = UnsafeMutablePointer<Atomic<Bool>>.allocate(capacity: 1)
        flag.initialize(to: Atomic(false))
        let taskTimes = UnsafeMutablePointer<UInt64>.allocate(capacity: 8)
        defer { flag.deinitialize(count: 1); flag.deallocate(); taskTimes.deallocate() }
        func busy(_ tasks: Int, _ job: some PoolJob) -> (busy: UInt64, inTasks: UInt64) {
            taskTimes.initialize(repeating: 0, count: 8)
            pool.recordsBusyTime(true)
            let start = WorkerPool.now()
            pool.run(tasks: tasks, job)
            let elapsed = WorkerPool.now() - start
            return (elapsed - pool.callerWaitNanoseconds + pool.workerBusyNanoseconds, (0 ..< tasks).reduce(0) { $0 + taskTimes[$1] })
        }
        pool.run(tasks: 2, WaitingJob(nanoseconds: [0, 0], times: taskTimes))  // the worker awake
        // The worker takes its task, of 4 ms; the caller's ends as soon as it has, and the
        // caller then waits for the worker.
        let handoff = busy(2, HandoffJob(started: flag, nanoseconds: 4_000_000, times: taskTimes))
        XCTAssertGreaterThanOrEqual(handoff.busy, handoff.inTasks)
        XCTAssertLessThan(handoff.busy, handoff.inTasks + 1_000_000, "caller waited \(pool.callerWaitNanoseconds) ns, workers busy \(pool.workerBusyNanoseconds) ns")
        // Eight tasks of 1 ms on two threads.
        let eight = busy(8, WaitingJob(nanoseconds: Array(repeating: 1_000_000, count: 8), times: taskTimes))
        XCTAssertGreaterThanOrEqual(eight.busy, eight.inTasks)
        XCTAssertLessThan(eight.busy, eight.inTasks + 1_000_000)
        pool.recordsBusyTime(false)
        pool.run(tasks: 8, WaitingJob(nanoseconds: Array(repeating: 100_000, count: 8), times: taskTimes))
        XCTAssertEqual(pool.callerWaitNanoseconds, 0)
        XCTAssertEqual(pool.workerBusyNanoseconds, 0)
    }

    /// The caller spins 50 µs for the workers, or one and a half of its own tasks where those
    /// are longer, never more than 1 ms.
    func testCallerSpinsAboutOneTaskForTheLastWorkers() {
        XCTAssertEqual(WorkerPool.callerSpin(elapsed: 0, tasks: 0), 50_000)
        XCTAssertEqual(WorkerPool.callerSpin(elapsed: 40_000, tasks: 4), 50_000)
        XCTAssertEqual(WorkerPool.callerSpin(elapsed: 320_000, tasks: 4), 120_000)
        XCTAssertEqual(WorkerPool.callerSpin(elapsed: 90_000, tasks: 1), 135_000)
        XCTAssertEqual(WorkerPool.callerSpin(elapsed: 10_000_000, tasks: 2), 1_000_000)
    }

    /// A session's profile: on one thread every operator's busy time is its time; on two, at
    /// most twice its time, and more than its time for the large operators both threads share.
    func testProfileBusyTime() throws {
        let path = try Fixtures.shared("models/perf/mobilenet_v2_1.0_224_int8.tflite").path
        let single = try Interpreter(modelPath: path, options: .init(threadCount: 1))
        for entry in try single.invokeProfiled() { XCTAssertEqual(entry.busyNanoseconds, entry.nanoseconds) }
        let double = try Interpreter(modelPath: path, options: .init(threadCount: 2))
        var busy: UInt64 = 0, time: UInt64 = 0
        for _ in 0 ..< 3 {
            for entry in try double.invokeProfiled() {
                XCTAssertLessThanOrEqual(entry.busyNanoseconds, 2 * entry.nanoseconds, "\(entry.node.opName)")
                busy += entry.busyNanoseconds
                time += entry.nanoseconds
            }
        }
        XCTAssertGreaterThan(busy, time, "two threads busy no longer than one")
    }
}

/// Task 1 (the worker's own) says it started, then waits `nanoseconds`; task 0 (the caller's)
/// waits until task 1 started (for at most a second). Each task writes its time to `times`.
private struct HandoffJob: PoolJob {
    let started: UnsafeMutablePointer<Atomic<Bool>>
    let nanoseconds: UInt64
    let times: UnsafeMutablePointer<UInt64>

    func run(task: Int, worker: Int) {
        let start = WorkerPool.now()
        if task == 1 {
            started.pointee.store(true, ordering: .releasing)
            while WorkerPool.now() < start + nanoseconds {}
        } else {
            while !started.pointee.load(ordering: .acquiring), WorkerPool.now() < start + 1_000_000_000 {}
        }
        times[task] = WorkerPool.now() - start
    }
}

/// Waits (spinning on the clock) `nanoseconds[task]` in each task, and writes its time to `times`.
private struct WaitingJob: PoolJob {
    let nanoseconds: [UInt64]
    let times: UnsafeMutablePointer<UInt64>

    func run(task: Int, worker: Int) {
        let start = WorkerPool.now()
        while WorkerPool.now() < start + nanoseconds[task] {}
        times[task] = WorkerPool.now() - start
    }
}

/// Records which worker ran each task, after spinning a while (to let other threads steal).
private struct RecordingJob: PoolJob {
    let ranWith: UnsafeMutablePointer<Int>
    let spin: Int

    func run(task: Int, worker: Int) {
        var x = 0
        for i in 0 ..< spin { x &+= i &* i }
        ranWith[task] = worker + (x == -1 ? 1 : 0)
    }
}

/// Counts each task and checks that no worker index runs two tasks at once.
private struct CountingJob: PoolJob {
    let counts: UnsafeMutablePointer<Int>
    let busy: UnsafeMutablePointer<Int>
    var threads = 3

    func run(task: Int, worker: Int) {
        precondition((0 ..< threads).contains(worker))
        busy[worker] += 1
        precondition(busy[worker] == 1, "two tasks on worker \(worker) at once")
        counts[task] += 1
        busy[worker] -= 1
    }
}
