import Foundation
import Engine

/// `swiftlite bench MODEL`: latency of `invoke` on seeded random inputs, optionally per operator;
/// `swiftlite bench --dispatch`: what one parallel operator pays for its threads.
struct BenchCommand: ParsedCommand {
    static let name = "bench"
    static let summary = "time invoke() on random inputs (median, p90, per-operator profile, memory)"
    static let synopsis = "bench MODEL [options] | bench --dispatch [--threads N ...] [--json]"

    static let runs = Option<Int>.integer("runs", value: "N", help: "timed invocations", default: 50, in: 1 ... 100_000)
    static let warmup = Option<Int>.integer("warmup", value: "N", help: "untimed invocations first", default: 5, in: 0 ... 100_000)
    static let threads = Option<Int>.integer("threads", value: "N", help: "threads per operator; with --dispatch, one measurement per --threads given (2 if none)",
                                             default: 1, in: 1 ... Session.maxThreadCount)
    static let profile = Option.flag("profile", help: "time every operator: index, op, output shape, MACs, median ms, GOP/s, share")
    static let json = Option.flag("json", help: "print JSON (one object; --dispatch: an array, one object per thread count)")
    static let dispatch = Option.flag("dispatch", help: "measure what one parallel operator pays for its threads (no model)")
    static let declarations = [runs.spec, warmup.spec, threads.spec, profile.spec, json.spec, dispatch.spec]
    static let discussion = """
        Inputs are seeded random values (uniform bytes, floats in [-1, 1)), the same on every run.
        --dispatch times empty parallel tasks back to back (as between the operators of one
        invocation) and after the workers parked (as for the first operator after a pause).
        """

    enum Action {
        case model(path: String, runs: Int, warmup: Int, threads: Int, profile: Bool)
        case dispatch(threadCounts: [Int])
    }

    let action: Action
    let asJSON: Bool
    /// What was given that the chosen mode does not use, for `validate()`.
    private let misplaced: [String]
    private let positionalCount: Int

    init(_ arguments: Arguments) throws(CLIError) {
        asJSON = try arguments[Self.json]
        positionalCount = arguments.positionals.count
        if try arguments[Self.dispatch] {
            let counts = try arguments.values(of: Self.threads)
            action = .dispatch(threadCounts: counts.isEmpty ? [2] : counts)
            misplaced = [Self.runs.spec, Self.warmup.spec, Self.profile.spec].filter(arguments.contains).map { "--\($0.name)" }
        } else {
            action = .model(path: arguments.positionals.first ?? "", runs: try arguments[Self.runs], warmup: try arguments[Self.warmup],
                            threads: try arguments[Self.threads], profile: try arguments[Self.profile])
            misplaced = []
        }
    }

    func validate() throws(CLIError) {
        switch action {
        case .dispatch(let counts):
            guard positionalCount == 0 else { throw .usage("--dispatch measures no model; drop the MODEL path") }
            if let option = misplaced.first { throw .usage("\(option) is for timing a MODEL, not for --dispatch") }
            if let one = counts.first(where: { $0 < 2 }) { throw .usage("--dispatch needs --threads of at least 2, got \(one)") }
        case .model:
            guard positionalCount == 1 else {
                throw .usage("bench takes exactly one MODEL path, got \(positionalCount) (see 'swiftlite bench --help')")
            }
        }
    }

    func run() throws {
        switch action {
        case .dispatch(let counts): try Self.dispatch(threadCounts: counts, json: asJSON)
        case .model(let path, let runs, let warmup, let threads, let profile):
            let report = try Self.measure(path: path, runs: runs, warmup: warmup, threads: threads, profile: profile)
            print(asJSON ? try jsonText(report) : report.text)
        }
    }

    /// Loads and prepares `path`, then times `warmup` untimed and `runs` timed invocations.
    static func measure(path: String, runs: Int, warmup: Int, threads: Int, profile: Bool) throws -> BenchReport {
        let baseline = ResidentMemory.resetPeak()
        let loadStart = DispatchTime.now().uptimeNanoseconds
        let interpreter = try Interpreter(modelPath: path, options: .init(threadCount: threads))
        try interpreter.allocateTensors()
        let loadMillis = Double(DispatchTime.now().uptimeNanoseconds - loadStart) / 1e6
        let preparedPeak = ResidentMemory.peakBytes(), prepared = ResidentMemory.residentBytes()
        try interpreter.fillInputsWithNoise()
        // The first invocation, apart: what an app waits for after loading (cold caches, first
        // touch of the arena and of the packed weights).
        let firstStart = DispatchTime.now().uptimeNanoseconds
        try interpreter.invoke()
        let firstMillis = Double(DispatchTime.now().uptimeNanoseconds - firstStart) / 1e6
        for _ in 0 ..< warmup { try interpreter.invoke() }

        var times = [Double]()
        times.reserveCapacity(runs)
        var operatorTimes = [[UInt64]](repeating: [], count: interpreter.graph.nodes.count)
        var operatorBusy = operatorTimes
        for _ in 0 ..< runs {
            let start = DispatchTime.now().uptimeNanoseconds
            if profile {
                for (k, entry) in try interpreter.invokeProfiled().enumerated() {
                    operatorTimes[k].append(entry.nanoseconds)
                    operatorBusy[k].append(entry.busyNanoseconds)
                }
            } else {
                try interpreter.invoke()
            }
            times.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
        }
        let peak = ResidentMemory.peakBytes()
        let stats = SampleStatistics(times)
        let plan = interpreter.plan
        // Fused operators (Plan.fusedOperators) are one line with the work and time of all; the
        // others' lines say where they went.
        let fused = Set(plan.fusedOperators), nodes = plan.graph.nodes
        var operators: [OperatorProfile] = profile ? nodes.enumerated().map { k, node in
            var op = node.opName, macs = plan.multiplyAccumulates(node)
            if fused.contains(node.index) {
                var first = k - 1
                while first > 0, fused.contains(nodes[first].index) { first -= 1 }
                op += " (fused into \(nodes[first].index))"
                macs = 0
            } else {
                var next = k + 1
                while next < nodes.count, fused.contains(nodes[next].index) {
                    op += "+" + nodes[next].opName
                    macs += plan.multiplyAccumulates(nodes[next])
                    next += 1
                }
            }
            return OperatorProfile(index: node.index, op: op, outputShape: node.outputs.first.map { plan.tensors[$0].shape } ?? [],
                                   macs: macs, milliseconds: SampleStatistics.median(operatorTimes[k]) / 1e6,
                                   busyMilliseconds: SampleStatistics.median(operatorBusy[k]) / 1e6, threads: threads)
        } : []
        let operatorTotal = operators.reduce(0) { $0 + $1.milliseconds }
        for k in operators.indices { operators[k].percent = operatorTotal > 0 ? 100 * operators[k].milliseconds / operatorTotal : 0 }
        return BenchReport(
            model: path, runs: runs, warmup: warmup, threads: threads,
            medianMilliseconds: stats.median, p90Milliseconds: stats.p90, minMilliseconds: stats.min, meanMilliseconds: stats.mean,
            runMilliseconds: times, loadPrepareMilliseconds: loadMillis, firstInvokeMilliseconds: firstMillis, peakRSSBytes: peak, baselineRSSBytes: baseline,
            peakRSSOverBaselineBytes: max(0, peak - baseline), preparePeakRSSBytes: preparedPeak, preparedRSSBytes: prepared,
            releasedConstantBytes: plan.releasedConstants.reduce(0) { $0 + plan.graph.tensors[$1].byteCount },
            constantBytes: plan.graph.tensors.reduce(0) { $0 + ($1.constantData?.bytes.count ?? 0) },
            arenaBytes: plan.arenaBytes, scratchBytes: plan.scratchBytes + threads * plan.workerScratchBytes,
            totalMacs: plan.graph.nodes.reduce(0) { $0 + plan.multiplyAccumulates($1) },
            kernels: .init(float: KernelSelection.float, integer: KernelSelection.integer),
            operators: profile ? operators : nil)
    }

    /// Seeded random inputs: uniform bytes, or uniform [-1, 1) floats.
    private static func dispatch(threadCounts: [Int], json: Bool) throws {
        var reports = [DispatchReport]()
        for threads in threadCounts {
            let o = try DispatchOverhead.measure(threadCount: threads)
            let report = DispatchReport(threads: threads, backToBackMedianMicroseconds: o.backToBackMedian / 1000,
                                        backToBackMeanMicroseconds: o.backToBackMean / 1000,
                                        afterPauseMedianMicroseconds: o.afterPauseMedian / 1000, afterPauseMeanMicroseconds: o.afterPauseMean / 1000)
            if !json { print(report.text) }
            reports.append(report)
        }
        if json { print(try jsonText(reports)) }
    }
}

/// What `bench MODEL` measured: `--json` prints it as one object (snake_case keys), the text
/// form as two lines and, with `--profile`, a table per operator and per operator type.
struct BenchReport: Encodable {
    let model: String
    let runs, warmup, threads: Int
    /// Latency of one invocation over the timed runs, in milliseconds.
    let medianMilliseconds, p90Milliseconds, minMilliseconds, meanMilliseconds: Double
    /// Every timed invocation's latency in milliseconds, in the order they ran (the warm-up shows
    /// as a trend).
    let runMilliseconds: [Double]
    /// Loading the file and preparing every operator, then the first invocation (before the
    /// warm-up ones), in milliseconds.
    let loadPrepareMilliseconds, firstInvokeMilliseconds: Double
    /// Resident memory in bytes: the peak, the process's size before loading, and their difference;
    /// the peak while preparing and the size once prepared.
    let peakRSSBytes, baselineRSSBytes, peakRSSOverBaselineBytes, preparePeakRSSBytes, preparedRSSBytes: Int
    /// Constant bytes the plan released after packing them, and all constant bytes of the file.
    let releasedConstantBytes, constantBytes: Int
    /// The activation arena and the scratch of every thread, in bytes.
    let arenaBytes, scratchBytes: Int
    let totalMacs: Int
    /// The kernel families that ran (`KernelSelection`).
    let kernels: Kernels
    /// With `--profile`: every operator, in execution order.
    let operators: [OperatorProfile]?

    enum CodingKeys: String, CodingKey {
        case model, runs, warmup, threads, kernels, operators
        case medianMilliseconds = "median_ms", p90Milliseconds = "p90_ms", minMilliseconds = "min_ms", meanMilliseconds = "mean_ms"
        case runMilliseconds = "run_ms"
        case loadPrepareMilliseconds = "load_prepare_ms", firstInvokeMilliseconds = "first_invoke_ms"
        case peakRSSBytes = "peak_rss_bytes", baselineRSSBytes = "baseline_rss_bytes"
        case peakRSSOverBaselineBytes = "peak_rss_over_baseline_bytes", preparePeakRSSBytes = "prepare_peak_rss_bytes"
        case preparedRSSBytes = "prepared_rss_bytes", releasedConstantBytes = "released_constant_bytes", constantBytes = "constant_bytes"
        case arenaBytes = "arena_bytes", scratchBytes = "scratch_bytes", totalMacs = "total_macs"
    }

    struct Kernels: Encodable {
        let float, integer: String
    }

    var text: String {
        var lines = [
            String(format: "%@: median %.3f ms, p90 %.3f ms, min %.3f ms, mean %.3f ms over %d runs (%d thread%@)",
                   model, medianMilliseconds, p90Milliseconds, minMilliseconds, meanMilliseconds, runs, threads, threads == 1 ? "" : "s"),
            String(format: "load + prepare %.1f ms, first invoke %.1f ms; peak RSS %.1f MB, %.1f MB over the process baseline",
                   loadPrepareMilliseconds, firstInvokeMilliseconds, Double(peakRSSBytes) / 1e6, Double(peakRSSOverBaselineBytes) / 1e6),
            "kernels: float \(kernels.float), integer \(kernels.integer)",
        ]
        guard let operators else { return lines.joined(separator: "\n") }
        let total = operators.reduce(0) { $0 + $1.milliseconds }
        lines.append("per operator (median over runs; sum \(String(format: "%.3f", total)) ms):")
        // With several threads, `busy`: the share of the threads' time spent computing.
        let threaded = threads > 1
        let busyTotal = operators.reduce(0) { $0 + $1.busyMilliseconds }
        if threaded {
            lines[lines.count - 1] += String(format: " the %d threads busy %.1f %% of it", threads, Self.busyPercent(busyTotal, total, threads))
        }
        let width = operators.reduce(24) { max($0, $1.op.count) }
        lines.append("  index  " + Self.padded("op", width) + "   output shape           MACs        ms   GOP/s      %"
                     + (threaded ? "  busy %" : ""))
        for op in operators {
            let shape = op.outputShape.map(String.init).joined(separator: "×")
            // String(format:) ignores widths on %@ here (swift-corelibs-foundation): pad in Swift.
            lines.append(String(format: "  %5d  ", op.index) + Self.padded(op.op, width) + " " + Self.padded(shape, 18)
                         + String(format: " %10d %9.3f %7.1f %6.1f", op.macs, op.milliseconds, op.gops, op.percent)
                         + (threaded ? String(format: " %7.1f", op.busyPercent) : ""))
        }
        lines.append("per operator type:")
        var byType = [String: (ms: Double, busy: Double, macs: Int, count: Int)]()
        for op in operators where !op.op.contains(" (fused into ") {
            let entry = byType[op.op, default: (0, 0, 0, 0)]
            byType[op.op] = (entry.ms + op.milliseconds, entry.busy + op.busyMilliseconds, entry.macs + op.macs, entry.count + 1)
        }
        for (name, entry) in byType.sorted(by: { $0.value.ms > $1.value.ms }) {
            lines.append("  " + Self.padded(name, width) + String(format: " %3d ops %9.3f ms %7.1f GOP/s %6.1f%%", entry.count, entry.ms,
                                                              entry.ms > 0 ? 2 * Double(entry.macs) / (entry.ms * 1e6) : 0, total > 0 ? 100 * entry.ms / total : 0)
                         + (threaded ? String(format: ", busy %.1f %%", Self.busyPercent(entry.busy, entry.ms, threads)) : ""))
        }
        return lines.joined(separator: "\n")
    }

    /// `busy` threads' time as a percentage of `threads` threads' whole `time`.
    static func busyPercent(_ busy: Double, _ time: Double, _ threads: Int) -> Double {
        time > 0 ? 100 * busy / (Double(threads) * time) : 0
    }

    /// `text` followed by spaces up to `width` characters (longer text is kept whole).
    private static func padded(_ text: String, _ width: Int) -> String {
        text + String(repeating: " ", count: max(0, width - text.count))
    }
}

/// One operator's line of `bench --profile`.
struct OperatorProfile: Encodable {
    let index: Int
    let op: String
    let outputShape: [Int]
    let macs: Int
    /// Median over the timed runs.
    let milliseconds: Double
    /// Giga-operations per second, a multiply-accumulate counting as two.
    let gops: Double
    /// Share of the sum of all operators' medians, in percent.
    var percent = 0.0
    /// Median over the timed runs of the threads' busy time (`Session.invokeProfiled`): the time
    /// all threads together spent computing the operator, at most `threads` times `milliseconds`.
    let busyMilliseconds: Double
    /// `busyMilliseconds` as a share of the threads' whole time in the operator, in percent: 100
    /// on one thread; on two, 50 for an operator that runs on one of them.
    let busyPercent: Double

    enum CodingKeys: String, CodingKey {
        case index, op, outputShape = "output_shape", macs, milliseconds = "median_ms", gops, percent
        case busyMilliseconds = "busy_ms", busyPercent = "busy_percent"
    }

    init(index: Int, op: String, outputShape: [Int], macs: Int, milliseconds: Double, busyMilliseconds: Double, threads: Int) {
        self.index = index
        self.op = op
        self.outputShape = outputShape
        self.macs = macs
        self.milliseconds = milliseconds
        self.busyMilliseconds = busyMilliseconds
        busyPercent = BenchReport.busyPercent(busyMilliseconds, milliseconds, threads)
        gops = milliseconds > 0 ? 2 * Double(macs) / (milliseconds * 1e6) : 0
    }
}

/// What `bench --dispatch` measured for one thread count, in microseconds.
struct DispatchReport: Encodable {
    let threads: Int
    let backToBackMedianMicroseconds, backToBackMeanMicroseconds: Double
    let afterPauseMedianMicroseconds, afterPauseMeanMicroseconds: Double

    enum CodingKeys: String, CodingKey {
        case threads
        case backToBackMedianMicroseconds = "back_to_back_median_us", backToBackMeanMicroseconds = "back_to_back_mean_us"
        case afterPauseMedianMicroseconds = "after_pause_median_us", afterPauseMeanMicroseconds = "after_pause_mean_us"
    }

    var text: String {
        String(format: "dispatch of one parallel operator on %d threads: back to back %.2f µs median (%.2f mean), after the workers parked %.2f µs median (%.2f mean)",
               threads, backToBackMedianMicroseconds, backToBackMeanMicroseconds, afterPauseMedianMicroseconds, afterPauseMeanMicroseconds)
    }
}

/// The process's resident memory, from `/proc/self/status` (Linux; zeros elsewhere).
enum ResidentMemory {
    /// Resets the peak (`VmHWM`) to the current resident size and returns that size in bytes.
    static func resetPeak() -> Int {
        // "5" resets the peak resident set size (Linux ≥ 4.0); without it the peak stays the
        // process's own, which includes everything before this point.
        try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
        return field("VmRSS")
    }

    /// The peak resident size (`VmHWM`) in bytes.
    static func peakBytes() -> Int { field("VmHWM") }

    /// The current resident size (`VmRSS`) in bytes.
    static func residentBytes() -> Int { field("VmRSS") }

    private static func field(_ name: String) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix(name + ":") {
            let kilobytes = line.split(separator: " ").compactMap { Int($0) }.first ?? 0
            return kilobytes * 1024
        }
        return 0
    }
}

