import Foundation
import Engine

/// `swiftlite bench MODEL`: latency of `invoke` on seeded random inputs.
struct BenchCommand: Command {
    static let name = "bench"
    static let summary = "time invoke() on random inputs (median, min, mean over runs)"
    static let usage = """
        swiftlite bench MODEL [--runs N] [--warmup N] [--threads N] [--json]

          --runs N      timed invocations (default 50)
          --warmup N    untimed invocations first (default 5)
          --threads N   GEMM threads (default 1)
        """
    static let options: Set<String> = ["runs", "warmup", "threads"]
    static let flags: Set<String> = ["json"]

    static func run(_ arguments: Arguments) throws {
        guard arguments.positionals.count == 1 else { throw CLIError.usage("bench takes exactly one MODEL path, got \(arguments.positionals.count) (see 'swiftlite bench --help')") }
        let runs = try arguments.int("runs", in: 1 ... 100_000) ?? 50
        let warmup = try arguments.int("warmup", in: 0 ... 100_000) ?? 5
        let threads = try arguments.int("threads", in: 1 ... 256) ?? 1
        let interpreter = try Interpreter(modelPath: arguments.positionals[0], options: .init(threadCount: threads))
        try interpreter.allocateTensors()
        var generator = SplitMix64(seed: 0)
        for i in 0 ..< interpreter.inputTensorCount {
            let input = try interpreter.input(at: i)
            try interpreter.copy(Data((0 ..< input.data.count).map { _ in UInt8(truncatingIfNeeded: generator.next()) }), toInputAt: i)
            if input.dataType == .float32 {
                // Random bytes are not sensible floats: use uniform [-1, 1).
                let floats = (0 ..< input.data.count / 4).map { _ in Float(generator.next() >> 40) / Float(1 << 23) - 1 }
                try interpreter.copy(floats.withUnsafeBytes { Data($0) }, toInputAt: i)
            }
        }
        for _ in 0 ..< warmup { try interpreter.invoke() }
        var times = [Double]()
        for _ in 0 ..< runs {
            let start = DispatchTime.now().uptimeNanoseconds
            try interpreter.invoke()
            times.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
        }
        times.sort()
        let median = times[times.count / 2], mean = times.reduce(0, +) / Double(times.count)
        if arguments.flag("json") {
            print("{\"model\": \"\(arguments.positionals[0])\", \"runs\": \(runs), \"threads\": \(threads), \"median_ms\": \(median), \"min_ms\": \(times[0]), \"mean_ms\": \(mean)}")
        } else {
            print(String(format: "%@: median %.3f ms, min %.3f ms, mean %.3f ms over %d runs (%d thread%@)",
                         arguments.positionals[0], median, times[0], mean, runs, threads, threads == 1 ? "" : "s"))
        }
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
