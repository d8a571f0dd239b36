/// Memory that a kernel fills at prepare time (packed weights, folded biases) and only reads
/// afterwards, so it can be shared by every session of a plan. Elements are trivial types.
final class PackedBuffer<Element>: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<Element>
    let count: Int
    /// Set by `discard` (only while a plan is being built, before it is shared).
    private var isDiscarded = false

    init(count: Int, initializedTo value: Element) {
        self.count = count
        pointer = .allocate(capacity: max(count, 1))
        pointer.initialize(repeating: value, count: max(count, 1))
    }

    init<C: Collection>(_ values: C) where C.Element == Element {
        count = values.count
        pointer = .allocate(capacity: max(count, 1))
        _ = UnsafeMutableBufferPointer(start: pointer, count: count).initialize(from: values)
    }

    deinit { if !isDiscarded { pointer.deallocate() } }

    /// Frees the memory early; `pointer` must not be read afterwards.
    func discard() {
        guard !isDiscarded else { return }
        isDiscarded = true
        pointer.deallocate()
    }

    var buffer: UnsafeBufferPointer<Element> { UnsafeBufferPointer(start: pointer, count: count) }
}
