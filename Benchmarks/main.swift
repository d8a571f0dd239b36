import Engine
import Foundation

// Micro-benchmark of the worker pool: what one parallel operator pays for its threads.
//
//   swift run -c release Benchmarks [--threads N ...]
//
// For each thread count (default 2 and 3): the median and mean time of dispatching empty tasks,
// back to back (as between the operators of one invocation) and after the workers parked (as for
// the first operator after a pause). Per-operator profiles of whole models are
// `swiftlite bench MODEL --profile [--threads N]`; LiteRT side by side is
// `python Benchmarks/compare_litert.py`.

var counts = [Int]()
var arguments = Array(CommandLine.arguments.dropFirst())
while let i = arguments.firstIndex(of: "--threads"), i + 1 < arguments.count {
    if let n = Int(arguments[i + 1]) { counts.append(n) }
    arguments.removeSubrange(i ... i + 1)
}
for threads in counts.isEmpty ? [2, 3] : counts {
    do {
        let o = try DispatchOverhead.measure(threadCount: threads)
        print(String(format: "%2d threads: back to back %.2f µs median, %.2f µs mean; after parking %.2f µs median, %.2f µs mean",
                     threads, o.backToBackMedian / 1000, o.backToBackMean / 1000, o.afterPauseMedian / 1000, o.afterPauseMean / 1000))
    } catch {
        print("\(threads) threads: \(error)")
    }
}
