#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Read-only bytes of a model: a memory-mapped file (weights are never copied) or an owned copy.
public final class MappedFile: @unchecked Sendable {
    /// The model's bytes; valid as long as this object lives.
    public let bytes: UnsafeRawBufferPointer
    private let unmap: () -> Void
    /// True for a read-only file mapping (whose clean pages can be dropped and read again).
    private let isFileMapping: Bool

    /// Maps the file at `path` read-only.
    /// - Throws: `ModelError.unreadable` naming the system error.
    public init(path: String) throws(ModelError) {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw .unreadable(path: path, reason: String(cString: strerror(errno))) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .unreadable(path: path, reason: String(cString: strerror(errno))) }
        guard (info.st_mode & S_IFMT) == S_IFREG else { throw .unreadable(path: path, reason: "not a regular file") }
        let size = Int(info.st_size)
        guard size > 0 else { throw .unreadable(path: path, reason: "file is empty") }
        guard let base = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0), base != MAP_FAILED else {
            throw .unreadable(path: path, reason: String(cString: strerror(errno)))
        }
        bytes = UnsafeRawBufferPointer(start: base, count: size)
        unmap = { munmap(base, size) }
        isFileMapping = true
    }

    /// Copies `data` into memory owned by this object (16-byte aligned, like a mapping).
    public init(data: Data) {
        let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: max(data.count, 1), alignment: 16)
        data.withUnsafeBytes { storage.copyMemory(from: $0) }
        bytes = UnsafeRawBufferPointer(rebasing: storage[0 ..< data.count])
        unmap = { storage.deallocate() }
        isFileMapping = false
    }

    /// Drops the resident pages wholly inside `range` (a part of `bytes`) from this process's
    /// memory: `madvise(MADV_DONTNEED)` on a private read-only file mapping, after which a read
    /// gets the file's bytes again from the page cache. Returns false (and does nothing) for an
    /// owned copy or a range outside the mapping.
    @discardableResult
    public func releasePages(of range: UnsafeRawBufferPointer) -> Bool {
        guard isFileMapping, let start = range.baseAddress, let base = bytes.baseAddress,
              start >= base, start + range.count <= base + bytes.count else { return false }
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let first = (Int(bitPattern: start) + page - 1) / page * page
        let end = (Int(bitPattern: start) + range.count) / page * page
        guard end > first, let address = UnsafeMutableRawPointer(bitPattern: first) else { return true }
        return madvise(address, end - first, MADV_DONTNEED) == 0
    }

    deinit { unmap() }
}
