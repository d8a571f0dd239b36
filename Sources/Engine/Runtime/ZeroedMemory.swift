#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Zero-filled memory for the large buffers a plan or session keeps (packed weights, the
/// activation arena, scratch). From `mappedBytes` up, on Linux, the pages come from one
/// `mmap(MAP_POPULATE)`: the kernel hands them over zeroed and already mapped, in one call,
/// where allocating and then zeroing them takes one page fault per 4 KiB page on the first
/// write. Smaller buffers, other systems, and a failed mapping take the heap.
struct ZeroedMemory {
    let pointer: UnsafeMutableRawPointer
    let byteCount: Int
    /// The memory is a mapping of its own (unmapped by `deallocate`), not heap memory.
    private let isMapped: Bool

    /// Buffers from this size up are mapped.
    static let mappedBytes = 256 * 1024

    /// At least `byteCount` (≥ 1) zero bytes aligned to `alignment` (at most a page).
    init(byteCount: Int, alignment: Int) {
        precondition(byteCount > 0 && alignment > 0 && alignment <= 4096, "a zeroed buffer of \(byteCount) bytes at alignment \(alignment)")
        self.byteCount = byteCount
        #if os(Linux)
        if byteCount >= Self.mappedBytes,
           let base = mmap(nil, byteCount, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0),
           base != MAP_FAILED {
            pointer = base
            isMapped = true
            return
        }
        #endif
        pointer = .allocate(byteCount: byteCount, alignment: alignment)
        pointer.initializeMemory(as: UInt8.self, repeating: 0, count: byteCount)
        isMapped = false
    }

    /// Returns the memory; it must not be used afterwards.
    func deallocate() {
        #if os(Linux)
        if isMapped {
            munmap(pointer, byteCount)
            return
        }
        #endif
        pointer.deallocate()
    }
}
