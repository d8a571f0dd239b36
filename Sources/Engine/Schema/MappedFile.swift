#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Read-only bytes of a model: a memory-mapped file (weights are never copied) or an owned copy.
public final class MappedFile: @unchecked Sendable {
    public let bytes: UnsafeRawBufferPointer
    private let unmap: () -> Void

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
    }

    /// Copies `data` into memory owned by this object (16-byte aligned, like a mapping).
    public init(data: Data) {
        let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: max(data.count, 1), alignment: 16)
        data.withUnsafeBytes { storage.copyMemory(from: $0) }
        bytes = UnsafeRawBufferPointer(rebasing: storage[0 ..< data.count])
        unmap = { storage.deallocate() }
    }

    deinit { unmap() }
}
