import Foundation
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Downloads hosted models into a cache folder and says which ones are there — ML Kit's
/// `ModelManager` for `CustomRemoteModel`, without Firebase.
///
/// ```swift
/// let manager = ModelManager()                      // ~/.cache/swiftlite/models
/// let remote = RemoteModel(name: "birds", url: URL(string: "https://example.com/birds.tflite")!)
/// let progress = Progress()
/// try manager.download(remote, progress: progress)  // blocks; or downloadInBackground(remote) { result in ... }
/// var options = ImageClassifierOptions(modelPath: manager.modelPath(remote, orLocal: "Models/birds.tflite"))
/// ```
///
/// Layout: `<cache>/<name>/model.tflite` and `<cache>/<name>/info.json` (a `DownloadedModel`).
/// A download is written to a hidden temporary file in that folder, checked (the announced
/// `Content-Length`, `RemoteModel.size`, `RemoteModel.sha256`) and only then renamed over
/// `model.tflite`, so a half-downloaded or corrupt file is never where a task would load it.
/// A model already in the cache is revalidated with `If-None-Match` / `If-Modified-Since`; a 304
/// keeps the cached file, a 200 replaces it with the newer version.
public final class ModelManager: @unchecked Sendable {
    /// The settings an app may change while downloads run on other threads.
    private let settings: Mutex<(cache: URL, host: URL?)>

    /// Where downloads are kept. Reads and writes are atomic; set it before starting a download
    /// (a download reads it at each step, so a change mid-download would split its files).
    public var cacheDirectory: URL {
        get { settings.withLock { $0.cache } }
        set { settings.withLock { $0.cache = newValue } }
    }
    /// Seconds without data before a download fails.
    public var timeout: TimeInterval = 60
    /// Where hosted AutoML model names resolve: model `name` is the folder `<base>/<name>/` (see
    /// `AutoMLImageLabelerRemoteModel`). Starts as `$SWIFTLITE_MODEL_HOST` when that is set.
    public var modelHostBaseURL: URL? {
        get { settings.withLock { $0.host } }
        set { settings.withLock { $0.host = newValue } }
    }
    /// The most bytes one hosted file (`model.tflite`, `dict.txt`, `manifest.json`) may have.
    public var maxHostedFileBytes = 1 << 30

    public static let remoteModelKey = "remoteModel"
    public static let errorKey = "error"

    /// `$SWIFTLITE_MODEL_CACHE`, else `$XDG_CACHE_HOME/swiftlite/models`, else `~/.cache/swiftlite/models`.
    public static var defaultCacheDirectory: URL {
        let environment = ProcessInfo.processInfo.environment
        if let dir = environment["SWIFTLITE_MODEL_CACHE"], !dir.isEmpty { return URL(fileURLWithPath: dir) }
        let base = environment["XDG_CACHE_HOME"].flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0) }
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache")
        return base.appendingPathComponent("swiftlite/models")
    }

    /// The manager ML Kit's guides call, `ModelManager.modelManager()`: one instance per process,
    /// on `defaultCacheDirectory`.
    public static func modelManager() -> ModelManager { shared }
    private static let shared = ModelManager()

    public init(cacheDirectory: URL = ModelManager.defaultCacheDirectory) {
        let host = ProcessInfo.processInfo.environment["SWIFTLITE_MODEL_HOST"].flatMap { $0.isEmpty ? nil : URL(string: $0) }
        settings = Mutex((cacheDirectory, host))
    }

    /// Where `model`'s file is (or will be) cached.
    public func cachedFileURL(for model: RemoteModel) -> URL {
        cacheDirectory.appendingPathComponent(model.name).appendingPathComponent("model.tflite")
    }

    private func infoURL(for name: String) -> URL {
        cacheDirectory.appendingPathComponent(name).appendingPathComponent("info.json")
    }

    /// What the cache holds under `name`, if its file is complete (present, of the recorded size).
    public func downloadedModel(named name: String) -> DownloadedModel? {
        guard RemoteModel.isValidName(name),
              let data = FileManager.default.contents(atPath: infoURL(for: name).path),
              let info = try? JSONDecoder().decode(DownloadedModel.self, from: data),
              let attributes = try? FileManager.default.attributesOfItem(atPath: info.path),
              (attributes[.size] as? NSNumber)?.intValue == info.size else { return nil }
        return info
    }

    /// Whether `model` is in the cache: downloaded from its URL, complete, and (when the model
    /// names one) with its SHA-256.
    public func isModelDownloaded(_ model: RemoteModel) -> Bool {
        guard let info = downloadedModel(named: model.name), info.url == model.url else { return false }
        if let size = model.size, size != info.size { return false }
        if let sha = model.sha256, sha != info.sha256 { return false }
        return true
    }

    /// Every complete model in the cache, by name.
    public func downloadedModels() -> [DownloadedModel] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: cacheDirectory.path)) ?? []
        return names.sorted().compactMap(downloadedModel(named:))
    }

    /// "Remote if downloaded, else local": the path to pass as a task's model path.
    ///
    /// ```swift
    /// let options = ImageClassifierOptions(modelPath: manager.modelPath(remote, orLocal: "Models/efficientnet_lite0_f32.tflite"))
    /// ```
    public func modelPath(_ model: RemoteModel, orLocal localPath: String) -> String {
        isModelDownloaded(model) ? cachedFileURL(for: model).path : localPath
    }

    /// Removes `folder` when it holds nothing.
    static func removeIfEmpty(_ folder: URL) {
        if let entries = try? FileManager.default.contentsOfDirectory(atPath: folder.path), entries.isEmpty {
            try? FileManager.default.removeItem(at: folder)
        }
    }

    /// Removes `model` from the cache.
    public func deleteDownloadedModel(_ model: RemoteModel) throws(RemoteModelError) {
        guard RemoteModel.isValidName(model.name) else { throw .invalidName(model.name) }
        let folder = cacheDirectory.appendingPathComponent(model.name)
        guard FileManager.default.fileExists(atPath: folder.path) else { return }
        do { try FileManager.default.removeItem(at: folder) } catch { throw .cache("cannot remove \(folder.path): \(error.localizedDescription)") }
    }

    /// Downloads `model` off the caller's thread; returns the progress at once (ML Kit's shape).
    /// `completion` and the notifications follow on a background thread.
    @discardableResult
    public func downloadInBackground(_ model: RemoteModel, completion: (@Sendable (Result<DownloadOutcome, RemoteModelError>) -> Void)? = nil) -> Progress {
        let progress = Progress(totalUnitCount: Int64(model.size ?? -1))
        Thread { [self] in
            do throws(RemoteModelError) {
                completion?(.success(try download(model, progress: progress)))
            } catch {
                completion?(.failure(error))
            }
        }.start()
        return progress
    }

    /// Downloads `model` into the cache (or revalidates the cached copy) and waits for it.
    ///
    /// Posts `.swiftLiteModelDownloadDidSucceed` or `.swiftLiteModelDownloadDidFail`.
    /// - Parameters:
    ///   - model: the hosted model to fetch.
    ///   - progress: updated as bytes arrive (`totalUnitCount` is the expected size, -1 when
    ///     unknown); a 304 completes it at once.
    /// - Throws: `RemoteModelError`; on any failure the cache holds what it held before.
    @discardableResult
    public func download(_ model: RemoteModel, progress: Progress? = nil) throws(RemoteModelError) -> DownloadOutcome {
        do {
            let outcome = try fetch(model, progress: progress)
            NotificationCenter.default.post(name: .swiftLiteModelDownloadDidSucceed, object: self, userInfo: [Self.remoteModelKey: model])
            return outcome
        } catch {
            NotificationCenter.default.post(name: .swiftLiteModelDownloadDidFail, object: self, userInfo: [Self.remoteModelKey: model, Self.errorKey: error])
            throw error
        }
    }

    private func fetch(_ model: RemoteModel, progress: Progress?) throws(RemoteModelError) -> DownloadOutcome {
        guard RemoteModel.isValidName(model.name) else { throw .invalidName(model.name) }
        guard let scheme = model.url.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            throw .unsupportedURL(model.url.absoluteString)
        }
        let folder = cacheDirectory.appendingPathComponent(model.name)
        let folderExisted = FileManager.default.fileExists(atPath: folder.path)
        do { try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true) } catch {
            throw .cache("cannot create \(folder.path): \(error.localizedDescription)")
        }
        // A failed first download leaves no empty folder behind (runs after the temporary file's removal).
        var succeeded = false
        defer { if !succeeded, !folderExisted { Self.removeIfEmpty(folder) } }
        var request = URLRequest(url: model.url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: timeout)
        let cached = downloadedModel(named: model.name).flatMap { $0.url == model.url ? $0 : nil }
        if let cached, FileManager.default.fileExists(atPath: cachedFileURL(for: model).path) {
            if let etag = cached.etag { request.setValue(etag, forHTTPHeaderField: "If-None-Match") }
            if let date = cached.lastModified { request.setValue(date, forHTTPHeaderField: "If-Modified-Since") }
        }

        let temporary = folder.appendingPathComponent(".download-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: temporary) }
        let result = Transfer(file: temporary, expectedSize: model.size, progress: progress).run(request, timeout: timeout)
        if let failure = result.failure { throw failure }
        if result.status == 304, cached != nil {
            progress?.totalUnitCount = Int64(cached!.size)
            progress?.completedUnitCount = Int64(cached!.size)
            succeeded = true
            return .notModified
        }
        guard result.status == 200 else { throw .httpStatus(result.status, url: model.url.absoluteString) }
        if let announced = result.announcedLength, result.received != announced {
            throw .truncated(expected: announced, received: result.received)
        }
        if let size = model.size, size != result.received { throw .sizeMismatch(expected: size, actual: result.received) }
        let digest = result.sha256
        if let expected = model.sha256, expected != digest { throw .checksumMismatch(expected: expected, actual: digest) }

        let destination = cachedFileURL(for: model)
        guard rename(temporary.path, destination.path) == 0 else {
            throw .cache("cannot move the download to \(destination.path): \(String(cString: strerror(errno)))")
        }
        let info = DownloadedModel(name: model.name, url: model.url, path: destination.path, size: result.received,
                                   sha256: digest, etag: result.etag, lastModified: result.lastModified)
        do {
            try JSONEncoder().encode(info).write(to: infoURL(for: model.name), options: .atomic)
        } catch {
            throw .cache("cannot write \(infoURL(for: model.name).path): \(error.localizedDescription)")
        }
        succeeded = true
        return .downloaded
    }
}

/// One HTTP transfer: streams the body into a file, hashing and counting as it goes.
final class Transfer: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    let done = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    private let file: URL
    private let expectedSize: Int?
    private let progress: Progress?
    /// The most bytes the body may have; a larger announced length or body fails the transfer.
    private let maxBytes: Int
    private var handle: FileHandle?
    private var digest = SHA256()
    private var state = Result()

    struct Result {
        var status = 0
        var announcedLength: Int?
        var etag: String?
        var lastModified: String?
        var received = 0
        var sha256 = ""
        var failure: RemoteModelError?
    }

    init(file: URL, expectedSize: Int?, progress: Progress?, maxBytes: Int = .max) {
        self.maxBytes = maxBytes
        self.file = file
        self.expectedSize = expectedSize
        self.progress = progress
    }

    func result() -> Result {
        lock.lock()
        defer { lock.unlock() }
        return state
    }

    /// Sends `request` through an ephemeral session with no cache (every request reaches the
    /// server and no response is stored), waits until the transfer ends and returns its result.
    func run(_ request: URLRequest, timeout: TimeInterval) -> Result {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.timeoutIntervalForRequest = timeout
        let session = URLSession(configuration: configuration, delegate: self, delegateQueue: nil)
        session.dataTask(with: request).resume()
        done.wait()
        session.finishTasksAndInvalidate()
        return result()
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping (URLSession.ResponseDisposition) -> Void) {
        lock.lock()
        defer { lock.unlock() }
        let http = response as? HTTPURLResponse
        state.status = http?.statusCode ?? 0
        state.etag = http?.value(forHTTPHeaderField: "ETag")
        state.lastModified = http?.value(forHTTPHeaderField: "Last-Modified")
        state.announcedLength = response.expectedContentLength >= 0 ? Int(response.expectedContentLength) : nil
        guard state.status == 200 else {
            completionHandler(.cancel)
            return
        }
        if let announced = state.announcedLength, announced > maxBytes {
            state.failure = .tooLarge(limit: maxBytes, url: response.url?.absoluteString ?? "")
            completionHandler(.cancel)
            return
        }
        guard FileManager.default.createFile(atPath: file.path, contents: nil), let handle = try? FileHandle(forWritingTo: file) else {
            state.failure = .cache("cannot create \(file.path)")
            completionHandler(.cancel)
            return
        }
        self.handle = handle
        progress?.totalUnitCount = Int64(expectedSize ?? state.announcedLength ?? -1)
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        lock.lock()
        defer { lock.unlock() }
        guard let handle, state.failure == nil else { return }
        guard data.count <= maxBytes - state.received else {
            state.failure = .tooLarge(limit: maxBytes, url: dataTask.originalRequest?.url?.absoluteString ?? "")
            dataTask.cancel()
            return
        }
        do { try handle.write(contentsOf: data) } catch {
            state.failure = .cache("cannot write \(file.path): \(error.localizedDescription)")
            dataTask.cancel()
            return
        }
        digest.update(data)
        state.received += data.count
        progress?.completedUnitCount = Int64(state.received)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        lock.lock()
        try? handle?.close()
        handle = nil
        state.sha256 = digest.finalize().hexString
        if let error, (error as? URLError)?.code == .timedOut, state.failure == nil {
            state.failure = .network("no data for \(task.originalRequest?.timeoutInterval ?? 0) s (timed out) after \(state.received) bytes")
        } else if let error, state.failure == nil, state.status == 200 {
            // A connection that closes early is a truncation whatever the transport calls it.
            if let announced = state.announcedLength, state.received < announced {
                state.failure = .truncated(expected: announced, received: state.received)
            } else {
                state.failure = .network(error.localizedDescription)
            }
        } else if let error, state.status == 0 {
            state.failure = .network(error.localizedDescription)
        }
        lock.unlock()
        done.signal()
    }
}
