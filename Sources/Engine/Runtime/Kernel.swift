/// A prepared operator: validated, shapes known, constants packed. `eval` only computes.
///
/// Kernels are immutable and shared by every `Session` of a `Plan`, so they hold no per-run state;
/// per-run memory comes from `TensorMemory` (tensors and a scratch area sized at prepare time).
protocol Kernel: Sendable {
    func eval(_ memory: TensorMemory)
}

/// The memory of one session as kernels see it: an address per tensor and a scratch area.
///
/// Addresses are typed by the caller; prepare has checked each tensor's type and size, so the
/// accessors do no checking of their own.
struct TensorMemory {
    let addresses: UnsafePointer<UnsafeMutableRawPointer>
    let scratch: UnsafeMutableRawPointer

    @inline(__always)
    func input<T>(_ tensor: Int, as type: T.Type = T.self) -> UnsafePointer<T> {
        UnsafePointer(addresses[tensor].assumingMemoryBound(to: T.self))
    }

    @inline(__always)
    func output<T>(_ tensor: Int, as type: T.Type = T.self) -> UnsafeMutablePointer<T> {
        addresses[tensor].assumingMemoryBound(to: T.self)
    }

    @inline(__always)
    func raw(_ tensor: Int) -> UnsafeMutableRawPointer { addresses[tensor] }

    @inline(__always)
    func scratch<T>(as type: T.Type, offset: Int = 0) -> UnsafeMutablePointer<T> {
        (scratch + offset).assumingMemoryBound(to: T.self)
    }
}
