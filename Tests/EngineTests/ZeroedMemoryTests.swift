import XCTest

@testable import Engine

/// Zeroed buffers from the heap (small), from populated mappings (`ZeroedMemory.mappedBytes` and
/// up) and from mappings on 2 MiB boundaries (`hugeBytes` and up, or rounded up to it): zero,
/// aligned, writable to their last byte, and returned; packed buffers built on them.
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

    /// Whole huge pages where they add at most a third, else whole pages.
    func testMappedLengthRoundsUpToHugePagesWhereThatAddsLittle() {
        let page = 4096, huge = ZeroedMemory.hugeBytes
        XCTAssertEqual(ZeroedMemory.mappedLength(1), page)
        XCTAssertEqual(ZeroedMemory.mappedLength(1 << 20), 1 << 20)
        XCTAssertEqual(ZeroedMemory.mappedLength(huge * 3 / 4), huge)
        XCTAssertEqual(ZeroedMemory.mappedLength(huge * 3 / 4 - page), huge * 3 / 4 - page)
        XCTAssertEqual(ZeroedMemory.mappedLength(huge), huge)
        XCTAssertEqual(ZeroedMemory.mappedLength(huge + 1), huge + page, "a second huge page would add almost all of one")
        XCTAssertEqual(ZeroedMemory.mappedLength(huge * 3 / 2 + 1), 2 * huge)
        for byteCount in [1, 100, page + 1, huge / 2, huge * 3 / 4, huge + 1, 5 * huge + 7] {
            XCTAssertGreaterThanOrEqual(ZeroedMemory.mappedLength(byteCount), byteCount)
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
