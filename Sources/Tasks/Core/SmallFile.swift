import Foundation

/// Reads the small text files tasks take by path (label files, AutoML manifests).
enum SmallFile {
    enum Failure: Error {
        case unreadable
        case tooLarge
    }

    /// The contents of the file at `path`, refused beyond `limit` bytes.
    ///
    /// Read through `FileHandle`, at most `limit + 1` bytes: `FileManager.contents(atPath:)` and
    /// `Data(contentsOf:)` leak a 4 KiB buffer for an empty file on Linux (LeakSanitizer, found by
    /// the AutoML fuzzer), and read a path like `/dev/zero` until memory runs out.
    static func read(_ path: String, limit: Int) throws(Failure) -> Data {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw .unreadable }
        defer { try? handle.close() }
        let data: Data?
        do { data = try handle.read(upToCount: limit + 1) } catch { throw .unreadable }
        guard let data else { return Data() }  // nil at end of file: the file is empty
        guard data.count <= limit else { throw .tooLarge }
        return data
    }
}
