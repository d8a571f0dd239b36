import Engine
import Foundation

// Latency benchmark for kernel work: per-operator-type time of whole models.
//
//   swift run -c release Benchmarks MODEL [MODEL ...] [--runs N]
//
// For each model: median end-to-end latency over N runs (1 GEMM thread, seeded random inputs), then
// the median time per operator type and its share. Compare with LiteRT using
// Benchmarks/compare_litert.py, which runs both in the same session.

var arguments = Array(CommandLine.arguments.dropFirst())
var runs = 30
if let i = arguments.firstIndex(of: "--runs"), i + 1 < arguments.count, let n = Int(arguments[i + 1]) {
    runs = max(1, n)
    arguments.removeSubrange(i ... i + 1)
}
if arguments.isEmpty {
    let shared = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("shared/models")
    arguments = ["perf/mobilenet_v2_1.0_224_f32.tflite", "perf/mobilenet_v2_1.0_224_int8.tflite",
                 "mobilenet_v2_1.0_224_quant.tflite", "tf2_mobilenet_v2_1.0_224_ptq.tflite"]
        .map { shared.appendingPathComponent($0).path }
}

for path in arguments {
    do {
        let interpreter = try Interpreter(modelPath: path, options: .init(threadCount: 1))
        try interpreter.allocateTensors()
        var state: UInt64 = 0x2545_F491_4F6C_DD1D
        for i in 0 ..< interpreter.inputTensorCount {
            let input = try interpreter.input(at: i)
            var bytes = [UInt8](repeating: 0, count: input.data.count)
            for k in bytes.indices {
                state ^= state << 13; state ^= state >> 7; state ^= state << 17
                bytes[k] = UInt8(truncatingIfNeeded: state)
            }
            if input.dataType == .float32 {
                let floats = stride(from: 0, to: bytes.count, by: 4).map { Float(bytes[$0]) / 127.5 - 1 }
                try interpreter.copy(floats.withUnsafeBytes { Data($0) }, toInputAt: i)
            } else {
                try interpreter.copy(Data(bytes), toInputAt: i)
            }
        }
        for _ in 0 ..< 3 { try interpreter.invoke() }
        var totals = [UInt64]()
        var perOp = [String: [UInt64]]()
        for _ in 0 ..< runs {
            let profile = try interpreter.invokeProfiled()
            totals.append(profile.reduce(0) { $0 + $1.nanoseconds })
            var byType = [String: UInt64]()
            for (node, ns) in profile { byType[node.opName, default: 0] += ns }
            for (op, ns) in byType { perOp[op, default: []].append(ns) }
        }
        func median(_ v: [UInt64]) -> Double { Double(v.sorted()[v.count / 2]) / 1e6 }
        let total = median(totals)
        print(String(format: "%@: %.3f ms median over %d runs", (path as NSString).lastPathComponent, total, runs))
        for (op, times) in perOp.sorted(by: { median($0.value) > median($1.value) }) {
            print(String(format: "  %-22@ %8.3f ms  %5.1f%%", op as NSString, median(times), 100 * median(times) / total))
        }
    } catch {
        print("\(path): \(error)")
    }
}
