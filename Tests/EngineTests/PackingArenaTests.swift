import XCTest

@testable import Engine

/// The arena a plan's packed buffers come from: zero, line-aligned, disjoint buffers, several
/// chunks where one is full, and buffers from half a chunk up, discardable ones and ones filled
/// with another value left out. (Every golden test runs plans whose buffers it holds.)
final class PackingArenaTests: XCTestCase {
    func testBuffersAreZeroAlignedAndDisjoint() throws {
        #if os(Linux)
        let arena = PackingArena()
        var taken = [(start: Int, end: Int)]()
        // Enough for several chunks, in sizes that leave a chunk's tail unused.
        for (i, byteCount) in ([1, 63, 64, 65, 4095, 4097, 100_000] + Array(repeating: 700_000, count: 12)).enumerated() {
            let p = try XCTUnwrap(arena.allocate(byteCount: byteCount, alignment: i % 2 == 0 ? 8 : 64), "\(byteCount) bytes")
            XCTAssertEqual(Int(bitPattern: p) % 64, 0, "\(byteCount) bytes")
            XCTAssertTrue(arena.contains(p))
            let bytes = UnsafeMutableRawBufferPointer(start: p, count: byteCount)
            XCTAssertTrue(bytes.allSatisfy { $0 == 0 }, "\(byteCount) bytes are not all zero")
            bytes.initializeMemory(as: UInt8.self, repeating: UInt8(truncatingIfNeeded: i + 1))
            taken.append((Int(bitPattern: p), Int(bitPattern: p) + byteCount))
        }
        for (i, a) in taken.enumerated() {
            for b in taken[(i + 1)...] { XCTAssertTrue(a.end <= b.start || b.end <= a.start, "buffers overlap") }
            // No later buffer wrote over this one.
            let bytes = UnsafeRawBufferPointer(start: UnsafeRawPointer(bitPattern: a.start), count: a.end - a.start)
            XCTAssertTrue(bytes.allSatisfy { $0 == UInt8(truncatingIfNeeded: i + 1) }, "buffer \(i)")
        }
        XCTAssertNil(arena.allocate(byteCount: PackingArena.chunkBytes / 2, alignment: 8), "half a chunk maps on its own")
        XCTAssertNil(arena.allocate(byteCount: 64, alignment: 4096), "alignment beyond a line")
        #else
        throw XCTSkip("the arena maps memory on Linux only")
        #endif
    }

    func testPackedBuffersComeFromTheCurrentArena() throws {
        #if os(Linux)
        let arena = PackingArena()
        let (small, large, discardable, filled) = PackingArena.$current.withValue(arena) {
            (PackedBuffer<Int32>(count: 1000, initializedTo: 0),
             PackedBuffer<UInt8>(count: PackingArena.chunkBytes, initializedTo: 0),
             PackedBuffer<Float>(count: 1000, initializedTo: 0, discardable: true),
             PackedBuffer<Float>(count: 1000, initializedTo: 1))
        }
        XCTAssertTrue(arena.contains(small.pointer))
        XCTAssertFalse(arena.contains(large.pointer), "a buffer of a whole chunk maps on its own")
        XCTAssertFalse(arena.contains(discardable.pointer), "a discardable buffer must give its memory back")
        XCTAssertFalse(arena.contains(filled.pointer), "a buffer filled with another value is allocated")
        XCTAssertTrue(small.buffer.allSatisfy { $0 == 0 })
        discardable.discard()
        XCTAssertNil(PackingArena.current, "outside the scope there is no arena")
        #else
        throw XCTSkip("the arena maps memory on Linux only")
        #endif
    }
}
