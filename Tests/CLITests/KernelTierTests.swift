import Engine
import Foundation
import TestSupport
import XCTest

/// The kernel tiers of one binary give the same bytes: every tensor a model computes (not only its
/// outputs) is compared between a process on the machine's own tier and one held to the AVX2 tier
/// by `SWIFTLITE_KERNELS=avx2`. Float results match exactly because every tier sums each output in
/// the same order (bias, then one FMA per term); integer results because the arithmetic is exact.
final class KernelTierTests: XCTestCase {
    /// The models: float and int8 networks whose operators reach every float tier kernel (the GEMM
    /// tiles, the fused blocks, the 3×3 rows, the 5×5 planes and windows) and the VNNI products.
    static let models = [
        "Models/efficientnet_lite0_f32.tflite", "Models/person_detector_f32.tflite",
        "Models/efficientnet_lite0_int8.tflite", "Models/person_detector_int8.tflite",
    ]

    func testEveryTensorIsTheSameOnTheAVX2Tier() throws {
        guard let executable = CLITests.executable else { throw XCTSkip("swiftlite executable not built (`make test` builds it)") }
        let probe = try run(executable, ["bench", Self.models[0], "--runs", "1", "--warmup", "0", "--json"], environment: [:])
        XCTAssertEqual(probe.status, 0, probe.stderr)
        guard probe.stdout.contains("\"avx512\"") else {
            throw XCTSkip("this machine runs the AVX2 tier already (\(probe.stdout.prefix(200)))")
        }
        for model in Self.models {
            let directory = try TemporaryDirectories.make(for: self, prefix: "tiers")
            let input = directory.appendingPathComponent("input.npy")
            try Self.seededInput(for: CLITests.root.appendingPathComponent(model)).npyData().write(to: input)
            var dumps: [URL] = []
            for (name, environment) in [("native", [String: String]()), ("avx2", ["SWIFTLITE_KERNELS": "avx2"])] {
                let out = directory.appendingPathComponent(name)
                let result = try run(executable, ["run", model, "--input", input.path, "--output-dir", out.path, "--dump-intermediates"],
                                     environment: environment)
                XCTAssertEqual(result.status, 0, "\(model) \(name): \(result.stderr)")
                dumps.append(out.appendingPathComponent("tensors"))
            }
            let files = try FileManager.default.contentsOfDirectory(atPath: dumps[0].path).filter { $0.hasSuffix(".npy") }.sorted()
            XCTAssertGreaterThan(files.count, 20, model)
            for file in files {
                let a = try Data(contentsOf: dumps[0].appendingPathComponent(file))
                let b = try Data(contentsOf: dumps[1].appendingPathComponent(file))
                XCTAssertTrue(a == b, "\(model): tensor \(file) differs between the AVX-512 and AVX2 tiers")
            }
        }
    }

    /// A seeded input for the model's one input: bytes for an integer input, floats in [-1, 1).
    static func seededInput(for model: URL) throws -> NumpyArray {
        let interpreter = try Interpreter(modelPath: model.path)
        try interpreter.allocateTensors()
        let tensor = try interpreter.input(at: 0)
        let shape = tensor.shape.dimensions
        var generator = SplitMix64(seed: 7)
        let count = shape.reduce(1, *)
        switch tensor.dataType {
        case .float32:
            let values = (0 ..< count).map { _ in Float(Double(generator.next() >> 11) / Double(1 << 53) * 2 - 1) }
            return NumpyArray(dataType: .float32, shape: shape, data: values.withUnsafeBytes { Data($0) })
        default:
            let bytes = (0 ..< count).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            return NumpyArray(dataType: tensor.dataType, shape: shape, data: Data(bytes))
        }
    }

    /// `runProcess` in a temporary directory of this test.
    func run(_ executable: URL, _ arguments: [String], environment: [String: String]) throws -> (status: Int32, stdout: String, stderr: String) {
        try runProcess(executable, arguments, stdin: nil, in: try TemporaryDirectories.make(for: self, prefix: "tiers-run"),
                       environment: environment)
    }
}
