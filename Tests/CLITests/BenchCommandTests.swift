import Foundation
import TestSupport
import XCTest

/// `swiftlite bench`: the JSON report's fields (with threads and the per-operator profile) and
/// the rejection of bad thread counts. Times are not checked, only that they are sane.
extension CLITests {
    func testBenchJSONWithThreadsAndProfile() throws {
        let model = Self.floatFixtures.appendingPathComponent("net_mobilenet_v1_025_128/model.tflite").path
        let output = try swiftlite("bench", model, "--runs", "3", "--warmup", "1", "--threads", "2", "--profile", "--json")
        XCTAssertEqual(output.status, 0, output.stderr)
        let report = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(output.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(report["threads"] as? Int, 2)
        XCTAssertEqual(report["runs"] as? Int, 3)
        XCTAssertEqual(report["model"] as? String, model)
        for key in ["median_ms", "p90_ms", "min_ms", "mean_ms", "load_prepare_ms", "first_invoke_ms"] {
            let value = try XCTUnwrap(report[key] as? Double, "\(key) missing in \(output.stdout)")
            XCTAssertGreaterThan(value, 0, key)
        }
        let median = report["median_ms"] as? Double ?? 0, p90 = report["p90_ms"] as? Double ?? 0, minimum = report["min_ms"] as? Double ?? 0
        XCTAssertLessThanOrEqual(minimum, median)
        XCTAssertLessThanOrEqual(median, p90)
        let inOrder = try XCTUnwrap(report["run_ms"] as? [Double], "run_ms missing in \(output.stdout)")
        XCTAssertEqual(inOrder.count, 3)
        XCTAssertEqual(inOrder.min(), minimum)
        XCTAssertEqual(inOrder.sorted()[1], median)
        XCTAssertGreaterThan(report["peak_rss_bytes"] as? Int ?? 0, 0)
        XCTAssertGreaterThan(report["peak_rss_over_baseline_bytes"] as? Int ?? 0, 0)
        XCTAssertGreaterThan(report["total_macs"] as? Int ?? 0, 0)
        let kernels = try XCTUnwrap(report["kernels"] as? [String: String], "kernels missing in \(output.stdout)")
        XCTAssertTrue(["avx512", "avx2", "portable"].contains(kernels["float"] ?? ""), "\(kernels)")
        XCTAssertTrue(["avx512vnni", "avx512vnni (run time)", "avx2", "int16"].contains(kernels["integer"] ?? ""), "\(kernels)")
        let operators = try XCTUnwrap(report["operators"] as? [[String: Any]])
        XCTAssertEqual(operators.count, 31)
        XCTAssertEqual(operators.compactMap { $0["index"] as? Int }, Array(0 ..< 31))
        XCTAssertTrue(operators.allSatisfy {
            $0["op"] is String && $0["output_shape"] is [Int] && $0["macs"] is Int && $0["median_ms"] is Double
                && $0["gops"] is Double && $0["percent"] is Double && $0["busy_ms"] is Double && $0["busy_percent"] is Double
        })
        // Two threads' busy time: at most both threads all the time.
        for op in operators {
            let ms = op["median_ms"] as? Double ?? 0, busy = op["busy_ms"] as? Double ?? -1
            XCTAssertTrue(busy >= 0 && busy <= 2 * ms + 1e-6, "\(op)")
        }
        XCTAssertEqual(operators.reduce(0) { $0 + ($1["macs"] as? Int ?? 0) }, report["total_macs"] as? Int)
        XCTAssertEqual(operators.reduce(0) { $0 + ($1["percent"] as? Double ?? 0) }, 100, accuracy: 0.01)
        XCTAssertEqual(operators.first?["output_shape"] as? [Int], [1, 64, 64, 8])
    }

    func testBenchTextProfile() throws {
        let model = Self.floatFixtures.appendingPathComponent("net_mobilenet_v1_025_128/model.tflite").path
        let output = try swiftlite("bench", model, "--runs", "2", "--warmup", "0", "--profile")
        XCTAssertEqual(output.status, 0, output.stderr)
        for expected in ["median", "p90", "load + prepare", "first invoke", "peak RSS", "kernels: float ", "per operator", "DEPTHWISE_CONV_2D", "GOP/s",
                         "per operator type:"] {
            XCTAssertTrue(output.stdout.contains(expected), "missing '\(expected)' in:\n\(output.stdout)")
        }
    }

    func testBenchRejectsBadThreadCounts() throws {
        let model = Self.floatFixtures.appendingPathComponent("softmax_1x10/model.tflite").path
        for count in ["0", "-2", "65", "many"] {
            let output = try swiftlite("bench", model, "--threads", count)
            XCTAssertNotEqual(output.status, 0, "--threads \(count)")
            XCTAssertTrue(output.stderr.contains("--threads"), output.stderr)
            XCTAssertTrue(output.stderr.contains("1...64"), output.stderr)
        }
    }

    /// `validate()` names the flag that does not fit the mode, before any model is loaded.
    func testBenchValidationNamesTheFlags() throws {
        let model = Self.floatFixtures.appendingPathComponent("softmax_1x10/model.tflite").path
        let cases: [([String], String)] = [
            (["bench"], "bench takes exactly one MODEL path, got 0"),
            (["bench", model, model], "bench takes exactly one MODEL path, got 2"),
            (["bench", "--dispatch", model], "--dispatch measures no model"),
            (["bench", "--dispatch", "--runs", "3"], "--runs is for timing a MODEL, not for --dispatch"),
            (["bench", "--dispatch", "--profile"], "--profile is for timing a MODEL, not for --dispatch"),
            (["bench", "--dispatch", "--threads", "1"], "--dispatch needs --threads of at least 2, got 1"),
            (["bench", model, "--runs", "0"], "--runs must be an integer in 1...100000, got '0'"),
            (["bench", model, "--warmup=-1"], "--warmup must be an integer in 0...100000, got '-1'"),
        ]
        for (arguments, message) in cases {
            let output = try swiftlite(arguments)
            assertFails(output, mentioning: message)
            XCTAssertEqual(output.status, 2, "\(arguments)")
        }
    }

    func testBenchDispatchJSON() throws {
        let output = try swiftlite("bench", "--dispatch", "--threads", "2", "--threads", "3", "--json")
        XCTAssertEqual(output.status, 0, output.stderr)
        let reports = try XCTUnwrap(try json(output.stdout) as? [[String: Any]])
        XCTAssertEqual(reports.compactMap { $0["threads"] as? Int }, [2, 3])
        for report in reports {
            for key in ["back_to_back_median_us", "back_to_back_mean_us", "after_pause_median_us", "after_pause_mean_us"] {
                XCTAssertGreaterThan(try XCTUnwrap(report[key] as? Double, key), 0, key)
            }
        }
    }
}
