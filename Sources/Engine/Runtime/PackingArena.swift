#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Zero-filled memory for the packed buffers one plan makes while it prepares its operators
/// (weights, biases, per-channel constants), carved one after another out of a few mappings of
/// `chunkBytes` that ask for transparent huge pages.
///
/// Most of a plan's buffers are small (a layer's weights, its constants); each on its own would
/// be a heap allocation or a mapping zeroed page by page, a fault and a page-table update per
/// 4 KiB (dear in a VM). Out of a huge-page mapping the same bytes come 2 MiB per fault. The
/// chunks are not populated: a page becomes resident when a buffer in it is first written
/// (packing writes every buffer), so the resident memory is what the buffers use, rounded up
/// to whole huge pages (2 MiB per chunk at most) where the system grants them.
///
/// `Plan` makes an arena `current` while it prepares (where `isEnabled`); a `PackedBuffer` made
/// zero-filled then takes its memory from it. The arena lives until the last of its buffers is
/// gone (each holds it), then unmaps its chunks. One plan's preparation uses it, on one thread.
final class PackingArena: @unchecked Sendable {
    /// The arena of the plan being prepared on this thread (or task); nil elsewhere.
    @TaskLocal static var current: PackingArena?

    /// False in a process built with AddressSanitizer (its runtime's `__asan_init` is there): each
    /// buffer then stays an allocation of its own, whose overruns the sanitizer reports, where
    /// inside a chunk it would not see them.
    static let isEnabled: Bool = {
        #if os(Linux)
        guard let process = dlopen(nil, RTLD_NOW) else { return true }
        defer { dlclose(process) }
        return dlsym(process, "__asan_init") == nil
        #else
        return false
        #endif
    }()

    /// Bytes per chunk. Buffers from half of it up get a mapping of their own (`ZeroedMemory`).
    static let chunkBytes = 4 << 20
    private static let lineBytes = 64

    /// The chunks mapped so far, the last one being filled.
    private var chunks = [UnsafeMutableRawBufferPointer]()
    /// Bytes of the last chunk handed out.
    private var used = 0

    /// `byteCount` zero bytes aligned to `alignment` (at most a cache line; every buffer starts on
    /// one), or nil: a buffer too large for a chunk, a system without `mmap`, or a refused
    /// mapping (the caller then allocates on its own).
    func allocate(byteCount: Int, alignment: Int) -> UnsafeMutableRawPointer? {
        #if os(Linux)
        guard byteCount > 0, byteCount < Self.chunkBytes / 2, alignment <= Self.lineBytes else { return nil }
        let start = (used + Self.lineBytes - 1) / Self.lineBytes * Self.lineBytes
        if let last = chunks.last, start + byteCount <= last.count {
            used = start + byteCount
            return last.baseAddress! + start
        }
        guard let chunk = Self.mapChunk() else { return nil }
        chunks.append(chunk)
        used = byteCount
        return chunk.baseAddress!
        #else
        return nil
        #endif
    }

    /// Whether `pointer` lies in one of the chunks.
    func contains(_ pointer: UnsafeRawPointer) -> Bool {
        chunks.contains { chunk in
            UnsafeRawPointer(chunk.baseAddress!) <= pointer && pointer < UnsafeRawPointer(chunk.baseAddress! + chunk.count)
        }
    }

    deinit {
        #if os(Linux)
        for chunk in chunks { munmap(chunk.baseAddress, chunk.count) }
        #endif
    }

    #if os(Linux)
    /// `chunkBytes` of zero bytes from a huge-page boundary, advised for huge pages (advice only:
    /// without THP the pages are small), not populated; nil if the system refuses the mapping.
    private static func mapChunk() -> UnsafeMutableRawBufferPointer? {
        ZeroedMemory.mapForHugePages(chunkBytes, populate: false).map { UnsafeMutableRawBufferPointer(start: $0, count: chunkBytes) }
    }
    #endif
}
