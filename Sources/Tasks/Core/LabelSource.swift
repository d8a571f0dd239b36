import Engine

/// Where a task's labels came from. A label file the user names (`labelsPath`, `--labels`, an
/// AutoML manifest's `dict.txt`) wins over labels packed in the model's metadata.
public enum LabelSource: Sendable, Equatable, CustomStringConvertible {
    /// The label file the user named.
    case file(String)
    /// The file packed in the model and named by its metadata.
    case metadata(String)
    /// No labels: categories carry only their index.
    case none

    public var description: String {
        switch self {
        case .file(let path): return "label file '\(path)'"
        case .metadata(let name): return "model metadata ('\(name)')"
        case .none: return "none (categories by index)"
        }
    }
}

/// The labels of one output, where they came from and how they were fitted to the classes.
public struct LabelChoice: Sendable, Equatable, CustomStringConvertible {
    /// The labels as the task uses them (background line removed); nil without labels.
    public var labels: Labels?
    /// Where they came from.
    public var source: LabelSource
    /// Set when a leading background line was dropped (the off-by-one of SSD label maps).
    public var droppedBackground: String?

    /// "label file 'coco.txt' (90 labels; leading background line '???' skipped)".
    public var description: String {
        guard let labels else { return source.description }
        var text = "\(source) (\(labels.names.count) labels"
        if let dropped = droppedBackground { text += "; leading background line '\(dropped)' skipped" }
        return text + ")"
    }

    /// Whether `line` is the background class that SSD and some classifier label maps list first.
    static func isBackground(_ line: String) -> Bool {
        let t = line.trimmingCharacters(in: .whitespaces).lowercased()
        return t == "???" || t == "background" || t == "__background__"
    }

    /// Reads the user's label file, else the metadata's labels (`metadata()`), and nothing else.
    static func load(path: String?, limits: Limits, metadata: () throws(TaskError) -> (Labels, String)?) throws(TaskError) -> LabelChoice {
        if let path { return LabelChoice(labels: try Labels(contentsOf: path, limits: limits), source: .file(path)) }
        if let (labels, name) = try metadata() { return LabelChoice(labels: labels, source: .metadata(name)) }
        return LabelChoice(labels: nil, source: .none)
    }

    /// Fits the labels to `classes` class indices, as TFLite's detection examples do with their
    /// `labelOffset`: when there is one label more than classes and the first line is a
    /// background line ("???", "background"), that line is dropped. MediaPipe uses the labels as
    /// given (index i → line i), which for such a file names every class one off.
    /// `allowExtra` accepts more labels than classes (a detector's class indices only reach
    /// `classes − 1`; COCO label maps have gaps).
    /// - Throws: `TaskError.invalidLabels` when the counts still do not match, explaining the
    ///   background rule.
    mutating func fit(classes: Int, allowExtra: Bool, what: String) throws(TaskError) {
        guard var l = labels else { return }
        if let first = l.names.first, Self.isBackground(first), l.names.count - 1 >= classes {
            l.names.removeFirst()
            if let d = l.displayNames?.first, Self.isBackground(d) { l.displayNames?.removeFirst() }
            droppedBackground = first
            labels = l
        }
        let n = l.names.count
        guard n == classes || (allowExtra && n > classes) else {
            var why = "\(n) labels from \(source) for \(what) with \(classes) classes"
            if n == classes + 1 {
                why += "; one label too many, but its first line '\(l.names[0])' is not a background line ('???' or 'background') to skip"
            } else if n + 1 == classes {
                why += "; one label short: the model likely scores a background class at index 0 that the label file lacks (add a first line '???')"
            } else if let dropped = droppedBackground {
                why += " (after skipping the leading background line '\(dropped)')"
            }
            throw .invalidLabels(why)
        }
    }
}
