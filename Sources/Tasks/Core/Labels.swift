import Engine
import Foundation

/// Category names (and optional per-locale display names) for the classes of one output.
public struct Labels: Sendable, Equatable {
    public var names: [String]
    public var displayNames: [String]?

    public init(names: [String], displayNames: [String]? = nil) {
        self.names = names
        self.displayNames = displayNames
    }

    /// Parses a label file: one label per line; a trailing empty line is ignored, `\r\n` accepted.
    public init(fileContents text: String) {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.hasSuffix("\r") ? String($0.dropLast()) : String($0) }
        if lines.last == "" { lines.removeLast() }
        self.init(names: lines)
    }

    /// Reads a label file from disk (at most `Limits.maxAssociatedFileBytes`, 16 MiB by default).
    public init(contentsOf path: String, limits: Limits = .default) throws(TaskError) {
        let data: Data
        do { data = try SmallFile.read(path, limit: limits.maxAssociatedFileBytes) } catch {
            switch error {
            case .unreadable: throw .invalidLabels("cannot read label file '\(path)'")
            case .tooLarge:
                throw .invalidLabels("label file '\(path)' is larger than \(limits.maxAssociatedFileBytes) bytes (Limits.maxAssociatedFileBytes)")
            }
        }
        self.init(fileContents: String(decoding: data, as: UTF8.self))
    }

    func name(_ index: Int) -> String? { names.indices.contains(index) ? names[index] : nil }
    func displayName(_ index: Int) -> String? {
        guard let d = displayNames, d.indices.contains(index) else { return nil }
        return d[index]
    }
}
