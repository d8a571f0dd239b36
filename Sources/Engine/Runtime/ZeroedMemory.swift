#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Zero-filled memory for the large buffers a plan or session keeps (packed weights, the
/// activation arena, scratch). From `mappedBytes` up, on Linux, the pages come from one
/// `mmap(MAP_POPULATE)`: the kernel hands them over zeroed and already mapped, in one call,
/// where allocating and then zeroing them takes one page fault per 4 KiB page on the first
/// write. A mapping of a huge page or more (`mappedLength`, which rounds up to whole huge pages
/// from 1.5 MiB) starts on a 2 MiB boundary and asks for transparent huge pages
/// (`MADV_HUGEPAGE`, honoured where the system's THP setting is `madvise` or `always`) before
/// it is populated (`MADV_POPULATE_WRITE`): one page-table entry per 2 MiB instead of 512.
/// Smaller buffers, other systems, and a failed mapping take the heap.
struct ZeroedMemory {
    let pointer: UnsafeMutableRawPointer
    let byteCount: Int
    /// The pages `deallocate` unmaps (`pointer` and `byteCount` rounded up to whole pages), nil
    /// for heap memory.
    private let mapping: UnsafeMutableRawBufferPointer?

    /// Buffers from this size up are mapped.
    static let mappedBytes = 256 * 1024
    /// One huge page: buffers from this size up are mapped for huge pages, on a boundary of it.
    static let hugeBytes = 2 << 20
    private static let pageBytes = 4096

    /// The bytes mapped for a buffer of `byteCount`: whole pages, or whole huge pages where that
    /// adds at most a third (1.5 MiB up to 2 MiB, 3 up to 4, ...), whose one fault per 2 MiB
    /// costs less than a 4 KiB page's fault for each of the 512 pages it replaces.
    static func mappedLength(_ byteCount: Int) -> Int {
        let huge = (byteCount + hugeBytes - 1) / hugeBytes * hugeBytes
        if huge - byteCount <= byteCount / 3 { return huge }
        return (byteCount + pageBytes - 1) / pageBytes * pageBytes
    }

    /// At least `byteCount` (≥ 1) zero bytes aligned to `alignment` (at most a page).
    init(byteCount: Int, alignment: Int) {
        precondition(byteCount > 0 && alignment > 0 && alignment <= 4096, "a zeroed buffer of \(byteCount) bytes at alignment \(alignment)")
        self.byteCount = byteCount
        #if os(Linux)
        let length = Self.mappedLength(byteCount)
        if length >= Self.hugeBytes, let base = Self.mapForHugePages(length) {
            pointer = base
            mapping = UnsafeMutableRawBufferPointer(start: base, count: length)
            return
        }
        if byteCount >= Self.mappedBytes,
           let base = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0),
           base != MAP_FAILED {
            pointer = base
            mapping = UnsafeMutableRawBufferPointer(start: base, count: length)
            return
        }
        #endif
        pointer = .allocate(byteCount: byteCount, alignment: alignment)
        pointer.initializeMemory(as: UInt8.self, repeating: 0, count: byteCount)
        mapping = nil
    }

    /// Returns the memory; it must not be used afterwards.
    func deallocate() {
        #if os(Linux)
        if let mapping {
            munmap(mapping.baseAddress, mapping.count)
            return
        }
        #endif
        pointer.deallocate()
    }

    #if os(Linux)
    /// `length` (whole pages) zeroed bytes from a 2 MiB boundary, advised for huge pages: a
    /// mapping one huge page longer, its ends cut off. Populated unless `populate` is false
    /// (`PackingArena`'s chunks, whose pages become resident as buffers are written). Nil if the
    /// system refuses.
    static func mapForHugePages(_ length: Int, populate: Bool = true) -> UnsafeMutableRawPointer? {
        guard let raw = mmap(nil, length + hugeBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
              raw != MAP_FAILED else { return nil }
        let head = (hugeBytes - Int(bitPattern: raw) % hugeBytes) % hugeBytes
        let base = raw + head
        if head > 0 { munmap(raw, head) }
        munmap(base + length, hugeBytes - head)
        // Advice only: without THP the pages are small, and populated all the same.
        _ = madvise(base, length, MADV_HUGEPAGE)
        if populate, madvise(base, length, MADV_POPULATE_WRITE) != 0 {
            // Kernels before 5.14: one write per page maps it.
            for offset in stride(from: 0, to: length, by: pageBytes) {
                base.storeBytes(of: 0, toByteOffset: offset, as: UInt8.self)
            }
        }
        return base
    }
    #endif
}
