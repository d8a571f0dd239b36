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

    /// Parses a label file as people write them: one label per line, lines ended by `\n`, `\r\n`
    /// (AutoML Vision Edge's `dict.txt`) or `\r`; a UTF-8 byte-order mark and trailing blank lines
    /// are dropped. (In a Swift `String`, `"\r\n"` is one `Character`, so it is matched as such.)
    public init(fileContents text: String) {
        let body = text.hasPrefix("\u{FEFF}") ? text.dropFirst() : Substring(text)
        var lines = body.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" })
            .map(String.init)
        while lines.last?.allSatisfy(\.isWhitespace) == true { lines.removeLast() }
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
