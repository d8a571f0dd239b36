@testable import Engine
import Foundation

/// `.npy` bytes → `NumpyArray`: a `FormatError`, or an array whose data matches its shape, whose
/// floats can be read and which writes and re-reads to itself.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzNumpy(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard let array = try? NumpyArray(npy: Data(bytes: data, count: size)) else { return 0 }
    _ = array.floats()
    guard let again = try? NumpyArray(npy: array.npyData()) else { preconditionFailure("npyData() does not read back") }
    precondition(again == array, "npyData() round trip changed the array")
    return 0
}
