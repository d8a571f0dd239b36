import Foundation
import XCTest
import Tasks
import TestSupport

/// Hosted AutoML Vision Edge models without Firebase: the AutoML guide's hosted-model snippets as
/// written, and the download rules (ETag revalidation, a new version replaces the old, a failed
/// or partial download never does) against a real HTTP server on 127.0.0.1.
final class HostedAutoMLTests: XCTestCase {
    static let autoMLFolder = TaskFixtures.models.appendingPathComponent("dog_breeds_automl")
    private var savedCache: URL!
    private var savedHost: URL?
    private var savedTimeout: TimeInterval = 60

    override func setUpWithError() throws {
        guard FileManager.default.fileExists(atPath: Self.autoMLFolder.appendingPathComponent("manifest.json").path) else {
            throw XCTSkip("no Models/dog_breeds_automl")
        }
        let manager = ModelManager.modelManager()
        savedCache = manager.cacheDirectory
        savedHost = manager.modelHostBaseURL
        savedTimeout = manager.timeout
        manager.cacheDirectory = try TaskFixtures.temporaryDirectory(self)
        manager.timeout = 10
    }

    override func tearDown() {
        let manager = ModelManager.modelManager()
        if let savedCache { manager.cacheDirectory = savedCache }
        manager.modelHostBaseURL = savedHost
        manager.timeout = savedTimeout
    }

    /// The local export's labels, and the hosted copy's: the same model with its labels renamed,
    /// so a result shows which of the two produced it.
    static func localNames() throws -> [String] {
        try String(contentsOf: autoMLFolder.appendingPathComponent("dict.txt"), encoding: .utf8).split(separator: "\n").map(String.init)
    }

    /// Serves the dog-breed export as hosted model `name` with `dict.txt` renamed `prefix N`.
    func host(_ name: String = "your_remote_model", prefix: String = "hosted breed") throws -> (ModelHost, LoopbackHTTPServer) {
        let names = try Self.localNames().indices.map { "\(prefix) \($0)" }
        let host = ModelHost(name: name, files: [
            "manifest.json": try Data(contentsOf: Self.autoMLFolder.appendingPathComponent("manifest.json")),
            "dict.txt": Data((names.joined(separator: "\n") + "\n").utf8),
            "model.tflite": try Data(contentsOf: Self.autoMLFolder.appendingPathComponent("model.tflite")),
        ])
        let server = try LoopbackHTTPServer(lifetime: 120) { host.respond($0) }
        ModelManager.modelManager().modelHostBaseURL = server.url("/models")
        return (host, server)
    }

    func labels(_ options: AutoMLImageLabelerOptions) throws -> [ImageLabel] {
        try ImageLabeler.imageLabeler(options: options).results(in: VisionImage(image: TaskFixtures.demoCatImage()))
    }

    // MARK: - The guide, as written

    func testGuideHostedModelWithLocalFallback() throws {
        let (_, server) = try host()
        defer { server.stop() }
        let manifestPath = Self.autoMLFolder.appendingPathComponent("manifest.json").path
        let localModel = AutoMLImageLabelerLocalModel(manifestPath: manifestPath)
        let observer = DownloadObserver(succeeded: expectation(description: "download succeeded"))
        observer.observe()
        defer { observer.stop() }

        let remoteModel = AutoMLImageLabelerRemoteModel(
            name: "your_remote_model"  // The name you assigned in
                                       // the Firebase console.
        )

        // Nothing downloaded yet: the guide's choice takes the bundled model.
        XCTAssertEqual(try chooseAndLabel(remoteModel: remoteModel, localModel: localModel).first?.text,
                       try Self.localNames()[labels(AutoMLImageLabelerOptions(localModel: localModel)).first!.index])

        let downloadConditions = ModelDownloadConditions(
          allowsCellularAccess: true,
          allowsBackgroundDownloading: true
        )

        let downloadProgress = ModelManager.modelManager().download(
          remoteModel,
          conditions: downloadConditions
        )

        wait(for: [observer.succeeded], timeout: 120)
        XCTAssertEqual(observer.names.value, ["your_remote_model"])
        XCTAssertEqual(downloadProgress.completedUnitCount, 3)
        XCTAssertTrue(ModelManager.modelManager().isModelDownloaded(remoteModel))

        // Downloaded: the guide's choice takes the hosted model, whose labels are the local
        // model's (same network) under the hosted dict.txt's names.
        let hosted = try chooseAndLabel(remoteModel: remoteModel, localModel: localModel)
        let local = try labels(AutoMLImageLabelerOptions(localModel: localModel))
        XCTAssertEqual(hosted.map(\.index), local.map(\.index))
        XCTAssertEqual(hosted.map(\.confidence), local.map(\.confidence))
        XCTAssertEqual(hosted.map(\.text), local.map { "hosted breed \($0.index)" })
    }

    /// The guide's "remote if downloaded, else local", as written.
    func chooseAndLabel(remoteModel: AutoMLImageLabelerRemoteModel, localModel: AutoMLImageLabelerLocalModel) throws -> [ImageLabel] {
        var options: AutoMLImageLabelerOptions!
        if (ModelManager.modelManager().isModelDownloaded(remoteModel)) {
          options = AutoMLImageLabelerOptions(remoteModel: remoteModel)
        } else {
          options = AutoMLImageLabelerOptions(localModel: localModel)
        }
        options.confidenceThreshold = NSNumber(value: 0.0)  // Evaluate your model in the Firebase console
                                                            // to determine an appropriate value.
        let imageLabeler = ImageLabeler.imageLabeler(options: options)
        return try imageLabeler.results(in: VisionImage(image: TaskFixtures.demoCatImage()))
    }

    // MARK: - Versions

    func testETagRevalidationAndNewerVersion() throws {
        let (host, server) = try host()
        defer { server.stop() }
        let manager = ModelManager.modelManager()
        let remote = AutoMLImageLabelerRemoteModel(name: "your_remote_model")
        XCTAssertEqual(try manager.downloadAndWait(remote), .downloaded)
        XCTAssertEqual(try manager.downloadAndWait(remote), .notModified)
        // The second round sent each file's ETag back.
        let revalidations = server.requests.suffix(3)
        XCTAssertEqual(revalidations.map { $0.headers["if-none-match"] }, ["\"manifest.json-1\"", "\"dict.txt-1\"", "\"model.tflite-1\""])

        // A newer dict.txt on the host: downloaded again, and the labeler uses it.
        let names = try Self.localNames().indices.map { "version two \($0)" }
        host.replace("dict.txt", with: Data((names.joined(separator: "\n") + "\n").utf8))
        XCTAssertEqual(try manager.downloadAndWait(remote), .downloaded)
        let texts = try labels(AutoMLImageLabelerOptions(remoteModel: remote)).map(\.text)
        XCTAssertFalse(texts.isEmpty)
        XCTAssertTrue(texts.allSatisfy { $0.hasPrefix("version two ") }, "\(texts)")
        // One version folder is kept (the old one is removed once the new one is current).
        let folder = manager.cacheDirectory.appendingPathComponent("your_remote_model")
        let entries = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        XCTAssertEqual(entries.filter { $0.hasPrefix("v-") }.count, 1, "\(entries)")
    }

    /// Truncated, corrupted, missing, oversized and malformed versions each fail with a typed error
    /// and a `.mlkitModelDownloadDidFail` notification, and the good version stays current.
    func testFailedDownloadsNeverReplaceAGoodVersion() throws {
        let (host, server) = try host()
        defer { server.stop() }
        let manager = ModelManager.modelManager()
        let remote = AutoMLImageLabelerRemoteModel(name: "your_remote_model")
        XCTAssertEqual(try manager.downloadAndWait(remote), .downloaded)
        let good = try labels(AutoMLImageLabelerOptions(remoteModel: remote))
        let model = try Data(contentsOf: Self.autoMLFolder.appendingPathComponent("model.tflite"))
        let failures = Box<[String]>([])
        let token = NotificationCenter.default.addObserver(forName: .mlkitModelDownloadDidFail, object: nil, queue: nil) { note in
            let error = note.userInfo?[ModelDownloadUserInfoKey.error.rawValue] as? RemoteModelError
            failures.mutate { $0.append(error.map { "\($0)" } ?? "no error") }
        }
        defer { NotificationCenter.default.removeObserver(token) }

        let cases: [(String, (inout LoopbackHTTPServer.Response) -> Void, (RemoteModelError) -> Bool)] = [
            ("truncated", { $0.contentLength = $0.body.count; $0.body = $0.body.prefix(1000) },
             { if case .truncated = $0 { true } else if case .network = $0 { true } else { false } }),
            ("corrupted", { $0.body = Data(repeating: 0x5A, count: 4096) }, { if case .invalidModel = $0 { true } else { false } }),
            ("404", { $0 = .init(status: 404) }, { if case .httpStatus(404, _) = $0 { true } else { false } }),
            ("huge Content-Length", { $0.contentLength = 1 << 50; $0.body = Data(repeating: 1, count: 10) },
             { if case .tooLarge = $0 { true } else { false } }),
        ]
        for (name, change, matches) in cases {
            host.misbehave("model.tflite", version: name, change)
            XCTAssertThrowsError(try manager.downloadAndWait(remote), name) { error in
                XCTAssertTrue(matches(error as! RemoteModelError), "\(name): \(error)")
            }
            XCTAssertEqual(try labels(AutoMLImageLabelerOptions(remoteModel: remote)), good, name)
        }
        host.replace("model.tflite", with: model)
        host.replace("manifest.json", with: Data("{not json".utf8))
        XCTAssertThrowsError(try manager.downloadAndWait(remote)) { error in
            guard case .invalidModel = error as! RemoteModelError else { return XCTFail("\(error)") }
        }
        XCTAssertEqual(try labels(AutoMLImageLabelerOptions(remoteModel: remote)), good)
        XCTAssertEqual(failures.value.count, cases.count + 1, "\(failures.value)")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: manager.cacheDirectory.appendingPathComponent("your_remote_model").path)
            .filter { $0.hasPrefix(".staging") || $0.hasPrefix(".current-") }
        XCTAssertEqual(leftovers, [])
    }

    /// A host that is down: the download fails (quickly, a refused connection), nothing counts as
    /// downloaded, and the guide's choice takes the bundled model.
    func testHostDownFallsBackToLocal() throws {
        let (_, server) = try host()
        server.stop()
        let remote = AutoMLImageLabelerRemoteModel(name: "your_remote_model")
        XCTAssertThrowsError(try ModelManager.modelManager().downloadAndWait(remote))
        XCTAssertFalse(ModelManager.modelManager().isModelDownloaded(remote))
        let localModel = AutoMLImageLabelerLocalModel(manifestPath: Self.autoMLFolder.appendingPathComponent("manifest.json").path)
        let chosen = try chooseAndLabel(remoteModel: remote, localModel: localModel)
        XCTAssertEqual(chosen, try labels(AutoMLImageLabelerOptions(localModel: localModel)))
        // A labeler made from the remote model alone reports that it is not downloaded.
        XCTAssertThrowsError(try labels(AutoMLImageLabelerOptions(remoteModel: remote)))
    }

    /// A first download that fails leaves no folder in the cache (hosted names and URL models).
    func testFailedFirstDownloadLeavesNoCacheFolder() throws {
        let (host, server) = try host()
        defer { server.stop() }
        host.misbehave("model.tflite", version: "404") { $0 = .init(status: 404) }
        let manager = ModelManager.modelManager()
        XCTAssertThrowsError(try manager.downloadAndWait(AutoMLImageLabelerRemoteModel(name: "your_remote_model")))
        XCTAssertThrowsError(try manager.download(RemoteModel(name: "plain", url: server.url("/models/missing.tflite"))))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: manager.cacheDirectory.path), [])
    }

    /// A server that stalls longer than `timeout` fails the download instead of hanging it.
    func testStalledServerTimesOut() throws {
        let (host, server) = try host()
        defer { server.stop() }
        ModelManager.modelManager().timeout = 1
        host.misbehave("dict.txt", version: "slow") { $0.chunkSize = 8; $0.pauseBetweenChunks = 3 }
        let started = Date()
        XCTAssertThrowsError(try ModelManager.modelManager().downloadAndWait(AutoMLImageLabelerRemoteModel(name: "your_remote_model")))
        XCTAssertLessThan(Date().timeIntervalSince(started), 30)
        XCTAssertFalse(ModelManager.modelManager().isModelDownloaded(AutoMLImageLabelerRemoteModel(name: "your_remote_model")))
    }

    /// Names that are not a single folder name are refused before any request.
    func testInvalidNamesAndNoHost() throws {
        let manager = ModelManager.modelManager()
        manager.modelHostBaseURL = nil
        XCTAssertThrowsError(try manager.downloadAndWait(AutoMLImageLabelerRemoteModel(name: "dogs"))) {
            XCTAssertEqual($0 as? RemoteModelError, .noModelHost)
        }
        manager.modelHostBaseURL = URL(string: "http://127.0.0.1:9/models")
        for name in ["../etc", "a/b", ".hidden", ""] {
            XCTAssertThrowsError(try manager.downloadAndWait(AutoMLImageLabelerRemoteModel(name: name))) {
                guard case .invalidName = $0 as? RemoteModelError else { return XCTFail("\(name): \($0)") }
            }
        }
    }
}

/// The guide's notification observers, as written, in an object the blocks may capture weakly.
final class DownloadObserver: @unchecked Sendable {
    let succeeded: XCTestExpectation
    let names = Box<[String]>([])
    private var tokens: [NSObjectProtocol] = []
    init(succeeded: XCTestExpectation) { self.succeeded = succeeded }

    func modelArrived(_ name: String) {
        names.mutate { $0.append(name) }
        succeeded.fulfill()
    }

    func observe() {
        tokens.append(
        NotificationCenter.default.addObserver(
            forName: .mlkitModelDownloadDidSucceed,
            object: nil,
            queue: nil
        ) { [weak self] notification in
            guard let strongSelf = self,
                let userInfo = notification.userInfo,
                let model = userInfo[ModelDownloadUserInfoKey.remoteModel.rawValue]
                    as? RemoteModel,
                model.name == "your_remote_model"
                else { return }
            // The model was downloaded and is available on the device
            strongSelf.modelArrived(model.name)
        })

        tokens.append(
        NotificationCenter.default.addObserver(
            forName: .mlkitModelDownloadDidFail,
            object: nil,
            queue: nil
        ) { [weak self] notification in
            guard let strongSelf = self,
                let userInfo = notification.userInfo,
                let model = userInfo[ModelDownloadUserInfoKey.remoteModel.rawValue]
                    as? RemoteModel
                else { return }
            let error = userInfo[ModelDownloadUserInfoKey.error.rawValue]
            // ...
            XCTFail("download of \(model.name) failed: \(String(describing: error)) (\(strongSelf))")
        })
    }

    func stop() { tokens.forEach(NotificationCenter.default.removeObserver) }
}

/// An HTTP model host: `/models/<name>/<file>` with an ETag per file (`"<file>-<version>"`),
/// answering `If-None-Match` with 304, and able to misbehave per file.
final class ModelHost: @unchecked Sendable {
    private let lock = NSLock()
    private let name: String
    private var files: [String: (body: Data, version: Int)]
    private var changes: [String: (inout LoopbackHTTPServer.Response) -> Void] = [:]

    init(name: String, files: [String: Data]) {
        self.name = name
        self.files = files.mapValues { ($0, 1) }
    }

    /// A new version of `file`.
    func replace(_ file: String, with body: Data) {
        lock.withLock {
            files[file] = (body, (files[file]?.version ?? 0) + 1)
            changes[file] = nil
        }
    }

    /// A new version of `file` that is served changed by `change`.
    func misbehave(_ file: String, version _: String, _ change: @escaping (inout LoopbackHTTPServer.Response) -> Void) {
        lock.withLock {
            if let current = files[file] { files[file] = (current.body, current.version + 1) }
            changes[file] = change
        }
    }

    func respond(_ request: LoopbackHTTPServer.Request) -> LoopbackHTTPServer.Response {
        lock.withLock {
            let parts = request.path.split(separator: "/").map(String.init)
            guard parts.count == 3, parts[0] == "models", parts[1] == name, let file = files[parts[2]] else { return .init(status: 404) }
            let etag = "\"\(parts[2])-\(file.version)\""
            if request.headers["if-none-match"] == etag { return .init(status: 304, headers: ["ETag": etag]) }
            var response = LoopbackHTTPServer.Response(status: 200, headers: ["ETag": etag], body: file.body)
            changes[parts[2]]?(&response)
            return response
        }
    }
}
