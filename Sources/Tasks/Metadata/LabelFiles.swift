import Engine

/// The label files a model's metadata names, read from the zip archive packed after the model.
public enum LabelFiles {
    /// Line count of each label file (tensor axis or value labels) the metadata names and the
    /// model packs; a named file missing from the archive is left out.
    /// - Throws: when the packed archive is malformed or a file exceeds `limits`.
    public static func lineCounts(_ metadata: ModelMetadata, graph: Graph, limits: Limits = .default) throws -> [String: Int] {
        let files = (metadata.outputs + metadata.inputs).flatMap(\.associatedFiles) + metadata.associatedFiles
        let labelFiles = files.filter { $0.type == .tensorAxisLabels || $0.type == .tensorValueLabels }
        guard !labelFiles.isEmpty,
              let archive = try ZipArchive(graph.associatedFilesBytes, maxFileBytes: limits.maxAssociatedFileBytes) else { return [:] }
        var counts: [String: Int] = [:]
        for file in labelFiles {
            guard let bytes = try archive.contents(of: file.name) else { continue }
            counts[file.name] = Labels(fileContents: String(decoding: bytes, as: UTF8.self)).names.count
        }
        return counts
    }

    /// The lines of the packed file `name`, or nil when the model packs no such file.
    public static func lines(of name: String, graph: Graph, limits: Limits = .default) throws -> [String]? {
        guard let archive = try ZipArchive(graph.associatedFilesBytes, maxFileBytes: limits.maxAssociatedFileBytes),
              let bytes = try archive.contents(of: name) else { return nil }
        return Labels(fileContents: String(decoding: bytes, as: UTF8.self)).names
    }
}
