import Foundation
import Engine

/// `swiftlite bench MODEL`: latency of `invoke` on seeded random inputs, optionally per operator.
struct BenchCommand: Command {
    static let name = "bench"
    static let summary = "time invoke() on random inputs (median, p90, per-operator profile, memory)"
    static let usage = """
        swiftlite bench MODEL [--runs N] [--warmup N] [--threads N] [--profile] [--json]
        swiftlite bench --dispatch [--threads N]

          --runs N      timed invocations (default 50)
          --warmup N    untimed invocations first (default 5)
          --threads N   threads per operator, 1...\(Session.maxThreadCount) (default 1)
          --profile     time every operator: index, op, output shape, MACs, median ms, GOP/s, share
          --json        print one JSON object
          --dispatch    measure what one parallel operator pays for its threads (no model)
        """
    static let options: Set<String> = ["runs", "warmup", "threads"]
    static let flags: Set<String> = ["json", "profile", "dispatch"]

    static func run(_ arguments: Arguments) throws {
        let threads = try arguments.int("threads", in: 1 ... Session.maxThreadCount) ?? 1
        if arguments.flag("dispatch") { return try dispatch(threads: max(threads, 2), json: arguments.flag("json")) }
        guard arguments.positionals.count == 1 else { throw CLIError.usage("bench takes exactly one MODEL path, got \(arguments.positionals.count) (see 'swiftlite bench --help')") }
        let path = arguments.positionals[0]
        let runs = try arguments.int("runs", in: 1 ... 100_000) ?? 50
        let warmup = try arguments.int("warmup", in: 0 ... 100_000) ?? 5
        let profile = arguments.flag("profile")

        let baseline = ResidentMemory.resetPeak()
        let loadStart = DispatchTime.now().uptimeNanoseconds
        let interpreter = try Interpreter(modelPath: path, options: .init(threadCount: threads))
        try interpreter.allocateTensors()
        let loadMillis = Double(DispatchTime.now().uptimeNanoseconds - loadStart) / 1e6
        let preparedPeak = ResidentMemory.peakBytes(), prepared = ResidentMemory.residentBytes()
        try fillInputs(interpreter)
        for _ in 0 ..< warmup { try interpreter.invoke() }

        var times = [Double]()
        var operatorTimes = [[UInt64]](repeating: [], count: interpreter.graph.nodes.count)
        for _ in 0 ..< runs {
            let start = DispatchTime.now().uptimeNanoseconds
            if profile {
                for (k, entry) in try interpreter.invokeProfiled().enumerated() { operatorTimes[k].append(entry.nanoseconds) }
            } else {
                try interpreter.invoke()
            }
            times.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
        }
        let peak = ResidentMemory.peakBytes()
        times.sort()
        let stats = Stats(sorted: times)
        let overBaseline = max(0, peak - baseline)
        let plan = interpreter.plan
        let operators: [OperatorProfile] = profile ? plan.graph.nodes.enumerated().map { k, node in
            OperatorProfile(node: node, shape: node.outputs.first.map { plan.tensors[$0].shape } ?? [],
                            macs: plan.multiplyAccumulates(node), milliseconds: Stats.median(operatorTimes[k]) / 1e6)
        } : []
        let operatorTotal = operators.reduce(0) { $0 + $1.milliseconds }

        if arguments.flag("json") {
            var result: [String: Any] = [
                "model": path, "runs": runs, "warmup": warmup, "threads": threads,
                "median_ms": stats.median, "p90_ms": stats.p90, "min_ms": stats.min, "mean_ms": stats.mean,
                "load_prepare_ms": loadMillis, "peak_rss_bytes": peak, "baseline_rss_bytes": baseline,
                "peak_rss_over_baseline_bytes": overBaseline,
                "prepare_peak_rss_bytes": preparedPeak, "prepared_rss_bytes": prepared,
                "released_constant_bytes": plan.releasedConstants.reduce(0) { $0 + plan.graph.tensors[$1].byteCount },
                "constant_bytes": plan.graph.tensors.reduce(0) { $0 + ($1.constantData?.bytes.count ?? 0) },
                "arena_bytes": plan.arenaBytes, "scratch_bytes": plan.scratchBytes + threads * plan.workerScratchBytes,
                "total_macs": plan.graph.nodes.reduce(0) { $0 + plan.multiplyAccumulates($1) },
            ]
            if profile {
                result["operators"] = operators.map { op -> [String: Any] in
                    ["index": op.node.index, "op": op.node.opName, "output_shape": op.shape, "macs": op.macs,
                     "median_ms": op.milliseconds, "gops": op.gops,
                     "percent": operatorTotal > 0 ? 100 * op.milliseconds / operatorTotal : 0]
                }
            }
            let data = try JSONSerialization.data(withJSONObject: result, options: [.sortedKeys])
            print(String(decoding: data, as: UTF8.self))
            return
        }
        print(String(format: "%@: median %.3f ms, p90 %.3f ms, min %.3f ms, mean %.3f ms over %d runs (%d thread%@)",
                     path, stats.median, stats.p90, stats.min, stats.mean, runs, threads, threads == 1 ? "" : "s"))
        print(String(format: "load + prepare %.1f ms; peak RSS %.1f MB, %.1f MB over the process baseline",
                     loadMillis, Double(peak) / 1e6, Double(overBaseline) / 1e6))
        guard profile else { return }
        print("per operator (median over runs; sum \(String(format: "%.3f", operatorTotal)) ms):")
        print("  index  op                         output shape           MACs        ms   GOP/s      %")
        for op in operators {
            let shape = op.shape.map(String.init).joined(separator: "×")
            print(String(format: "  %5d  %-24@ %-18@ %10d %9.3f %7.1f %6.1f", op.node.index, op.node.opName as NSString,
                         shape as NSString, op.macs, op.milliseconds, op.gops, operatorTotal > 0 ? 100 * op.milliseconds / operatorTotal : 0))
        }
        print("per operator type:")
        var byType = [String: (ms: Double, macs: Int, count: Int)]()
        for op in operators {
            let entry = byType[op.node.opName, default: (0, 0, 0)]
            byType[op.node.opName] = (entry.ms + op.milliseconds, entry.macs + op.macs, entry.count + 1)
        }
        for (name, entry) in byType.sorted(by: { $0.value.ms > $1.value.ms }) {
            print(String(format: "  %-24@ %3d ops %9.3f ms %7.1f GOP/s %6.1f%%", name as NSString, entry.count, entry.ms,
                         entry.ms > 0 ? 2 * Double(entry.macs) / (entry.ms * 1e6) : 0, operatorTotal > 0 ? 100 * entry.ms / operatorTotal : 0))
        }
    }

    /// Seeded random inputs: uniform bytes, or uniform [-1, 1) floats.
    private static func fillInputs(_ interpreter: Interpreter) throws {
        var generator = SplitMix64(seed: 0)
        for i in 0 ..< interpreter.inputTensorCount {
            let input = try interpreter.input(at: i)
            if input.dataType == .float32 {
                let floats = (0 ..< input.data.count / 4).map { _ in Float(generator.next() >> 40) / Float(1 << 23) - 1 }
                try interpreter.copy(floats.withUnsafeBytes { Data($0) }, toInputAt: i)
            } else {
                try interpreter.copy(Data((0 ..< input.data.count).map { _ in UInt8(truncatingIfNeeded: generator.next()) }), toInputAt: i)
            }
        }
    }

    private static func dispatch(threads: Int, json: Bool) throws {
        let o = try DispatchOverhead.measure(threadCount: threads)
        if json {
            print("{\"threads\": \(threads), \"back_to_back_median_us\": \(o.backToBackMedian / 1000), \"back_to_back_mean_us\": \(o.backToBackMean / 1000), \"after_pause_median_us\": \(o.afterPauseMedian / 1000), \"after_pause_mean_us\": \(o.afterPauseMean / 1000)}")
        } else {
            print(String(format: "dispatch of one parallel operator on %d threads: back to back %.2f µs median (%.2f mean), after the workers parked %.2f µs median (%.2f mean)",
                         threads, o.backToBackMedian / 1000, o.backToBackMean / 1000, o.afterPauseMedian / 1000, o.afterPauseMean / 1000))
        }
    }
}

/// One operator's line of `bench --profile`.
private struct OperatorProfile {
    let node: Node
    let shape: [Int]
    let macs: Int
    let milliseconds: Double
    /// Giga-operations per second, a multiply-accumulate counting as two.
    var gops: Double { milliseconds > 0 ? 2 * Double(macs) / (milliseconds * 1e6) : 0 }
}

/// Median, 90th percentile, minimum and mean of sorted samples.
private struct Stats {
    let median, p90, min, mean: Double

    init(sorted times: [Double]) {
        median = times[times.count / 2]
        p90 = times[Swift.min(times.count - 1, Int((Double(times.count) * 0.9).rounded(.up)) - 1)]
        min = times[0]
        mean = times.reduce(0, +) / Double(times.count)
    }

    static func median(_ values: [UInt64]) -> Double {
        values.isEmpty ? 0 : Double(values.sorted()[values.count / 2])
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

/// A tiny deterministic generator for benchmark inputs.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
