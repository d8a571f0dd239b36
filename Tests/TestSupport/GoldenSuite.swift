import Foundation
import XCTest
import Engine

/// Runs every case of a golden suite, printing one line per case, and fails on any case outside
/// its tolerance. Exact suites (tolerance 0) require identical bytes. Every case must run: an
/// unsupported operator is a failure, never a skip. `options` choose the thread count.
public func checkSuite(_ suite: URL, options: Interpreter.Options = .init(), file: StaticString = #filePath, line: UInt = #line) throws {
    guard FileManager.default.fileExists(atPath: suite.appendingPathComponent("manifest.json").path) else {
        XCTFail("golden suite \(suite.path) has no manifest.json", file: file, line: line)
        return
    }
    let (origin, cases) = try GoldenCase.load(suite: suite)
    print("golden suite \(suite.lastPathComponent) (\(options.threadCount ?? 1) threads): \(cases.count) cases from \(origin["runtime"] ?? "?") (\(origin["resolver"] ?? "?"))")
    XCTAssertFalse(cases.isEmpty, "no cases in \(suite.path)", file: file, line: line)
    var failures = [String]()
    for c in cases {
        do {
            let actual = try runModel(path: c.modelPath(), inputs: c.inputs(), options: options)
            let expected = try c.expectedOutputs()
            guard actual.count == expected.count, !expected.isEmpty else {
                failures.append("\(c.name): \(actual.count) outputs, expected \(expected.count)")
                continue
            }
            var worst = 0.0, summary = [String](), failed = false
            for (i, (a, e)) in zip(actual, expected).enumerated() {
                let cmp = Comparison(a, e)
                if let mismatch = cmp.shapeMismatch {
                    failures.append("\(c.name) output \(i): \(mismatch)")
                    failed = true
                    continue
                }
                worst = max(worst, cmp.relativeError)
                let ok = c.tolerance == 0 ? a.data == e.data : cmp.relativeError <= c.tolerance
                summary.append("out\(i) maxabs=\(String(format: "%.3g", cmp.maxAbsoluteError)) diff=\(cmp.differing)")
                if !ok { failed = true; failures.append("\(c.name) output \(i): max |Δ| \(cmp.maxAbsoluteError) (relative \(cmp.relativeError), \(cmp.differing) elements differ), tolerance \(c.tolerance)") }
            }
            print("  \(failed ? "FAIL" : "ok  ") \(c.name) [\(c.ops.joined(separator: ","))] rel=\(String(format: "%.3g", worst)) tol=\(c.tolerance) \(summary.joined(separator: " "))")
        } catch let skip as XCTSkip {
            throw skip
        } catch {
            failures.append("\(c.name): \(error)")
            print("  FAIL \(c.name): \(error)")
        }
    }
    XCTAssert(failures.isEmpty, "\(failures.count) of \(cases.count) cases failed:\n" + failures.joined(separator: "\n"), file: file, line: line)
}
