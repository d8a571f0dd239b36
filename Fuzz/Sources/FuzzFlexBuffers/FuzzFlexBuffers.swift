@testable import Engine

/// FlexBuffer bytes → the root and everything reachable from it, through every accessor: each
/// either throws `FlexBufferError` or returns.
///
/// The walk visits each (slot, type) once: references may share data or form cycles (an empty
/// vector's distance may be 0), so a naive walk of a 100-byte buffer can take exponential time —
/// an earlier, unmemoised harness ran at a few hundred executions per second because of it. At
/// most 128 values are visited (custom options maps hold 10–20): libFuzzer rewards inputs that loop
/// longer, and a 1024-value cap kept the rate near 600 per second.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFlexBuffers(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    guard let root = try? FlexBuffer.root(bytes) else { return 0 }
    var visited = Set<Int>()
    walk(root, visited: &visited)
    return 0
}

private func walk(_ ref: FlexBufferReference, visited: inout Set<Int>) {
    guard visited.insert(ref.position << 8 | Int(ref.type.rawValue)).inserted, visited.count < 128 else { return }
    // The accessors that apply to the type, plus one that does not (its mismatch error): calling
    // all six on every node spent most of the time building error values (each one a malloc,
    // which AddressSanitizer records with a stack trace).
    switch ref.type {
    case .int, .indirectInt, .uint, .indirectUInt, .bool:
        _ = try? ref.int()
        _ = try? ref.uint()
        _ = try? ref.double()
        _ = try? ref.bool()
    case .float, .indirectFloat:
        _ = try? ref.double()
    case .string, .key:
        _ = try? ref.string()
    case .blob:
        _ = try? ref.blob()
    default:
        _ = try? ref.int()
    }
    if let map = try? ref.map() {
        for i in 0 ..< map.count {
            if let key = try? map.key(at: i) { _ = try? map.value(forKey: key) }
            if let value = try? map.values.element(at: i) { walk(value, visited: &visited) }
        }
    } else if let vector = try? ref.vector() {
        for i in 0 ..< vector.count {
            if let element = try? vector.element(at: i) { walk(element, visited: &visited) }
        }
    }
}
