import Foundation
import XCTest
@testable import Engine
import TestSupport

/// TFLite_Detection_PostProcess against LiteRT (Tests/Goldens/make_detection_goldens.py), and the
/// errors that bad options, anchors and input types must produce.
final class DetectionGoldenTests: XCTestCase {
    private let fixtures = Fixtures.directory("EngineTests")

    func testDetectionGoldens() throws {
        try checkSuite(fixtures.appendingPathComponent("detection"))
    }

    /// Each broken model fails to prepare with an error that names the operator and the problem.
    func testBadOptionsAndInputsAreRejected() throws {
        struct Manifest: Decodable {
            struct Case: Decodable { let name: String; let expect: [String]; let litert: String }
            let cases: [Case]
        }
        let directory = fixtures.appendingPathComponent("detection_errors")
        let manifest = try JSONDecoder().decode(Manifest.self, from: Data(contentsOf: directory.appendingPathComponent("errors.json")))
        XCTAssertGreaterThan(manifest.cases.count, 10)
        for c in manifest.cases {
            let message: String
            do {
                _ = try Plan(graph: Graph(contentsOf: directory.appendingPathComponent("\(c.name).tflite").path))
                message = "no error"
            } catch {
                message = "\(error)"
            }
            print("  \(c.name): \(message)")
            for fragment in c.expect + ["TFLite_Detection_PostProcess"] {
                XCTAssert(message.contains(fragment), "\(c.name): '\(message)' does not mention '\(fragment)'")
            }
        }
    }

    /// The kernel keeps no per-run state: two sessions of one plan, run on two threads at once,
    /// give the same outputs as running alone.
    func testSessionsShareThePlan() throws {
        let suite = fixtures.appendingPathComponent("detection")
        let (_, cases) = try GoldenCase.load(suite: suite)
        let picked = try ["op_regular_large", "op_fast_large"].map { name in try XCTUnwrap(cases.first { $0.name == name }) }
        for c in picked {
            let plan = try Plan(graph: Graph(contentsOf: c.modelPath()))
            let inputs = try c.inputs(), expected = try c.expectedOutputs()
            // Second input set: the scores in reverse order, so the two sessions disagree unless isolated.
            var reversed = inputs
            let scoreInput = try XCTUnwrap(inputs.firstIndex { $0.shape.count == 3 && $0.shape[2] > 4 })
            reversed[scoreInput].data = Data(inputs[scoreInput].floats().reversed().flatMap { withUnsafeBytes(of: $0) { Array($0) } })
            let alone = try Self.run(plan, reversed)
            XCTAssertNotEqual(alone, expected.map(\.data), "\(c.name): the two input sets should give different detections")
            let results = ThreadSafeBox<[[Data]]>([[], []])
            let inputSets = [inputs, reversed]
            DispatchQueue.concurrentPerform(iterations: 2) { worker in
                for _ in 0 ..< 20 {
                    let out = try? Self.run(plan, inputSets[worker])
                    results.mutate { $0[worker] = out ?? [] }
                }
            }
            XCTAssertEqual(results.value[0], expected.map(\.data), c.name)
            XCTAssertEqual(results.value[1], alone, c.name)
        }
    }

    /// The partial sort puts the `prefix` largest values first, in decreasing order, for any
    /// mix of ties (its exact tie order is checked against LiteRT by the *_ties goldens).
    func testPartialSortSelectsTheLargest() {
        var generator = SystemRandomNumberGenerator()
        for count in 1 ... 12 {
            for prefix in 1 ... count {
                for _ in 0 ..< 20 {
                    let values = (0 ..< count).map { _ in Float(Int.random(in: 0 ... 3, using: &generator)) }
                    var order = (0 ..< count).map(Int32.init)
                    values.withUnsafeBufferPointer { v in
                        order.withUnsafeMutableBufferPointer { o in
                            DetectionPostProcessKernel.partialSortDescending(o.baseAddress!, count: count, prefix: prefix, by: v.baseAddress!)
                        }
                    }
                    XCTAssertEqual(Set(order), Set((0 ..< count).map(Int32.init)))
                    let top = order.prefix(prefix).map { values[Int($0)] }
                    XCTAssertEqual(top, Array(values.sorted(by: >).prefix(prefix)), "\(values) prefix \(prefix)")
                }
            }
        }
    }

    private static func run(_ plan: Plan, _ inputs: [NumpyArray]) throws -> [Data] {
        let session = Session(plan: plan)
        for (i, input) in inputs.enumerated() { try session.copy(input.data, toTensor: plan.graph.inputs[i]) }
        session.invoke()
        return plan.graph.outputs.map { Data(session.bytes(ofTensor: $0)) }
    }
}

/// A value guarded by a lock, for collecting results from concurrent workers.
private final class ThreadSafeBox<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value
    init(_ value: Value) { stored = value }
    var value: Value { lock.withLock { stored } }
    func mutate(_ body: (inout Value) -> Void) { lock.withLock { body(&stored) } }
}
