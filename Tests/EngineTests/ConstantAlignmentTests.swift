import Foundation
import XCTest
@testable import Engine
import TestSupport

/// Constants are read in place when the file's address suits their element size, and copied
/// (once per buffer) when it does not: the TFLite converter aligns buffers to 4 bytes, not 16.
final class ConstantAlignmentTests: XCTestCase {
    func testAlignedBytesAreReadInPlaceAndMisalignedOnesCopiedOnce() throws {
        let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: 64, alignment: 16)
        defer { storage.deallocate() }
        for i in 0 ..< 64 { storage[i] = UInt8(i) }
        let copies = AlignedCopies()
        // Address ≡ 4 (mod 16): in place for 4-byte elements, a copy for 8-byte ones.
        let at4 = UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(storage)[4 ..< 36])
        XCTAssertEqual(copies.aligned(at4, to: 4).bytes.baseAddress, at4.baseAddress)
        let wide = copies.aligned(at4, to: 8)
        XCTAssertNotEqual(wide.bytes.baseAddress, at4.baseAddress)
        XCTAssertEqual(Int(bitPattern: wide.bytes.baseAddress) % 16, 0)
        XCTAssertEqual([UInt8](wide.bytes), Array(4 ..< 36))
        XCTAssertEqual(copies.aligned(at4, to: 8).bytes.baseAddress, wide.bytes.baseAddress, "one copy per buffer")
        // Bytes need no alignment.
        let at1 = UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(storage)[1 ..< 9])
        XCTAssertEqual(copies.aligned(at1, to: 1).bytes.baseAddress, at1.baseAddress)
    }

    /// A shared model whose float weights the converter stored 4- but not 16-byte aligned: every
    /// constant's address is a multiple of its element size, and most are read from the mapping.
    func testModelConstantsHaveTheirElementAlignment() throws {
        let path = try Fixtures.shared("models/perf/mobilenet_v2_1.0_224_f32.tflite").path
        let graph = try Graph(contentsOf: path)
        var notSixteen = 0
        for t in graph.tensors {
            guard let c = t.constantData, c.bytes.count > 0, let size = t.dataType.byteSize else { continue }
            XCTAssertEqual(Int(bitPattern: c.bytes.baseAddress) % size, 0, "tensor \(t.index) '\(t.name)'")
            if Int(bitPattern: c.bytes.baseAddress) % 16 != 0 { notSixteen += 1 }
        }
        XCTAssertGreaterThan(notSixteen, 0, "the model's weights are read in place, not copied to 16-byte alignment")
    }
}
