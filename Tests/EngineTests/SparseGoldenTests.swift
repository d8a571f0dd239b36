import Foundation
import XCTest
import Engine
import TestSupport

/// Sparse constants (schema `sparsity`: CSR and block-sparse, int32/uint16/uint8 index vectors)
/// densified at load, with DENSIFY and sparse FULLY_CONNECTED weights, against LiteRT's
/// reference kernels; and malformed sparse tensors, each rejected with the rule it breaks.
final class SparseGoldenTests: XCTestCase {
    /// The error loading `path` raises, or nil when it loads.
    private func loadError(_ path: String) -> ModelError? {
        do {
            _ = try Graph(contentsOf: path)
            return nil
        } catch {
            return error
        }
    }

    func testSparseGoldens() throws {
        try checkSuite(Fixtures.directory("EngineTests").appendingPathComponent("sparse"))
    }

    func testMalformedSparseTensorsAreTypedErrors() throws {
        let suite = Fixtures.directory("EngineTests").appendingPathComponent("sparse_errors")
        let manifest = try JSONSerialization.jsonObject(with: Data(contentsOf: suite.appendingPathComponent("manifest.json"))) as? [String: Any]
        let cases = manifest?["cases"] as? [[String: Any]] ?? []
        XCTAssertFalse(cases.isEmpty, "no malformed sparse models")
        for entry in cases {
            let name = entry["name"] as? String ?? "?", expect = entry["expect"] as? String ?? "?"
            let path = suite.appendingPathComponent(entry["model"] as? String ?? "?").path
            guard let error = loadError(path) else {
                XCTFail("\(name): loaded, expected an error containing '\(expect)'")
                continue
            }
            if case .invalidTensor = error {} else { XCTFail("\(name): \(error), expected an invalid tensor") }
            XCTAssert(error.description.contains(expect), "\(name): '\(error)' does not mention '\(expect)'")
            print("  ok   \(name): \(error)")
        }
    }
}
