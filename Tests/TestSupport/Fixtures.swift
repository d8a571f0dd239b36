import Foundation
import XCTest
import Engine

/// Paths of the repository and of the shared reference data beside it.
public enum Fixtures {
    /// The repository root (this file is `<root>/Tests/TestSupport/Fixtures.swift`).
    public static let repositoryRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// `<root>/Tests/<target>/Fixtures`.
    public static func directory(_ target: String) -> URL {
        repositoryRoot.appendingPathComponent("Tests/\(target)/Fixtures")
    }

    /// `../shared` next to the repository: canonical models and photos, present on developer machines
    /// and in CI, absent in a user's clone.
    public static let sharedDirectory: URL = repositoryRoot.deletingLastPathComponent().appendingPathComponent("shared")

    /// A file under `../shared`, or an `XCTSkip` saying that the shared data is absent.
    public static func shared(_ relativePath: String) throws -> URL {
        let url = sharedDirectory.appendingPathComponent(relativePath)
        guard FileManager.default.fileExists(atPath: sharedDirectory.path) else {
            throw XCTSkip("../shared not found at \(sharedDirectory.path); this test needs the shared models and images (present in CI)")
        }
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw XCTSkip("\(url.path) is missing from ../shared")
        }
        return url
    }
}
