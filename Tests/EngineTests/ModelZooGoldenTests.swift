import Foundation
import XCTest
import Engine
import TestSupport

/// Public real-world models (MediaPipe 0.10.14's face, palm, hand, iris and pose models, one of
/// them sparse) against LiteRT's reference kernels on a seeded input. The models live in a cache
/// folder outside the repository (`Tests/Goldens/fetch_model_zoo.py` fills it); the test skips,
/// saying so, when they are absent. Only their inputs and LiteRT's outputs are committed.
final class ModelZooGoldenTests: XCTestCase {
    /// `$SWIFTLITE_MODEL_ZOO`, else `~/.cache/swiftlite/model_zoo` (as the fetch script).
    static var zooDirectory: URL {
        if let path = ProcessInfo.processInfo.environment["SWIFTLITE_MODEL_ZOO"], !path.isEmpty { return URL(fileURLWithPath: path) }
        return FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache/swiftlite/model_zoo")
    }

    /// The zoo covers at least 15 public models or public architectures (issue 9): the fetched
    /// MediaPipe models and the committed Keras conversions, counted from the two manifests.
    func testZooHasAtLeastFifteenModels() throws {
        func count(_ suite: String) throws -> Int {
            let url = Fixtures.directory("EngineTests").appendingPathComponent("\(suite)/manifest.json")
            let manifest = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any]
            return (manifest?["cases"] as? [Any])?.count ?? 0
        }
        XCTAssertGreaterThanOrEqual(try count("model_zoo") + count("keras_zoo"), 15)
    }

    /// Networks converted from Keras with real converter options: dynamic-range (hybrid) and
    /// sparse MobileNetV2, float16 and dynamic-range MobileNetV3Small, a PReLU / TRANSPOSE_CONV
    /// encoder–decoder in float32 and int8.
    func testKerasZooGoldens() throws {
        try checkSuite(Fixtures.directory("EngineTests").appendingPathComponent("keras_zoo"))
    }

    func testModelZooGoldens() throws {
        let suite = Fixtures.directory("EngineTests").appendingPathComponent("model_zoo")
        let manifest = try JSONSerialization.jsonObject(with: Data(contentsOf: suite.appendingPathComponent("manifest.json"))) as? [String: Any]
        let cases = manifest?["cases"] as? [[String: Any]] ?? []
        XCTAssertFalse(cases.isEmpty, "no model-zoo cases")
        let missing = cases.compactMap { $0["model_file"] as? String }
            .filter { !FileManager.default.fileExists(atPath: Self.zooDirectory.appendingPathComponent($0).path) }
        guard missing.isEmpty else {
            throw XCTSkip("model zoo absent from \(Self.zooDirectory.path) (\(missing.count) of \(cases.count) models missing); run `python3 Tests/Goldens/fetch_model_zoo.py` to fetch them (stdlib + pip; .ci/run does)")
        }
        var failures = [String]()
        for entry in cases {
            let name = entry["name"] as? String ?? "?", file = entry["model_file"] as? String ?? "?"
            let tolerance = (entry["tolerance"] as? NSNumber)?.doubleValue ?? 0
            let path = Self.zooDirectory.appendingPathComponent(file).path
            let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? -1
            guard size == (entry["bytes"] as? Int) else {
                failures.append("\(name): \(path) has \(size) bytes, the manifest says \(entry["bytes"] ?? "?") (fetch it again)")
                continue
            }
            do {
                let directory = suite.appendingPathComponent(name)
                var inputs = [NumpyArray](), expected = [NumpyArray]()
                while case let url = directory.appendingPathComponent("input_\(inputs.count).npy"), FileManager.default.fileExists(atPath: url.path) {
                    // Stored as uint8 q; the model's input is Float(q) / 127.5 - 1 in float32.
                    let raw = try NumpyArray(contentsOf: url)
                    let values = raw.data.map { Float($0) / 127.5 - 1 }
                    inputs.append(NumpyArray(dataType: .float32, shape: raw.shape, data: values.withUnsafeBufferPointer { Data(buffer: $0) }))
                }
                while case let url = directory.appendingPathComponent("output_\(expected.count).npy"), FileManager.default.fileExists(atPath: url.path) {
                    expected.append(try NumpyArray(contentsOf: url))
                }
                let started = Date()
                let actual = try runModel(path: path, inputs: inputs)
                guard actual.count == expected.count else {
                    failures.append("\(name): \(actual.count) outputs, expected \(expected.count)")
                    continue
                }
                var worst = 0.0
                for (i, (a, e)) in zip(actual, expected).enumerated() {
                    let cmp = Comparison(a, e)
                    if let mismatch = cmp.shapeMismatch { failures.append("\(name) output \(i): \(mismatch)"); continue }
                    worst = max(worst, cmp.relativeError)
                    if cmp.relativeError > tolerance {
                        failures.append("\(name) output \(i): max |Δ| \(cmp.maxAbsoluteError) (relative \(cmp.relativeError)), tolerance \(tolerance)")
                    }
                }
                print("  \(worst <= tolerance ? "ok  " : "FAIL") \(name) rel=\(String(format: "%.3g", worst)) tol=\(tolerance) \(String(format: "%.2f", Date().timeIntervalSince(started))) s")
            } catch {
                failures.append("\(name): \(error)")
                print("  FAIL \(name): \(error)")
            }
        }
        XCTAssert(failures.isEmpty, "\(failures.count) model-zoo failures:\n" + failures.joined(separator: "\n"))
    }
}
