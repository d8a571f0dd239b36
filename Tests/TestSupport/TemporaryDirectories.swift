import Foundation
import XCTest

/// Temporary directories that are removed when the test that made them ends.
///
/// The list lives here, not in the test case: swift-corelibs-xctest never frees its `XCTestCase`
/// objects (each sits in a cycle with its run), so whatever a teardown block captures is reported
/// by LeakSanitizer under `make sanitize`. The teardown block registered here captures nothing.
public enum TemporaryDirectories {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var pending: [URL] = []

    /// A fresh directory named `prefix-<UUID>` in the system's temporary folder, removed at the end
    /// of `test`.
    public static func make(for test: XCTestCase, prefix: String) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        lock.lock()
        pending.append(url)
        lock.unlock()
        test.addTeardownBlock(removeAll)
        return url
    }

    /// Removes every directory made so far.
    @Sendable public static func removeAll() {
        lock.lock()
        let urls = pending
        pending = []
        lock.unlock()
        for url in urls { try? FileManager.default.removeItem(at: url) }
    }
}
