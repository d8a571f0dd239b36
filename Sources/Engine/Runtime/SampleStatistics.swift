/// The median, 90th percentile, minimum and mean of timed samples, for benchmarks.
///
/// It lives here, in optimised code, because the CLI is built without optimisation: its `sort`
/// is the standard library's unspecialised generic one, which allocates a coroutine frame on
/// every element access, and `compare_litert.py --allocations` (allocations per invocation,
/// counted over the whole process) counted thousands of those against the interpreter.
public struct SampleStatistics: Sendable {
    public let median, p90, min, mean: Double

    /// The statistics of `samples` (not empty).
    public init(_ samples: [Double]) {
        precondition(!samples.isEmpty, "no samples")
        let sorted = samples.sorted()
        median = sorted[sorted.count / 2]
        p90 = sorted[Swift.min(sorted.count - 1, Int((Double(sorted.count) * 0.9).rounded(.up)) - 1)]
        min = sorted[0]
        mean = sorted.reduce(0, +) / Double(sorted.count)
    }

    /// The median of `values` (the upper one of an even count), 0 for none.
    public static func median(_ values: [UInt64]) -> Double {
        values.isEmpty ? 0 : Double(values.sorted()[values.count / 2])
    }
}
