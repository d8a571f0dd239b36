import Foundation
import Tasks
import TestSupport
import XCTest

/// `SHA256`, `RemoteModel` and `ModelManager` against a real HTTP server on 127.0.0.1.
final class RemoteModelTests: XCTestCase {
    // MARK: - SHA-256

    /// FIPS 180-2 appendix B vectors, and the empty message.
    func testSHA256KnownVectors() {
        XCTAssertEqual(SHA256.hash([]).hexString, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        XCTAssertEqual(SHA256.hash(Array("abc".utf8)).hexString, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        XCTAssertEqual(SHA256.hash(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)).hexString,
                       "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        XCTAssertEqual(SHA256.hash([UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)).hexString,
                       "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    /// Fed in pieces of every size around the 64-byte block and the 56-byte padding boundary.
    func testSHA256IncrementalEqualsOneShot() {
        let bytes = (0 ..< 300).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        for length in [0, 1, 55, 56, 57, 63, 64, 65, 119, 120, 128, 300] {
            let message = Array(bytes[0 ..< length])
            let expected = SHA256.hash(message)
            for piece in [1, 7, 63, 64, 65] {
                var h = SHA256()
                var offset = 0
                while offset < length {
                    h.update(message[offset ..< min(offset + piece, length)])
                    offset += piece
                }
                XCTAssertEqual(h.finalize(), expected, "length \(length), pieces of \(piece)")
            }
        }
    }

    // MARK: - Downloads

    /// What the test server serves at /model: a body, an ETag and how to misbehave.
    final class Served: @unchecked Sendable {
        private let lock = NSLock()
        private var _response: LoopbackHTTPServer.Response
        /// When set, `If-None-Match` equal to the ETag gets a 304.
        var honoursRevalidation = true
        init(_ response: LoopbackHTTPServer.Response) { _response = response }
        var response: LoopbackHTTPServer.Response {
            get { lock.lock(); defer { lock.unlock() }; return _response }
            set { lock.lock(); _response = newValue; lock.unlock() }
        }
    }

    func makeServer(_ served: Served) throws -> LoopbackHTTPServer {
        let server = try LoopbackHTTPServer { request in
            guard request.path == "/model.tflite" else { return .init(status: 404, body: Data("not found".utf8)) }
            let response = served.response
            if served.honoursRevalidation, let etag = response.headers["ETag"], request.headers["if-none-match"] == etag {
                return .init(status: 304, headers: ["ETag": etag])
            }
            return response
        }
        // Weak: XCTest never frees its teardown blocks, and a strong capture would keep the
        // server (and every body it serves) for the process, which LeakSanitizer reports.
        addTeardownBlock { [weak server] in server?.stop() }
        return server
    }

    func makeManager() throws -> ModelManager {
        let manager = ModelManager(cacheDirectory: try TaskFixtures.temporaryDirectory(self).appendingPathComponent("cache"))
        manager.timeout = 10
        return manager
    }

    /// Collects the download notifications a manager posts.
    final class Notifications: @unchecked Sendable {
        private let lock = NSLock()
        private var names: [Notification.Name] = []
        private var errors: [RemoteModelError] = []
        private var tokens: [NSObjectProtocol] = []
        init(_ manager: ModelManager) {
            for name in [Notification.Name.swiftLiteModelDownloadDidSucceed, .swiftLiteModelDownloadDidFail] {
                tokens.append(NotificationCenter.default.addObserver(forName: name, object: manager, queue: nil) { [self] note in
                    lock.lock()
                    names.append(note.name)
                    if let e = note.userInfo?[ModelManager.errorKey] as? RemoteModelError { errors.append(e) }
                    lock.unlock()
                })
            }
        }
        deinit { tokens.forEach(NotificationCenter.default.removeObserver) }
        var received: [Notification.Name] { lock.lock(); defer { lock.unlock() }; return names }
        var receivedErrors: [RemoteModelError] { lock.lock(); defer { lock.unlock() }; return errors }
    }

    /// Files in a model's cache folder (a temporary download must never be left behind).
    func cacheFiles(_ manager: ModelManager, _ name: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: manager.cacheDirectory.appendingPathComponent(name).path)) ?? []).sorted()
    }

    func assertFails(_ body: @autoclosure () throws -> Any, file: StaticString = #filePath, line: UInt = #line,
                     _ matches: (RemoteModelError) -> Bool) {
        do {
            _ = try body()
            XCTFail("expected a RemoteModelError", file: file, line: line)
        } catch let error as RemoteModelError {
            XCTAssertTrue(matches(error), "unexpected \(error)", file: file, line: line)
        } catch {
            XCTFail("unexpected \(error)", file: file, line: line)
        }
    }

    /// The real int8 EfficientNet, downloaded, verified, and then used by a classifier through
    /// "remote if downloaded, else local".
    func testDownloadVerifyAndClassifyWithTheCachedModel() throws {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: TaskFixtures.efficientnetInt8))
        let server = try makeServer(Served(.init(status: 200, headers: ["ETag": "\"v1\""], body: bytes)))
        let manager = try makeManager()
        let notifications = Notifications(manager)
        let remote = RemoteModel(name: "efficientnet", url: server.url("/model.tflite"), sha256: SHA256.hash(bytes).hexString.uppercased(), size: bytes.count)
        XCTAssertFalse(manager.isModelDownloaded(remote))
        XCTAssertEqual(manager.modelPath(remote, orLocal: "/local/model.tflite"), "/local/model.tflite")

        let progress = Progress(totalUnitCount: -1)
        XCTAssertEqual(try manager.download(remote, progress: progress), .downloaded)
        XCTAssertEqual(progress.totalUnitCount, Int64(bytes.count))
        XCTAssertEqual(progress.completedUnitCount, Int64(bytes.count))
        XCTAssertTrue(manager.isModelDownloaded(remote))
        XCTAssertEqual(try Data(contentsOf: manager.cachedFileURL(for: remote)), bytes)
        XCTAssertEqual(cacheFiles(manager, "efficientnet"), ["info.json", "model.tflite"])
        XCTAssertEqual(notifications.received, [.swiftLiteModelDownloadDidSucceed])
        XCTAssertEqual(manager.downloadedModels().map(\.name), ["efficientnet"])
        XCTAssertEqual(manager.downloadedModels().first?.etag, "\"v1\"")

        let path = manager.modelPath(remote, orLocal: "/local/model.tflite")
        XCTAssertEqual(path, manager.cachedFileURL(for: remote).path)
        let classifier = try ImageClassifier(options: ImageClassifierOptions(modelPath: path))
        let top = try classifier.classify(image: TaskFixtures.demoCatImage()).classifications[0].categories[0]
        XCTAssertTrue(TaskFixtures.catNames.contains(top.categoryName ?? ""), "\(top)")
        // A model that names a different checksum is not the one in the cache.
        var other = remote
        other.sha256 = String(repeating: "0", count: 64)
        XCTAssertFalse(manager.isModelDownloaded(other))
    }

    /// A server that sends 1 KiB pieces with pauses: the download still completes, with progress.
    func testSlowServer() throws {
        let body = Data((0 ..< 24 * 1024).map { UInt8(truncatingIfNeeded: $0 * 7) })
        let server = try makeServer(Served(.init(status: 200, body: body, chunkSize: 1024, pauseBetweenChunks: 0.01)))
        let manager = try makeManager()
        let progress = Progress(totalUnitCount: -1)
        XCTAssertEqual(try manager.download(RemoteModel(name: "slow", url: server.url("/model.tflite")), progress: progress), .downloaded)
        XCTAssertEqual(progress.completedUnitCount, Int64(body.count))
        XCTAssertEqual(progress.fractionCompleted, 1)
        XCTAssertEqual(try Data(contentsOf: manager.cachedFileURL(for: RemoteModel(name: "slow", url: server.url("/model.tflite")))), body)
    }

    /// A server that stalls for longer than the manager's timeout: a network error, nothing cached.
    func testStalledServerTimesOut() throws {
        let body = Data(count: 2048)
        let server = try makeServer(Served(.init(status: 200, body: body, chunkSize: 1024, pauseBetweenChunks: 1.5)))
        let manager = try makeManager()
        manager.timeout = 0.5
        let remote = RemoteModel(name: "stalled", url: server.url("/model.tflite"))
        assertFails(try manager.download(remote)) { if case .network(let m) = $0 { return m.contains("timed out") } else { return false } }
        XCTAssertFalse(manager.isModelDownloaded(remote))
        XCTAssertEqual(cacheFiles(manager, "stalled"), [])
    }

    /// Content-Length larger than the body: truncated, and the partial file is gone.
    func testTruncatedResponse() throws {
        let body = Data(count: 10_000)
        let server = try makeServer(Served(.init(status: 200, body: body, contentLength: 20_000)))
        let manager = try makeManager()
        let notifications = Notifications(manager)
        let remote = RemoteModel(name: "truncated", url: server.url("/model.tflite"))
        assertFails(try manager.download(remote)) { $0 == .truncated(expected: 20_000, received: 10_000) }
        XCTAssertFalse(manager.isModelDownloaded(remote))
        XCTAssertEqual(cacheFiles(manager, "truncated"), [])
        XCTAssertEqual(notifications.received, [.swiftLiteModelDownloadDidFail])
        XCTAssertEqual(notifications.receivedErrors, [.truncated(expected: 20_000, received: 10_000)])
    }

    /// A corrupted newer version (SHA-256 mismatch) is refused and the good cached copy stays.
    func testCorruptedDownloadKeepsTheCachedCopy() throws {
        let good = Data("good model bytes".utf8)
        let served = Served(.init(status: 200, headers: ["ETag": "\"1\""], body: good))
        let server = try makeServer(served)
        let manager = try makeManager()
        let remote = RemoteModel(name: "checked", url: server.url("/model.tflite"), sha256: SHA256.hash(good).hexString)
        XCTAssertEqual(try manager.download(remote), .downloaded)

        var corrupted = good
        corrupted[0] ^= 0xFF
        served.response = .init(status: 200, headers: ["ETag": "\"2\""], body: corrupted)
        assertFails(try manager.download(remote)) {
            $0 == .checksumMismatch(expected: SHA256.hash(good).hexString, actual: SHA256.hash(corrupted).hexString)
        }
        XCTAssertTrue(manager.isModelDownloaded(remote))
        XCTAssertEqual(try Data(contentsOf: manager.cachedFileURL(for: remote)), good)
        XCTAssertEqual(cacheFiles(manager, "checked"), ["info.json", "model.tflite"])

        // The wrong size is refused too.
        let sized = RemoteModel(name: "sized", url: server.url("/model.tflite"), size: 3)
        assertFails(try manager.download(sized)) { $0 == .sizeMismatch(expected: 3, actual: corrupted.count) }
    }

    func testNotFound() throws {
        let server = try makeServer(Served(.init(status: 200)))
        let manager = try makeManager()
        let notifications = Notifications(manager)
        let url = server.url("/missing.tflite")
        assertFails(try manager.download(RemoteModel(name: "missing", url: url))) { $0 == .httpStatus(404, url: url.absoluteString) }
        XCTAssertEqual(notifications.receivedErrors, [.httpStatus(404, url: url.absoluteString)])
        XCTAssertEqual(manager.downloadedModels(), [])
    }

    /// Revalidation: the same ETag gets a 304 and keeps the file; a changed ETag brings the new version.
    func testRevalidationWithETagAndLastModified() throws {
        let v1 = Data("version 1".utf8), v2 = Data("version two".utf8)
        let served = Served(.init(status: 200, headers: ["ETag": "\"a\"", "Last-Modified": "Tue, 01 Dec 2026 10:00:00 GMT"], body: v1))
        let server = try makeServer(served)
        let manager = try makeManager()
        let remote = RemoteModel(name: "versioned", url: server.url("/model.tflite"))
        XCTAssertEqual(try manager.download(remote), .downloaded)
        XCTAssertNil(server.requests.last?.headers["if-none-match"])

        XCTAssertEqual(try manager.download(remote), .notModified)
        XCTAssertEqual(server.requests.last?.headers["if-none-match"], "\"a\"")
        XCTAssertEqual(server.requests.last?.headers["if-modified-since"], "Tue, 01 Dec 2026 10:00:00 GMT")
        XCTAssertEqual(try Data(contentsOf: manager.cachedFileURL(for: remote)), v1)

        served.response = .init(status: 200, headers: ["ETag": "\"b\""], body: v2)
        XCTAssertEqual(try manager.download(remote), .downloaded)
        XCTAssertEqual(try Data(contentsOf: manager.cachedFileURL(for: remote)), v2)
        XCTAssertEqual(manager.downloadedModels().first?.etag, "\"b\"")
        XCTAssertEqual(manager.downloadedModels().first?.sha256, SHA256.hash(v2).hexString)
    }

    /// The asynchronous form returns a Progress at once and completes on another thread.
    func testAsynchronousDownload() throws {
        let body = Data("async".utf8)
        let server = try makeServer(Served(.init(status: 200, body: body)))
        let manager = try makeManager()
        let done = expectation(description: "completion")
        let remote = RemoteModel(name: "async", url: server.url("/model.tflite"))
        let progress = manager.downloadInBackground(remote) { result in
            XCTAssertEqual(try? result.get(), .downloaded)
            done.fulfill()
        }
        wait(for: [done], timeout: 30)
        XCTAssertEqual(progress.completedUnitCount, Int64(body.count))
        XCTAssertTrue(manager.isModelDownloaded(remote))
    }

    func testNamesAndURLsAreChecked() throws {
        let manager = try makeManager()
        for name in ["", "../escape", "a/b", ".hidden", String(repeating: "x", count: 129)] {
            assertFails(try manager.download(RemoteModel(name: name, url: URL(string: "http://127.0.0.1:9/m")!))) { $0 == .invalidName(name) }
        }
        assertFails(try manager.download(RemoteModel(name: "file", url: URL(fileURLWithPath: "/etc/hostname")))) {
            if case .unsupportedURL = $0 { return true } else { return false }
        }
        XCTAssertTrue(RemoteModel.isValidName("efficientnet_lite0-v2.1"))
    }
}
