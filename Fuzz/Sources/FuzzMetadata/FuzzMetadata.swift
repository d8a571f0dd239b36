import Engine
import Foundation
@testable import Tasks

/// Bytes as a TFLite Metadata flatbuffer and, independently, as a zip archive (a model with its
/// associated files appended): parsing either throws or returns, and every packed file inflates
/// within the limit.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMetadata(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    if let metadata = try? ModelMetadata(bytes: bytes) {
        _ = metadata.inputs.count + metadata.outputs.count + metadata.associatedFiles.count
    }
    let limit = 1 << 20
    guard let archive = try? ZipArchive(bytes, maxFileBytes: limit) else { return 0 }
    for entry in archive.entries.prefix(16) {
        if let contents = try? archive.contents(of: entry.name) {
            precondition(contents.count <= limit, "'\(entry.name)' inflated past the limit")
        }
    }
    return 0
}
