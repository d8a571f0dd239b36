import Foundation
import Tasks

/// An AutoML folder: the input up to its first 0xFF byte is `manifest.json`, the rest `dict.txt`.
/// The folder also holds `model.tflite`, a subfolder and a link pointing outside. The oracle is the
/// security rule: whatever the manifest says, an accepted model or labels path lies inside the folder.
nonisolated(unsafe) private let folder: String = {
    // tmpfs when there is one: on ext4, truncating and closing a file each time forces a write-back.
    let shm = URL(fileURLWithPath: "/dev/shm")
    let temporary = FileManager.default.isWritableFile(atPath: shm.path) ? shm : FileManager.default.temporaryDirectory
    let base = temporary.appendingPathComponent("swiftlite-fuzz-automl-\(getpid())")
    folderBase = base.path
    let outside = base.appendingPathComponent("outside"), inside = base.appendingPathComponent("folder")
    try! FileManager.default.createDirectory(at: inside.appendingPathComponent("sub"), withIntermediateDirectories: true)
    try! FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
    try! Data("secret\n".utf8).write(to: outside.appendingPathComponent("secret.txt"))
    try! Data().write(to: inside.appendingPathComponent("model.tflite"))
    try! Data("a\n".utf8).write(to: inside.appendingPathComponent("sub/labels.txt"))
    try? FileManager.default.createSymbolicLink(at: inside.appendingPathComponent("out"), withDestinationURL: outside)
    try? FileManager.default.createSymbolicLink(at: inside.appendingPathComponent("secret.txt"),
                                                withDestinationURL: outside.appendingPathComponent("secret.txt"))
    atexit { try? FileManager.default.removeItem(atPath: folderBase) }
    return inside.path
}()

/// The folder's parent, removed when libFuzzer exits.
nonisolated(unsafe) private var folderBase = ""

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAutoML(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    let split = bytes.firstIndex(of: 0xFF) ?? size
    let manifest = Data(bytes[0 ..< split]), dictionary = Data(bytes[min(split + 1, size)...])
    guard write(manifest, to: folder + "/manifest.json"), write(dictionary, to: folder + "/dict.txt") else { return 0 }
    guard let model = try? LocalModel(manifestFolder: folder) else { return 0 }
    for path in [model.modelPath, model.labelsPath].compactMap({ $0 }) {
        precondition(path.hasPrefix(folder + "/"), "the manifest escaped its folder: \(path)")
    }
    if let labels = model.labelsPath { _ = try? Labels(contentsOf: labels) }
    return 0
}

/// Replaces the file at `path` with `data` through POSIX calls: `Data.write(to:)` fsyncs on Linux,
/// which held this fuzzer to ~80 executions per second.
private func write(_ data: Data, to path: String) -> Bool {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    return data.withUnsafeBytes { raw in raw.count == 0 || Foundation.write(fd, raw.baseAddress, raw.count) == raw.count }
}
