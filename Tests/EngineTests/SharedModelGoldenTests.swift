import Foundation
import XCTest
import Engine
import TestSupport

/// The canonical quantized models in `../shared/models`, run whole, against LiteRT's reference
/// kernels (BUILTIN_REF): every output must be byte-identical.
///
/// Fixtures: `Tests/EngineTests/Fixtures/shared_models/<model>/`, written by
/// `Tests/Goldens/make_shared_model_goldens.py` (5 seeded random inputs and every photo in
/// `../shared/images` per model). The models themselves stay in `../shared`; without it these tests
/// skip. For the SSD only the backbone is checked: the box encodings and class predictions that
/// feed `TFLite_Detection_PostProcess`, read with `preserveAllTensors`.
///
/// Each case prints one line: `identical`, or how many bytes differ and by how much. When a model
/// differs, `testMobileNetV1QuantIntermediates` names the first operator whose output differs.
final class SharedModelGoldenTests: XCTestCase {
    func testMobileNetV1Quant() throws { try checkSharedModel("mobilenet_v1_0.25_128_quant") }
    func testMobileNetV2Quant() throws { try checkSharedModel("mobilenet_v2_1.0_224_quant") }
    func testMobileNetV2INatBirdQuant() throws { try checkSharedModel("mobilenet_v2_1.0_224_inat_bird_quant") }
    func testTF2MobileNetV2PostTrainingQuant() throws { try checkSharedModel("tf2_mobilenet_v2_1.0_224_ptq") }
    func testSSDMobileNetV1Backbone() throws { try checkSharedModel("ssd_mobilenet_v1_coco_quant") }

    /// Every tensor LiteRT computes for one photo, compared operator by operator in execution order.
    func testMobileNetV1QuantIntermediates() throws { try checkIntermediates("mobilenet_v1_0.25_128_quant") }

    /// Compares every recorded intermediate tensor and fails naming the first operator (in execution
    /// order) whose output differs.
    private func checkIntermediates(_ stem: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let suite = try SharedModelSuite(stem: stem)
        guard let recorded = suite.intermediates else {
            return XCTFail("\(stem)/manifest.json has no \"intermediates\" entry", file: file, line: line)
        }
        let label = "shared-model \(stem) intermediates (\(recorded.caseName))"
        let interpreter: Interpreter
        do {
            interpreter = try suite.makeInterpreter(preserveAllTensors: true)
        } catch {
            print("\(label): NOT RUNNABLE, first operator that cannot run: \(error)")
            return XCTFail("\(label): the model cannot be prepared, so no intermediate was compared. First operator that cannot run: \(error)", file: file, line: line)
        }
        let input = try NumpyArray(contentsOf: suite.directory.appendingPathComponent("\(recorded.caseName)/input_0.npy"))
        try interpreter.copy(input.data, toInputAt: 0)
        try interpreter.invoke()

        let directory = suite.directory.appendingPathComponent(recorded.directory)
        var compared = Set<Int>(), differing = 0, firstMismatch: String?
        for node in interpreter.graph.nodes {
            for t in node.outputs where recorded.tensors.contains(t) {
                compared.insert(t)
                let expected = try NumpyArray(contentsOf: directory.appendingPathComponent("\(t).npy"))
                let difference = TensorDifference(try interpreter.tensor(t), expected)
                print("  op \(node.index) \(node.opName) → tensor \(t): \(difference)")
                guard !difference.isIdentical else { continue }
                differing += 1
                if firstMismatch == nil {
                    firstMismatch = "operator \(node.index) (\(node.opName)) output tensor \(t) '\(interpreter.graph.tensors[t].name)': \(difference)"
                }
            }
        }
        let missing = Set(recorded.tensors).subtracting(compared).sorted()
        XCTAssert(missing.isEmpty, "\(label): recorded tensors \(missing) are not written by any operator of the graph", file: file, line: line)
        if let firstMismatch {
            print("\(label): \(differing) of \(compared.count) operator outputs differ; FIRST: \(firstMismatch)")
            XCTFail("\(label): first operator whose output differs from LiteRT: \(firstMismatch) (\(differing) of \(compared.count) operator outputs differ; later ones may only inherit the difference)", file: file, line: line)
        } else {
            print("\(label): all \(compared.count) operator outputs identical")
        }
    }

    /// Runs every case of one model's manifest and requires identical bytes.
    private func checkSharedModel(_ stem: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let suite = try SharedModelSuite(stem: stem)
        let label = "shared-model \(stem)"
        let interpreter: Interpreter
        do {
            interpreter = try suite.makeInterpreter(preserveAllTensors: suite.cases.contains { $0.tensors != nil })
        } catch {
            print("\(label): NOT RUNNABLE, \(suite.cases.count) cases not run: \(error)")
            return XCTFail("\(label): cannot prepare the model, \(suite.cases.count) cases not run: \(error)", file: file, line: line)
        }
        var failures = [String]()
        for c in suite.cases {
            let caseDirectory = suite.directory.appendingPathComponent(c.name)
            do {
                let input = try NumpyArray(contentsOf: caseDirectory.appendingPathComponent("input_0.npy"))
                try interpreter.copy(input.data, toInputAt: 0)
                try interpreter.invoke()
                let tensors = c.tensors ?? interpreter.graph.outputs
                guard tensors.count == suite.recordedOutputCount else {
                    throw SharedModelSuite.Problem("the interpreter has \(tensors.count) outputs, the fixture records \(suite.recordedOutputCount)")
                }
                var differences = [String]()
                for (k, t) in tensors.enumerated() {
                    let expected = try NumpyArray(contentsOf: caseDirectory.appendingPathComponent("output_\(k).npy"))
                    let difference = TensorDifference(try interpreter.tensor(t), expected)
                    if !difference.isIdentical { differences.append("output \(k) (tensor \(t)): \(difference)") }
                }
                let xnnpack = c.xnnpackMaxDiff == 0 ? "LiteRT's XNNPACK matches the reference" : "LiteRT's XNNPACK differs from the reference by up to \(c.xnnpackMaxDiff)"
                if differences.isEmpty {
                    print("\(label) \(c.name): identical")
                } else {
                    print("\(label) \(c.name): DIFFERS, \(differences.joined(separator: "; ")) [\(xnnpack)]")
                    failures.append("\(c.name): \(differences.joined(separator: "; "))")
                }
            } catch {
                print("\(label) \(c.name): ERROR \(error)")
                failures.append("\(c.name): \(error)")
            }
        }
        print("\(label): \(suite.cases.count - failures.count) of \(suite.cases.count) cases identical")
        XCTAssert(failures.isEmpty, "\(label): \(failures.count) of \(suite.cases.count) cases differ from LiteRT BUILTIN_REF:\n" + failures.joined(separator: "\n"), file: file, line: line)
    }
}

/// One model's fixtures: `Fixtures/shared_models/<stem>/manifest.json` and its case directories.
private struct SharedModelSuite {
    struct Case {
        let name: String
        /// Tensor indices to compare, or nil for the model's outputs.
        let tensors: [Int]?
        let xnnpackMaxDiff: Int
    }

    struct Problem: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    let stem: String
    let directory: URL
    let modelPath: String
    let cases: [Case]
    /// How many `output_<k>.npy` files each case has.
    let recordedOutputCount: Int
    let intermediates: (caseName: String, directory: String, tensors: [Int])?

    /// Reads the manifest and finds the model in `../shared`.
    /// - Throws: `XCTSkip` when `../shared` or the model is absent; `Problem` for a broken manifest
    ///   or a shared model that is not the one the goldens were recorded from.
    init(stem: String) throws {
        self.stem = stem
        directory = Fixtures.directory("EngineTests").appendingPathComponent("shared_models/\(stem)")
        let manifestURL = directory.appendingPathComponent("manifest.json")
        guard let manifest = try JSONSerialization.jsonObject(with: Data(contentsOf: manifestURL)) as? [String: Any],
              let model = manifest["model"] as? String, let entries = manifest["cases"] as? [[String: Any]],
              let outputs = manifest["output_tensors"] as? [Any], !entries.isEmpty else {
            throw Problem("\(manifestURL.path): expected \"model\", \"output_tensors\" and a non-empty \"cases\"")
        }
        let url = try Fixtures.shared(model)
        modelPath = url.path
        let size = (try FileManager.default.attributesOfItem(atPath: modelPath)[.size] as? NSNumber)?.intValue
        if let expected = (manifest["model_bytes"] as? NSNumber)?.intValue, size != expected {
            throw Problem("\(modelPath) has \(size ?? -1) bytes, the goldens were recorded from a \(expected)-byte model; regenerate them with Tests/Goldens/make_shared_model_goldens.py")
        }
        cases = entries.map { entry in
            Case(name: entry["name"] as? String ?? "?",
                 tensors: ((entry["outputs"] as? [String: Any])?["tensors"] as? [NSNumber])?.map(\.intValue),
                 xnnpackMaxDiff: (entry["xnnpack_max_diff"] as? NSNumber)?.intValue ?? 0)
        }
        recordedOutputCount = outputs.count
        if let entry = manifest["intermediates"] as? [String: Any] {
            let tensors = (entry["tensors"] as? [[String: Any]] ?? []).compactMap { ($0["tensor"] as? NSNumber)?.intValue }
            intermediates = (entry["case"] as? String ?? "?", entry["directory"] as? String ?? "intermediates", tensors)
        } else {
            intermediates = nil
        }
    }

    func makeInterpreter(preserveAllTensors: Bool) throws(ModelError) -> Interpreter {
        var options = Interpreter.Options()
        options.preserveAllTensors = preserveAllTensors
        let interpreter = try Interpreter(modelPath: modelPath, options: options)
        try interpreter.allocateTensors()
        return interpreter
    }
}

/// How a tensor computed by the engine differs from a recorded one, byte for byte.
private struct TensorDifference: CustomStringConvertible {
    /// Set when type or shape differ (then nothing else is compared).
    let layoutMismatch: String?
    let differingBytes: Int
    let byteCount: Int
    /// max |ours − reference| in stored units (quantized steps for integer tensors).
    let maxDifference: Double

    init(_ actual: Tensor, _ expected: NumpyArray) {
        byteCount = expected.data.count
        guard actual.dataType == expected.dataType, actual.shape.dimensions == expected.shape else {
            layoutMismatch = "got \(actual.dataType) \(actual.shape.dimensions), expected \(expected.dataType) \(expected.shape)"
            differingBytes = byteCount
            maxDifference = .infinity
            return
        }
        layoutMismatch = nil
        differingBytes = zip(actual.data, expected.data).reduce(0) { $0 + ($1.0 == $1.1 ? 0 : 1) }
        let ours = NumpyArray(dataType: actual.dataType, shape: actual.shape.dimensions, data: actual.data)
        maxDifference = differingBytes == 0 ? 0 : Comparison(ours, expected).maxAbsoluteError
    }

    var isIdentical: Bool { layoutMismatch == nil && differingBytes == 0 }

    var description: String {
        if let layoutMismatch { return layoutMismatch }
        if differingBytes == 0 { return "identical" }
        return "\(differingBytes) of \(byteCount) bytes differ, max |Δ| \(String(format: "%g", maxDifference))"
    }
}

