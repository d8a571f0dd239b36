import Foundation

/// A model hosted on an HTTP(S) server, as ML Kit's `CustomRemoteModel` without Firebase: a name
/// (the cache folder), where to get it, and optionally what it must be.
///
/// ```swift
/// let remote = RemoteModel(name: "flowers", url: URL(string: "https://example.com/flowers.tflite")!,
///                          sha256: "3f1c…", size: 4_215_672)
/// let manager = ModelManager()
/// try manager.download(remote)
/// let options = ImageClassifierOptions(modelPath: manager.modelPath(remote, orLocal: "Models/flowers.tflite"))
/// ```
public struct RemoteModel: Sendable, Equatable, Codable {
    /// The model's name: 1–128 characters of `A-Z a-z 0-9 . _ -`, not starting with `.`.
    public let name: String
    /// An `http` or `https` URL.
    public let url: URL
    /// The expected SHA-256 of the file, hex (either case); the download fails if it differs.
    public var sha256: String?
    /// The expected size in bytes; the download fails if it differs.
    public var size: Int?

    public init(name: String, url: URL, sha256: String? = nil, size: Int? = nil) {
        self.name = name
        self.url = url
        self.sha256 = sha256?.lowercased()
        self.size = size
    }

    /// Whether `name` can be used as a cache folder name (no path separators, no `..`, no hidden names).
    public static func isValidName(_ name: String) -> Bool {
        guard (1 ... 128).contains(name.count), name.first != "." else { return false }
        return name.unicodeScalars.allSatisfy { ("a" ... "z").contains($0) || ("A" ... "Z").contains($0) || ("0" ... "9").contains($0) || "._-".unicodeScalars.contains($0) }
    }
}

/// A model in the cache: what was downloaded, from where, and the validators to revalidate it.
public struct DownloadedModel: Sendable, Equatable, Codable {
    public let name: String
    public let url: URL
    /// The cached file.
    public let path: String
    public let size: Int
    /// SHA-256 of the cached file, lower-case hex (computed while downloading).
    public let sha256: String
    /// The server's `ETag`, sent back as `If-None-Match`.
    public let etag: String?
    /// The server's `Last-Modified`, sent back as `If-Modified-Since`.
    public let lastModified: String?
}

/// What a download did.
public enum DownloadOutcome: Sendable, Equatable {
    /// A new (or newer) file was downloaded, verified and moved into the cache.
    case downloaded
    /// The server answered 304 Not Modified: the cached file is current and was kept.
    case notModified
}

/// Why a remote model could not be downloaded. The cached file, if any, is left as it was.
public enum RemoteModelError: Error, Equatable, CustomStringConvertible {
    case invalidName(String)
    case unsupportedURL(String)
    /// The server answered with a status other than 200 (or 304 for a revalidation).
    case httpStatus(Int, url: String)
    /// The connection ended before the announced `Content-Length`.
    case truncated(expected: Int, received: Int)
    /// The file is not the size `RemoteModel.size` says.
    case sizeMismatch(expected: Int, actual: Int)
    /// The file's SHA-256 is not `RemoteModel.sha256`.
    case checksumMismatch(expected: String, actual: String)
    /// The transfer failed (connection refused, timed out, ...).
    case network(String)
    /// The cache folder could not be written.
    case cache(String)
    /// The server announced or sent more than `limit` bytes for one file.
    case tooLarge(limit: Int, url: String)
    /// The downloaded files are not a model that loads (a bad manifest, labels or `.tflite`).
    case invalidModel(String)
    /// No base URL for hosted model names (`ModelManager.modelHostBaseURL`, `SWIFTLITE_MODEL_HOST`).
    case noModelHost

    public var description: String {
        switch self {
        case .invalidName(let n): return "invalid model name '\(n)': use 1-128 of A-Z a-z 0-9 . _ - (not starting with .)"
        case .unsupportedURL(let u): return "unsupported model URL '\(u)': only http and https"
        case .httpStatus(let s, let u): return "\(u): HTTP status \(s)"
        case .truncated(let e, let r): return "download truncated: received \(r) of \(e) bytes"
        case .sizeMismatch(let e, let a): return "downloaded file has \(a) bytes, expected \(e)"
        case .checksumMismatch(let e, let a): return "downloaded file has SHA-256 \(a), expected \(e)"
        case .network(let m): return "download failed: \(m)"
        case .cache(let m): return "model cache: \(m)"
        case .tooLarge(let limit, let u): return "\(u): more than \(limit) bytes"
        case .invalidModel(let m): return "downloaded model is not usable: \(m)"
        case .noModelHost: return "no model host: set ModelManager.modelHostBaseURL or SWIFTLITE_MODEL_HOST"
        }
    }
}

extension Notification.Name {
    /// Posted (object: the `ModelManager`) when a download succeeded or found the cached file
    /// current; `userInfo[ModelManager.remoteModelKey]` is the `RemoteModel`.
    public static let swiftLiteModelDownloadDidSucceed = Notification.Name("SwiftLiteModelDownloadDidSucceed")
    /// Posted when a download failed; `userInfo[ModelManager.errorKey]` is the `RemoteModelError`.
    public static let swiftLiteModelDownloadDidFail = Notification.Name("SwiftLiteModelDownloadDidFail")
}
