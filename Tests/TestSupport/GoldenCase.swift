import Foundation
import Engine

/// One golden fixture: a model, its inputs, and the outputs the reference runtime produced.
///
/// Layout: `<suite>/<name>/model.tflite`, `input_<k>.npy`, `output_<k>.npy`, and
/// `<suite>/manifest.json` with `{"origin": {...}, "cases": [{"name", "ops", "tolerance", ...}]}`.
public struct GoldenCase {
    public let name: String
    public let ops: [String]
    /// Allowed max |ours − reference| relative to max(1, max |reference|); 0 means bit-exact.
    public let tolerance: Double
    public let directory: URL

    /// The case's `model` entry when the model is not stored with the case: a path relative to the
    /// repository root (`Models/...`) or into the shared data (`../shared/...`).
    public var modelReference: String?

    /// The model to run: `<case>/model.tflite`, or the referenced model (throws `XCTSkip` when it
    /// lives in an absent `../shared`).
    public func modelPath() throws -> String {
        guard let reference = modelReference else { return directory.appendingPathComponent("model.tflite").path }
        if reference.hasPrefix("../shared/") { return try Fixtures.shared(String(reference.dropFirst("../shared/".count))).path }
        return Fixtures.repositoryRoot.appendingPathComponent(reference).path
    }

    package func inputs() throws -> [NumpyArray] { try arrays(prefix: "input") }
    package func expectedOutputs() throws -> [NumpyArray] { try arrays(prefix: "output") }

    private func arrays(prefix: String) throws -> [NumpyArray] {
        var result = [NumpyArray]()
        while case let url = directory.appendingPathComponent("\(prefix)_\(result.count).npy"),
              FileManager.default.fileExists(atPath: url.path) {
            result.append(try NumpyArray(contentsOf: url))
        }
        return result
    }

    /// The origin description and every case of a suite's manifest.
    public static func load(suite: URL) throws -> (origin: [String: Any], cases: [GoldenCase]) {
        let manifest = try JSONSerialization.jsonObject(with: Data(contentsOf: suite.appendingPathComponent("manifest.json"))) as? [String: Any] ?? [:]
        let cases = (manifest["cases"] as? [[String: Any]] ?? []).map { entry in
            GoldenCase(name: entry["name"] as? String ?? "?", ops: entry["ops"] as? [String] ?? [],
                       tolerance: (entry["tolerance"] as? NSNumber)?.doubleValue ?? 0,
                       directory: suite.appendingPathComponent(entry["name"] as? String ?? "?"),
                       modelReference: entry["model"] as? String)
        }
        return (manifest["origin"] as? [String: Any] ?? [:], cases)
    }
}

/// Runs a model on `.npy` inputs and returns its outputs as arrays.
package func runModel(path: String, inputs: [NumpyArray], options: Interpreter.Options = .init()) throws -> [NumpyArray] {
    let interpreter = try Interpreter(modelPath: path, options: options)
    try interpreter.allocateTensors()
    for (i, input) in inputs.enumerated() { try interpreter.copy(input.data, toInputAt: i) }
    try interpreter.invoke()
    return try (0 ..< interpreter.outputTensorCount).map { i in
        let t = try interpreter.output(at: i)
        return NumpyArray(dataType: t.dataType, shape: t.shape.dimensions, data: t.data)
    }
}

/// How far `actual` is from `expected`.
public struct Comparison {
    /// max |actual − expected| over all elements.
    public let maxAbsoluteError: Double
    /// max |expected|.
    public let maxMagnitude: Double
    /// Number of elements that differ at all.
    public let differing: Int
    public let shapeMismatch: String?

    /// Error relative to max(1, max |expected|), the measure the tolerances use.
    public var relativeError: Double { maxAbsoluteError / max(1, maxMagnitude) }

    package init(_ actual: NumpyArray, _ expected: NumpyArray) {
        if actual.shape != expected.shape || actual.dataType != expected.dataType {
            shapeMismatch = "got \(actual.dataType) \(actual.shape), expected \(expected.dataType) \(expected.shape)"
            maxAbsoluteError = .infinity; maxMagnitude = 0; differing = -1
            return
        }
        shapeMismatch = nil
        let a = actual.floats(), e = expected.floats()
        var worst = 0.0, magnitude = 0.0, count = 0
        for i in 0 ..< min(a.count, e.count) {
            let diff = Double(a[i]) - Double(e[i])
            if diff != 0 || a[i].isNaN != e[i].isNaN { count += 1 }
            worst = max(worst, a[i].isNaN != e[i].isNaN ? .infinity : abs(diff))
            magnitude = max(magnitude, abs(Double(e[i])))
        }
        maxAbsoluteError = worst; maxMagnitude = magnitude; differing = count
    }
}
