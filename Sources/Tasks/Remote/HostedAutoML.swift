import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A hosted AutoML Vision Edge model by name (ML Kit's `AutoMLImageLabelerRemoteModel(name:)`),
/// without Firebase: `ModelManager.modelHostBaseURL` (or `$SWIFTLITE_MODEL_HOST`) says where
/// names resolve.
///
/// Host layout: the model named `flowers` is the folder `<base URL>/flowers/` holding the three
/// files of an AutoML export, served as plain files by any HTTP server:
///
/// ```
/// <base>/flowers/manifest.json   {"modelFile": "model.tflite", "labelsFile": "dict.txt", "modelType": "IMAGE_LABELING"}
/// <base>/flowers/dict.txt        (the file the manifest's labelsFile names)
/// <base>/flowers/model.tflite    (the file the manifest's modelFile names)
/// ```
///
/// A newer version is found by each file's `ETag` (sent back as `If-None-Match`): a file that
/// answers 304 is kept, one that answers 200 is replaced.
public final class AutoMLImageLabelerRemoteModel: Sendable {
    /// The model's name: 1–128 characters of `A-Z a-z 0-9 . _ -`, not starting with `.`.
    public let name: String

    public init(name: String) {
        self.name = name
    }
}

/// ML Kit's download conditions. Linux has neither cellular links nor background sessions, so
/// both are recorded and have no effect.
public struct ModelDownloadConditions: Sendable, Equatable {
    public var allowsCellularAccess: Bool
    public var allowsBackgroundDownloading: Bool

    public init(allowsCellularAccess: Bool = true, allowsBackgroundDownloading: Bool = true) {
        self.allowsCellularAccess = allowsCellularAccess
        self.allowsBackgroundDownloading = allowsBackgroundDownloading
    }
}

/// Keys of the download notifications' `userInfo` (ML Kit's `ModelDownloadUserInfoKey`):
/// `userInfo[ModelDownloadUserInfoKey.remoteModel.rawValue] as? RemoteModel` and
/// `userInfo[ModelDownloadUserInfoKey.error.rawValue]` (a `RemoteModelError`).
public struct ModelDownloadUserInfoKey: RawRepresentable, Hashable, Sendable {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let remoteModel = ModelDownloadUserInfoKey(rawValue: ModelManager.remoteModelKey)
    public static let error = ModelDownloadUserInfoKey(rawValue: ModelManager.errorKey)
}

extension Notification.Name {
    /// ML Kit's name: posted after a hosted model was downloaded, or found current.
    public static let mlkitModelDownloadDidSucceed = Notification.Name.swiftLiteModelDownloadDidSucceed
    /// ML Kit's name: posted when a download failed; the cached version, if any, is kept.
    public static let mlkitModelDownloadDidFail = Notification.Name.swiftLiteModelDownloadDidFail
}

extension ModelManager {
    /// The AutoML files a hosted model's folder holds, in the order they are fetched (the
    /// manifest first: it names the other two).
    private struct HostedRecord: Codable {
        /// ETag of each file by its name in the folder.
        var etags: [String: String]
    }

    /// The cache's link to the current version of hosted model `name`: `<cache>/<name>/current`,
    /// a symbolic link to a sibling `v-<UUID>` folder, replaced in one `rename`, so a reader sees
    /// the old version or the new one and never a mix.
    func autoMLCurrentFolder(named name: String) -> URL {
        cacheDirectory.appendingPathComponent(name).appendingPathComponent("current")
    }

    /// The URL of file `file` of hosted model `name`.
    func hostedURL(_ name: String, _ file: String) throws(RemoteModelError) -> URL {
        guard let base = modelHostBaseURL else { throw .noModelHost }
        guard let scheme = base.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            throw .unsupportedURL(base.absoluteString)
        }
        return base.appendingPathComponent(name).appendingPathComponent(file)
    }

    /// The `RemoteModel` the notifications carry for `model`: its name and its manifest's URL.
    func notificationModel(_ model: AutoMLImageLabelerRemoteModel) -> RemoteModel {
        let url = (try? hostedURL(model.name, "manifest.json")) ?? URL(fileURLWithPath: "/").appendingPathComponent(model.name)
        return RemoteModel(name: model.name, url: url)
    }

    /// Whether a complete, valid version of hosted model `model` is in the cache (ML Kit's
    /// `isModelDownloaded(_:)`).
    public func isModelDownloaded(_ model: AutoMLImageLabelerRemoteModel) -> Bool {
        (try? downloadedAutoMLModel(named: model.name)) != nil
    }

    /// Downloads hosted model `model` off the caller's thread (ML Kit's `download(_:conditions:)`)
    /// and returns its progress at once: one unit per file fetched or found current.
    /// `.mlkitModelDownloadDidSucceed` or `.mlkitModelDownloadDidFail` follows on a background
    /// thread.
    @discardableResult
    public func download(_ model: AutoMLImageLabelerRemoteModel, conditions: ModelDownloadConditions) -> Progress {
        let progress = Progress(totalUnitCount: 3)
        Thread { [self] in
            _ = try? downloadAndWait(model, progress: progress)
        }.start()
        return progress
    }

    /// Downloads hosted model `model` (or finds the cached version current) and waits for it.
    /// Posts the same notifications as `download(_:conditions:)`.
    /// - Throws: `RemoteModelError`; on any failure the cache holds the version it held before.
    @discardableResult
    public func downloadAndWait(_ model: AutoMLImageLabelerRemoteModel, progress: Progress? = nil) throws(RemoteModelError) -> DownloadOutcome {
        let posted = notificationModel(model)
        do {
            let outcome = try fetchHosted(model.name, progress: progress)
            NotificationCenter.default.post(name: .mlkitModelDownloadDidSucceed, object: self,
                                            userInfo: [ModelDownloadUserInfoKey.remoteModel.rawValue: posted])
            return outcome
        } catch {
            NotificationCenter.default.post(name: .mlkitModelDownloadDidFail, object: self,
                                            userInfo: [ModelDownloadUserInfoKey.remoteModel.rawValue: posted,
                                                       ModelDownloadUserInfoKey.error.rawValue: error])
            throw error
        }
    }

    /// The downloaded version of hosted AutoML model `name`, as a local model.
    /// - Throws: `TaskError.invalidOptions` when it has not been downloaded.
    func downloadedAutoMLModel(named name: String) throws(TaskError) -> LocalModel {
        guard RemoteModel.isValidName(name) else {
            throw .invalidOptions("invalid remote model name '\(name)': use 1-128 of A-Z a-z 0-9 . _ - (not starting with .)")
        }
        let manifest = autoMLCurrentFolder(named: name).appendingPathComponent("manifest.json").path
        guard FileManager.default.fileExists(atPath: manifest) else {
            throw .invalidOptions("remote model '\(name)' is not downloaded to \(cacheDirectory.path) (call ModelManager.modelManager().download first)")
        }
        return try LocalModel(manifestPath: manifest)
    }

    /// Fetches the three files into a staging folder (a file answering 304 is copied from the
    /// current version), checks that they load as a labeler, and only then makes the staging
    /// folder the current version. Every failure removes the staging folder and leaves `current`
    /// as it was.
    private func fetchHosted(_ name: String, progress: Progress?) throws(RemoteModelError) -> DownloadOutcome {
        guard RemoteModel.isValidName(name) else { throw .invalidName(name) }
        _ = try hostedURL(name, "manifest.json")
        let folder = cacheDirectory.appendingPathComponent(name)
        let current = autoMLCurrentFolder(named: name)
        let folderExisted = FileManager.default.fileExists(atPath: folder.path)
        do { try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true) } catch {
            throw .cache("cannot create \(folder.path): \(error.localizedDescription)")
        }
        // A failed first download leaves no empty folder behind (runs after the staging folder's removal).
        defer { if !folderExisted { Self.removeIfEmpty(folder) } }
        // The current version counts only when it is complete and loads (a usable LocalModel).
        let currentIsUsable = (try? downloadedAutoMLModel(named: name)) != nil
        let previous: HostedRecord? = currentIsUsable
            ? (try? Data(contentsOf: current.appendingPathComponent(".hosted.json"))).flatMap { try? JSONDecoder().decode(HostedRecord.self, from: $0) }
            : nil
        let staging = folder.appendingPathComponent(".staging-\(UUID().uuidString)")
        do { try FileManager.default.createDirectory(at: staging, withIntermediateDirectories: false) } catch {
            throw .cache("cannot create \(staging.path): \(error.localizedDescription)")
        }
        var keepStaging = false
        defer { if !keepStaging { try? FileManager.default.removeItem(at: staging) } }

        var record = HostedRecord(etags: [:])
        var changed = false
        /// Fetches `file` into the staging folder; true when the server sent a new body.
        func fetch(_ file: String, limit: Int) throws(RemoteModelError) {
            let known = previous?.etags[file]
            let status = try get(try hostedURL(name, file), ifNoneMatch: known, to: staging.appendingPathComponent(file),
                                 maxBytes: limit, etag: &record.etags[file])
            if status == 304, known != nil {
                record.etags[file] = known
                do { try FileManager.default.copyItem(at: current.appendingPathComponent(file), to: staging.appendingPathComponent(file)) } catch {
                    throw .cache("cannot copy \(file) from the current version: \(error.localizedDescription)")
                }
            } else {
                changed = true
            }
            progress?.completedUnitCount += 1
        }
        try fetch("manifest.json", limit: 1 << 20)
        let (modelFile, labelsFile) = try Self.hostedFileNames(staging.appendingPathComponent("manifest.json"))
        try fetch(labelsFile, limit: min(maxHostedFileBytes, 16 << 20))
        try fetch(modelFile, limit: maxHostedFileBytes)
        if !changed { return .notModified }

        // The new version must load as a labeler before it may replace the current one.
        do throws(TaskError) {
            let local = try LocalModel(manifestPath: staging.appendingPathComponent("manifest.json").path)
            let options = ImageClassifierOptions(modelPath: local.modelPath)
            options.labelsPath = local.labelsPath
            _ = try ImageClassifier(options: options)
        } catch {
            throw .invalidModel(error.description)
        }
        do {
            try JSONEncoder().encode(record).write(to: staging.appendingPathComponent(".hosted.json"))
        } catch {
            throw .cache("cannot write \(staging.path)/.hosted.json: \(error.localizedDescription)")
        }
        let versionName = "v-\(UUID().uuidString)"
        let version = folder.appendingPathComponent(versionName)
        guard rename(staging.path, version.path) == 0 else {
            throw .cache("cannot move the download to \(version.path): \(String(cString: strerror(errno)))")
        }
        keepStaging = true
        let link = folder.appendingPathComponent(".current-\(UUID().uuidString)")
        let oldVersion = (try? FileManager.default.destinationOfSymbolicLink(atPath: current.path)).map { folder.appendingPathComponent($0) }
        guard symlink(versionName, link.path) == 0, rename(link.path, current.path) == 0 else {
            let reason = String(cString: strerror(errno))
            try? FileManager.default.removeItem(at: link)
            try? FileManager.default.removeItem(at: version)
            throw .cache("cannot make \(versionName) the current version of \(name): \(reason)")
        }
        if let oldVersion, oldVersion.lastPathComponent.hasPrefix("v-") { try? FileManager.default.removeItem(at: oldVersion) }
        return .downloaded
    }

    /// The model and label file names a downloaded manifest gives: plain names in its folder.
    private static func hostedFileNames(_ manifest: URL) throws(RemoteModelError) -> (model: String, labels: String) {
        guard let data = try? Data(contentsOf: manifest),
              let json = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any],
              let model = json["modelFile"] as? String, let labels = json["labelsFile"] as? String else {
            throw .invalidModel("manifest.json is not a JSON object with \"modelFile\" and \"labelsFile\" strings")
        }
        for file in [model, labels] {
            guard RemoteModel.isValidName(file), file != "manifest.json" else {
                throw .invalidModel("manifest.json names '\(file)': hosted files are plain names (A-Z a-z 0-9 . _ -) in the model's folder")
            }
        }
        guard model != labels else { throw .invalidModel("manifest.json names '\(model)' as both model and labels") }
        return (model, labels)
    }

    /// One GET of `url` into `file` (written only for a 200), with `If-None-Match` when `etag`
    /// is known. Returns the status (200 or 304) and sets `newETag` to the response's ETag.
    private func get(_ url: URL, ifNoneMatch etag: String?, to file: URL, maxBytes: Int, etag newETag: inout String?) throws(RemoteModelError) -> Int {
        var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: timeout)
        if let etag { request.setValue(etag, forHTTPHeaderField: "If-None-Match") }
        let result = Transfer(file: file, expectedSize: nil, progress: nil, maxBytes: maxBytes).run(request, timeout: timeout)
        if let failure = result.failure { throw failure }
        if result.status == 304, etag != nil { return 304 }
        guard result.status == 200 else { throw .httpStatus(result.status, url: url.absoluteString) }
        if let announced = result.announcedLength, result.received != announced {
            throw .truncated(expected: announced, received: result.received)
        }
        newETag = result.etag
        return 200
    }
}
