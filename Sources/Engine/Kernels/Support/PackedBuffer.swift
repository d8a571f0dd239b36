/// Memory that a kernel fills at prepare time (packed weights, folded biases) and only reads
/// afterwards, so it can be shared by every session of a plan. Elements are trivial types.
final class PackedBuffer<Element>: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<Element>
    let count: Int
    /// Where a buffer started as zeros came from (`ZeroedMemory`); nil: `pointer` was allocated here.
    private let zeroed: ZeroedMemory?
    /// Set by `discard` (only while a plan is being built, before it is shared).
    private var isDiscarded = false

    init(count: Int, initializedTo value: Element) {
        self.count = count
        let capacity = max(count, 1)
        if withUnsafeBytes(of: value, { $0.allSatisfy { $0 == 0 } }) {
            let memory = ZeroedMemory(byteCount: capacity * MemoryLayout<Element>.stride, alignment: MemoryLayout<Element>.alignment)
            zeroed = memory
            pointer = memory.pointer.bindMemory(to: Element.self, capacity: capacity)
        } else {
            zeroed = nil
            pointer = .allocate(capacity: capacity)
            pointer.initialize(repeating: value, count: capacity)
        }
    }

    init<C: Collection>(_ values: C) where C.Element == Element {
        count = values.count
        zeroed = nil
        pointer = .allocate(capacity: max(count, 1))
        _ = UnsafeMutableBufferPointer(start: pointer, count: count).initialize(from: values)
    }

    deinit { release() }

    /// Frees the memory early; `pointer` must not be read afterwards.
    func discard() {
        release()
    }

    private func release() {
        guard !isDiscarded else { return }
        isDiscarded = true
        if let zeroed { zeroed.deallocate() } else { pointer.deallocate() }
    }

    var buffer: UnsafeBufferPointer<Element> { UnsafeBufferPointer(start: pointer, count: count) }
}
