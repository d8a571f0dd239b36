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
        for key in ["median_ms", "p90_ms", "min_ms", "mean_ms", "load_prepare_ms"] {
            let value = try XCTUnwrap(report[key] as? Double, "\(key) missing in \(output.stdout)")
            XCTAssertGreaterThan(value, 0, key)
        }
        let median = report["median_ms"] as? Double ?? 0, p90 = report["p90_ms"] as? Double ?? 0, minimum = report["min_ms"] as? Double ?? 0
        XCTAssertLessThanOrEqual(minimum, median)
        XCTAssertLessThanOrEqual(median, p90)
        XCTAssertGreaterThan(report["peak_rss_bytes"] as? Int ?? 0, 0)
        XCTAssertGreaterThan(report["peak_rss_over_baseline_bytes"] as? Int ?? 0, 0)
        XCTAssertGreaterThan(report["total_macs"] as? Int ?? 0, 0)
        let operators = try XCTUnwrap(report["operators"] as? [[String: Any]])
        XCTAssertEqual(operators.count, 31)
        XCTAssertEqual(operators.compactMap { $0["index"] as? Int }, Array(0 ..< 31))
        XCTAssertTrue(operators.allSatisfy {
            $0["op"] is String && $0["output_shape"] is [Int] && $0["macs"] is Int && $0["median_ms"] is Double
                && $0["gops"] is Double && $0["percent"] is Double
        })
        XCTAssertEqual(operators.reduce(0) { $0 + ($1["macs"] as? Int ?? 0) }, report["total_macs"] as? Int)
        XCTAssertEqual(operators.reduce(0) { $0 + ($1["percent"] as? Double ?? 0) }, 100, accuracy: 0.01)
        XCTAssertEqual(operators.first?["output_shape"] as? [Int], [1, 64, 64, 8])
    }

    func testBenchTextProfile() throws {
        let model = Self.floatFixtures.appendingPathComponent("net_mobilenet_v1_025_128/model.tflite").path
        let output = try swiftlite("bench", model, "--runs", "2", "--warmup", "0", "--profile")
        XCTAssertEqual(output.status, 0, output.stderr)
        for expected in ["median", "p90", "load + prepare", "peak RSS", "per operator", "DEPTHWISE_CONV_2D", "GOP/s", "per operator type:"] {
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
}
