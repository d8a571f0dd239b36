import Foundation

/// A hosted AutoML Vision Edge model by name (ML Kit's `AutoMLImageLabelerRemoteModel(name:)`),
/// without Firebase: `ModelManager.modelHostBaseURL` says where names resolve.
///
/// Host layout: a model named `flowers` is the folder `<base URL>/flowers/` with the three files
/// of an AutoML export, `manifest.json`, `dict.txt` and `model.tflite` (the two data files are
/// the ones the manifest's `labelsFile` and `modelFile` name), served as plain files by any HTTP
/// server.
public final class AutoMLImageLabelerRemoteModel: Sendable {
    /// The model's name: 1–128 characters of `A-Z a-z 0-9 . _ -`, not starting with `.`.
    public let name: String

    public init(name: String) {
        self.name = name
    }
}

extension ModelManager {
    /// The folder in the cache that holds the current version of hosted AutoML model `name`
    /// (a symbolic link to one version's folder, replaced in one `rename`).
    func autoMLCurrentFolder(named name: String) -> URL {
        cacheDirectory.appendingPathComponent(name).appendingPathComponent("current")
    }

    /// The downloaded version of hosted AutoML model `name`, as a local model.
    /// - Throws: `TaskError.invalidOptions` when it has not been downloaded (or its files are not
    ///   a valid AutoML folder).
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
}
