import XCTest

@testable import Engine

/// Zeroed buffers from the heap (small), from populated mappings (`ZeroedMemory.mappedBytes` and
/// up) and from mappings on 2 MiB boundaries (`hugeBytes` and up): zero, aligned, writable to
/// their last byte, and returned; packed buffers built on them.
final class ZeroedMemoryTests: XCTestCase {
    func testBuffersOfEverySizeAreZeroAlignedAndWritable() {
        let threshold = ZeroedMemory.mappedBytes, huge = ZeroedMemory.hugeBytes
        for byteCount in [1, 63, 4095, 4097, threshold - 1, threshold, threshold + 1, huge - 1, huge, huge + 1, 3 << 20 | 5] {
            for alignment in [1, 16, 64, 4096] {
                let memory = ZeroedMemory(byteCount: byteCount, alignment: alignment)
                XCTAssertEqual(Int(bitPattern: memory.pointer) % alignment, 0, "\(byteCount) bytes at alignment \(alignment)")
                #if os(Linux)
                if byteCount >= huge { XCTAssertEqual(Int(bitPattern: memory.pointer) % huge, 0, "\(byteCount) bytes") }
                #endif
                let bytes = UnsafeMutableRawBufferPointer(start: memory.pointer, count: byteCount)
                XCTAssertTrue(bytes.allSatisfy { $0 == 0 }, "\(byteCount) bytes are not all zero")
                bytes[0] = 1
                bytes[byteCount - 1] = 2
                XCTAssertEqual(bytes[byteCount - 1], 2)
                memory.deallocate()
            }
        }
    }

    func testPackedBuffersStartAsTheirValue() {
        for count in [1, 1000, 1 << 20] {
            let zeros = PackedBuffer<Float>(count: count, initializedTo: 0)
            XCTAssertTrue(zeros.buffer.allSatisfy { $0 == 0 })
            zeros.pointer[count - 1] = 3
            let halves = PackedBuffer<Float>(count: count, initializedTo: 0.5)
            XCTAssertTrue(halves.buffer.allSatisfy { $0 == 0.5 })
            // -0.0 is not all zero bits: filled, not mapped.
            let negativeZeros = PackedBuffer<Float>(count: count, initializedTo: -0.0)
            XCTAssertTrue(negativeZeros.buffer.allSatisfy { $0.sign == .minus && $0 == 0 })
            // Discarding early and then deinitializing returns the memory once.
            zeros.discard()
            halves.discard()
        }
    }
}
