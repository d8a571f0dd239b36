#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization
import CX86Intrinsics

/// The threads one `Session` runs its heavy operators on: `threadCount − 1` workers created once,
/// plus the calling thread, which takes part as worker 0.
///
/// An operator hands the pool a number of tasks (each one fixed part of its *output*: rows of
/// pixels, a block of GEMM rows, a range of elements) and a body, and `run` returns when every
/// task has finished. Thread `i` of `n` owns the `i`-th of `n` contiguous runs of tasks and takes
/// them from the front; a thread out of tasks takes the others' from the back. So, as long as the
/// machine lets both threads run, thread `i` computes the same part of every operator's output
/// (the top half of the pixels, say), and the next operator finds most of its input in its own
/// core's cache rather than in the other's (a shared counter dealt tasks alternately, and every
/// operator read half its input across cores). Which thread computes a task never changes what
/// it computes, so the bytes are the same for every thread count.
///
/// A worker takes part in a job only if it joins before the caller has run out of tasks: the caller
/// then closes the job and waits for the workers inside it, never for one that has not woken yet
/// (on a busy machine a worker may not be scheduled for a long time; the caller, having done all
/// the tasks itself, goes on).
///
/// Between operators the workers spin on the job counter for a while (an operator's successor
/// usually follows within microseconds), then yield, then park on a condition variable; an idle
/// session costs no CPU. Inside an invocation (`beginInvocation` … `endInvocation`) they do not
/// park: a serial operator (a detector's post-process) would outlast the spin, and the
/// next parallel operator would then wait for a parked thread to be woken (tens of
/// microseconds, longer in a VM whose idle virtual CPU the host must schedule again); the time to
/// park counts from the end of the invocation. The caller, once out of tasks, spins briefly for
/// the last ones to finish, then sleeps until the last worker wakes it: on a machine busy with
/// other processes, a thread that sleeps is scheduled again promptly, one that spins or yields
/// loses its turn. Dispatching allocates nothing: the job is a value on the caller's stack, which
/// workers reach through a pointer and its type (a closure would be boxed on the heap the moment
/// it is stored for another thread), valid until `run` returns.
///
/// ```swift
/// struct Rows: PoolJob { func run(task: Int, worker: Int) { compute(part: task, scratch: scratch[worker]) } }
/// let pool = WorkerPool(threadCount: 2)
/// pool.run(tasks: 8, Rows())
/// pool.shutdown()
/// ```
final class WorkerPool: @unchecked Sendable {
    // `@unchecked Sendable`: the plain stored properties `job` and `recording` below are written by
    // the calling thread only while no worker is inside a job, *before* the release store of
    // `state` that opens the job, and read by workers only *after* they joined it (an acquiring
    // compare-exchange on `state`); the caller clears them only after closing the job and seeing
    // its joined count at zero (each worker leaves with release ordering). A worker writes its
    // `spans` entry before it leaves, and the caller reads it only after that. Everything else is
    // an `Atomic` or a pthread object.

    /// The most threads a session may use (more would only oversubscribe any machine this targets).
    static let maxThreadCount = 64

    /// A pool of just the calling thread (no workers), for kernels run outside a session.
    static let callingThread = WorkerPool(threadCount: 1)

    let threadCount: Int
    /// Operators with less work than this run on the calling thread (`TensorMemory.parallelize`).
    let minimumWork: Int
    /// Incremented once per job (and once for shutdown); workers wait for it to change.
    private let epoch = Atomic<Int>(0)
    /// Workers parked (or about to park) on `condition`.
    private let sleepers = Atomic<Int>(0)
    /// Thread `i`'s run of tasks of the current job as `next << 32 | end`, one per cache line
    /// (`threadCount` of them, `slotStride` bytes apart): the owner takes `next`, others `end − 1`.
    private let slots: UnsafeMutableRawPointer
    private static let slotStride = 64
    /// The current job's generation (the low 32 bits of its `epoch`) in the high 32 bits, `closed`
    /// (bit 31: no more workers may join), and the number of workers inside it (the low bits).
    private let state = Atomic<UInt64>(0)
    private static let closed: UInt64 = 1 << 31, joinedMask: UInt64 = (1 << 31) - 1
    private let stopping = Atomic<Bool>(false)
    /// An invocation is running (`beginInvocation`): workers wait for its next job without parking.
    private let invoking = Atomic<Bool>(false)
    /// The caller sleeps on `finished` until no worker is inside the closed job.
    private let callerSleeping = Atomic<Bool>(false)
    /// The current job: its address on the caller's stack, and a function that runs a task of it,
    /// made in the specialised `run` (so it captures nothing, and no task copies the job).
    private var job: (pointer: UnsafeRawPointer, run: (UnsafeRawPointer, Int, Int) -> Void)?
    /// Whether jobs record their threads' busy time (`recordsBusyTime`); written, like `job`,
    /// by the caller between jobs only.
    private var recording = false
    /// With `recording`: worker `i`'s time of starting and of ending its part of the current job
    /// (joining it, finishing its last task there; 0 if it did not join), one cache line per
    /// worker, `slotStride` bytes apart like `slots`.
    private let spans: UnsafeMutableRawPointer
    /// With `recording`, summed over jobs since it was set: the time the caller waited in a job
    /// after its last task, and the time workers spent inside jobs (joining to leaving).
    private(set) var callerWaitNanoseconds: UInt64 = 0
    private(set) var workerBusyNanoseconds: UInt64 = 0
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>
    private let finished: UnsafeMutablePointer<pthread_cond_t>
    private var threads = [pthread_t]()

    /// How long a worker spins on the job counter before yielding, and yields before parking:
    /// short, because a spinning worker takes the core that its caller or another process needs
    /// (on a machine with as many busy processes as cores, long spins lose more than they save).
    private static let spinNanoseconds: UInt64 = 30_000
    private static let yieldNanoseconds: UInt64 = 100_000
    /// How long the caller spins for the last workers before it sleeps: long enough to cover
    /// the imbalance of an operator's last tasks (tens of microseconds), since waking a sleeping
    /// caller costs as much again. Where the caller's own tasks took longer, it spins for one
    /// and a half of them (`callerSpin`), up to `longestCallerSpinNanoseconds`.
    private static let callerSpinNanoseconds: UInt64 = 50_000
    private static let longestCallerSpinNanoseconds: UInt64 = 1_000_000

    /// The caller's spin after it ran `tasks` tasks of a job in `elapsed` nanoseconds: a worker
    /// still inside the job is finishing the last task it took, which takes about as long as
    /// one of the caller's.
    static func callerSpin(elapsed: UInt64, tasks: Int) -> UInt64 {
        guard tasks > 0 else { return callerSpinNanoseconds }
        let task = elapsed / UInt64(tasks)
        return min(longestCallerSpinNanoseconds, max(callerSpinNanoseconds, task + task / 2))
    }

    /// Starts `threadCount − 1` worker threads (none for 1). `threadCount` must be in
    /// `1...maxThreadCount` (the session validated it).
    init(threadCount: Int, minimumWork: Int = TensorMemory.minimumParallelWork) {
        precondition((1 ... Self.maxThreadCount).contains(threadCount), "thread count \(threadCount) outside 1...\(Self.maxThreadCount)")
        self.threadCount = threadCount
        self.minimumWork = minimumWork
        slots = .allocate(byteCount: threadCount * Self.slotStride, alignment: Self.slotStride)
        spans = .allocate(byteCount: threadCount * Self.slotStride, alignment: Self.slotStride)
        spans.initializeMemory(as: UInt8.self, repeating: 0, count: threadCount * Self.slotStride)
        for i in 0 ..< threadCount {
            (slots + i * Self.slotStride).bindMemory(to: Atomic<UInt64>.self, capacity: 1).initialize(to: Atomic(0))
        }
        mutex = .allocate(capacity: 1)
        condition = .allocate(capacity: 1)
        finished = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(condition, nil)
        pthread_cond_init(finished, nil)
        for index in 1 ..< threadCount {
            let start = UnsafeMutablePointer<(pool: WorkerPool, index: Int)>.allocate(capacity: 1)
            start.initialize(to: (self, index))
            var thread = pthread_t()
            let status = pthread_create(&thread, nil, { raw in
                let start = raw!.assumingMemoryBound(to: (pool: WorkerPool, index: Int).self)
                let (pool, index) = (start.pointee.pool, start.pointee.index)
                start.deinitialize(count: 1)
                start.deallocate()
                pool.workerLoop(index)
                return nil
            }, start)
            precondition(status == 0, "pthread_create failed: \(String(cString: strerror(status)))")
            threads.append(thread)
        }
    }

    /// Stops and joins the workers. The pool must not be used afterwards. (The workers hold the
    /// pool, so the owner must call this; `Session.deinit` does.)
    func shutdown() {
        guard !threads.isEmpty else { return }
        stopping.store(true, ordering: .sequentiallyConsistent)
        epoch.wrappingAdd(1, ordering: .sequentiallyConsistent)
        pthread_mutex_lock(mutex)
        pthread_cond_broadcast(condition)
        pthread_mutex_unlock(mutex)
        for thread in threads { pthread_join(thread, nil) }
        threads.removeAll()
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_cond_destroy(finished)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        finished.deallocate()
        mutex.deallocate()
        for i in 0 ..< threadCount { slot(i).deinitialize(count: 1) }
        slots.deallocate()
        spans.deallocate()
    }

    @inline(__always) private func slot(_ thread: Int) -> UnsafeMutablePointer<Atomic<UInt64>> {
        (slots + thread * Self.slotStride).assumingMemoryBound(to: Atomic<UInt64>.self)
    }

    /// Worker `thread`'s start and end in the current job (see `spans`).
    @inline(__always) private func span(_ thread: Int) -> UnsafeMutablePointer<(start: UInt64, end: UInt64)> {
        (spans + thread * Self.slotStride).assumingMemoryBound(to: (start: UInt64, end: UInt64).self)
    }

    /// Starts (`true`) or stops recording how long the threads work and wait in each job, for a
    /// profile: `callerWaitNanoseconds` and `workerBusyNanoseconds` grow with every job from then
    /// on (each reads a clock two or three times per thread). Called by the session's thread
    /// between jobs; the two totals restart from 0.
    func recordsBusyTime(_ on: Bool) {
        recording = on
        callerWaitNanoseconds = 0
        workerBusyNanoseconds = 0
    }

    /// Runs `job.run(task:worker:)` for every task in `0 ..< tasks` across the pool and returns
    /// when all have finished. `worker` is in `0 ..< threadCount` and unique among concurrently
    /// running tasks (index per-worker scratch with it). With one thread, or one task, the
    /// tasks run in order on the calling thread. Not re-entrant: a task must not call `run`.
    func run<Job: PoolJob>(tasks: Int, _ job: Job) {
        guard threadCount > 1, tasks > 1 else {
            for task in 0 ..< tasks { job.run(task: task, worker: 0) }
            return
        }
        precondition(self.job == nil, "WorkerPool.run called from inside a task")
        let published = Self.now()
        withUnsafePointer(to: job) { pointer in
            self.job = (UnsafeRawPointer(pointer), { job, task, worker in
                job.assumingMemoryBound(to: Job.self).pointee.run(task: task, worker: worker)
            })
            precondition(tasks <= Int(UInt32.max), "\(tasks) tasks")
            let recording = self.recording
            if recording {
                for i in 1 ..< threadCount { span(i).pointee = (0, 0) }
            }
            for i in 0 ..< threadCount {
                let start = UInt64(i * tasks / threadCount), end = UInt64((i + 1) * tasks / threadCount)
                slot(i).pointee.store(start << 32 | end, ordering: .relaxed)
            }
            state.store(Self.generation(epoch.load(ordering: .relaxed) &+ 1) << 32, ordering: .releasing)
            epoch.wrappingAdd(1, ordering: .sequentiallyConsistent)
            if sleepers.load(ordering: .sequentiallyConsistent) > 0 {
                pthread_mutex_lock(mutex)
                pthread_cond_broadcast(condition)
                pthread_mutex_unlock(mutex)
            }
            let ran = runTasks(worker: 0)
            // Every task is taken: close the job to latecomers, wait for those inside.
            let before = state.bitwiseOr(Self.closed, ordering: .acquiringAndReleasing).oldValue
            let waits = before & Self.joinedMask != 0
            let callerDone = waits || recording ? Self.now() : 0
            if waits { waitForWorkers(spinning: Self.callerSpin(elapsed: callerDone &- published, tasks: ran)) }
            if recording {
                // The workers' spans were written before they left the job, which the caller
                // has seen (or none joined, and theirs are still 0).
                callerWaitNanoseconds &+= Self.now() &- callerDone
                for i in 1 ..< threadCount where span(i).pointee.start != 0 {
                    workerBusyNanoseconds &+= span(i).pointee.end &- span(i).pointee.start
                }
            }
            self.job = nil
        }
    }

    /// Marks the start of an invocation: until `endInvocation`, waiting workers yield but do not
    /// park (see the type's documentation). Called by the session's thread only.
    func beginInvocation() {
        guard threadCount > 1 else { return }
        invoking.store(true, ordering: .relaxed)
    }

    /// Marks the end of an invocation: workers park once they have waited their usual time from now.
    func endInvocation() {
        guard threadCount > 1 else { return }
        invoking.store(false, ordering: .relaxed)
    }

    /// Workers parked (or about to park) waiting for a job (for tests).
    var parkedWorkers: Int { sleepers.load(ordering: .sequentiallyConsistent) }

    /// Returns once every worker that joined the (closed) current job has left it: spins for up
    /// to `limit` nanoseconds (the last tasks usually end within microseconds), then sleeps on
    /// `finished`.
    private func waitForWorkers(spinning limit: UInt64) {
        let start = Self.now()
        var spins = 0
        while true {
            if state.load(ordering: .acquiring) & Self.joinedMask == 0 { return }
            swiftlite_spin_pause()
            spins &+= 1
            if spins & 255 == 0, Self.now() &- start > limit { break }
        }
        pthread_mutex_lock(mutex)
        // Announce the sleep before the last look; the last worker leaves (decrements `state`)
        // before it looks at `callerSleeping` (both sequentially consistent), so one sees the other.
        callerSleeping.store(true, ordering: .sequentiallyConsistent)
        while state.load(ordering: .sequentiallyConsistent) & Self.joinedMask != 0 {
            pthread_cond_wait(finished, mutex)
        }
        callerSleeping.store(false, ordering: .relaxed)
        pthread_mutex_unlock(mutex)
    }

    /// Runs the tasks of `worker`'s run from the front, then the other threads' from the back;
    /// returns how many it ran. A worker of a recording job notes when it started and ended in
    /// its `spans` entry.
    @discardableResult
    private func runTasks(worker: Int) -> Int {
        guard let (pointer, run) = job else { return 0 }
        let recording = worker > 0 && self.recording
        let start = recording ? Self.now() : 0
        var ran = 0
        while let task = take(from: worker, front: true) {
            run(pointer, task, worker)
            ran += 1
        }
        for offset in 1 ..< threadCount {
            let other = (worker + offset) % threadCount
            while let task = take(from: other, front: false) {
                run(pointer, task, worker)
                ran += 1
            }
        }
        if recording { span(worker).pointee = (start, Self.now()) }
        return ran
    }

    /// Takes the first (owner) or last (others) task left in `thread`'s run, nil when none is.
    @inline(__always) private func take(from thread: Int, front: Bool) -> Int? {
        let range = slot(thread)
        var current = range.pointee.load(ordering: .relaxed)
        while true {
            let next = current >> 32, end = current & 0xffff_ffff
            guard next < end else { return nil }
            let desired = front ? current &+ (1 << 32) : current &- 1
            let (exchanged, original) = range.pointee.compareExchange(expected: current, desired: desired,
                                                                      successOrdering: .relaxed, failureOrdering: .relaxed)
            if exchanged { return Int(front ? next : end - 1) }
            current = original
        }
    }

    private func workerLoop(_ index: Int) {
        var seen = 0
        while true {
            seen = waitForJob(after: seen)
            if stopping.load(ordering: .acquiring) { return }
            guard join(generation: Self.generation(seen)) else { continue }
            runTasks(worker: index)
            let left = state.wrappingSubtract(1, ordering: .sequentiallyConsistent).newValue
            if left & Self.joinedMask == 0, left & Self.closed != 0, callerSleeping.load(ordering: .sequentiallyConsistent) {
                pthread_mutex_lock(mutex)
                pthread_cond_signal(finished)
                pthread_mutex_unlock(mutex)
            }
        }
    }

    /// Enters the job of `generation` unless the caller has closed it (or already moved on to a
    /// newer one, which the worker then sees as its next `epoch`).
    private func join(generation: UInt64) -> Bool {
        var current = state.load(ordering: .relaxed)
        while current >> 32 == generation, current & Self.closed == 0 {
            let (exchanged, original) = state.compareExchange(expected: current, desired: current + 1,
                                                              successOrdering: .acquiringAndReleasing, failureOrdering: .relaxed)
            if exchanged { return true }
            current = original
        }
        return false
    }

    /// The generation of the job published as `epoch` value `epoch`.
    private static func generation(_ epoch: Int) -> UInt64 { UInt64(truncatingIfNeeded: epoch) & 0xffff_ffff }

    /// Spins, then yields, then parks until `epoch` differs from `seen`; returns the new value.
    /// Inside an invocation it does not park, and the wait counts from the last moment it saw one.
    private func waitForJob(after seen: Int) -> Int {
        var start = Self.now()
        var spins = 0
        while true {
            let current = epoch.load(ordering: .acquiring)
            if current != seen { return current }
            swiftlite_spin_pause()
            spins &+= 1
            guard spins & 255 == 0 else { continue }
            let time = Self.now()
            if invoking.load(ordering: .relaxed) {
                // Past the spin, stay in the yielding phase (never parked) while it lasts.
                start = max(start, time &- Self.spinNanoseconds &- 1)
            }
            let elapsed = time &- start
            if elapsed > Self.spinNanoseconds + Self.yieldNanoseconds { break }
            if elapsed > Self.spinNanoseconds { sched_yield() }
        }
        pthread_mutex_lock(mutex)
        // Announce the sleep before the last look at `epoch`; `run` bumps `epoch` before it looks
        // at `sleepers` (both sequentially consistent), so one of the two sees the other.
        sleepers.wrappingAdd(1, ordering: .sequentiallyConsistent)
        var current = epoch.load(ordering: .sequentiallyConsistent)
        while current == seen {
            pthread_cond_wait(condition, mutex)
            current = epoch.load(ordering: .sequentiallyConsistent)
        }
        sleepers.wrappingSubtract(1, ordering: .sequentiallyConsistent)
        pthread_mutex_unlock(mutex)
        return current
    }

    /// `CLOCK_MONOTONIC` in nanoseconds (also the clock of `Session.invokeProfiled`, which
    /// subtracts the pool's recorded times from its own).
    static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
    }
}
