/// Memory that a kernel fills at prepare time (packed weights, folded biases) and only reads
/// afterwards, so it can be shared by every session of a plan. Elements are trivial types.
final class PackedBuffer<Element>: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<Element>
    let count: Int
    /// Where the memory came from, which `release` gives it back to.
    private let source: Source
    /// Set by `discard` (only while a plan is being built, before it is shared).
    private var isDiscarded = false

    private enum Source {
        /// Allocated here.
        case heap
        /// A buffer started as zeros, on its own (`ZeroedMemory`).
        case zeroed(ZeroedMemory)
        /// A buffer started as zeros, in the arena of the plan being prepared, which it keeps
        /// alive; its bytes go back with the arena's.
        case arena(PackingArena)
    }

    /// `count` copies of `value`. Zeros come from the current `PackingArena` (while a plan is
    /// prepared) unless `discardable`: a buffer the plan frees early (`discard`, a folded
    /// constant once packed) takes memory of its own, which the arena could not give back.
    init(count: Int, initializedTo value: Element, discardable: Bool = false) {
        self.count = count
        let capacity = max(count, 1)
        let bytes = capacity * MemoryLayout<Element>.stride, alignment = MemoryLayout<Element>.alignment
        if withUnsafeBytes(of: value, { $0.allSatisfy { $0 == 0 } }) {
            if !discardable, let arena = PackingArena.current, let memory = arena.allocate(byteCount: bytes, alignment: alignment) {
                source = .arena(arena)
                pointer = memory.bindMemory(to: Element.self, capacity: capacity)
            } else {
                let memory = ZeroedMemory(byteCount: bytes, alignment: alignment)
                source = .zeroed(memory)
                pointer = memory.pointer.bindMemory(to: Element.self, capacity: capacity)
            }
        } else {
            source = .heap
            pointer = .allocate(capacity: capacity)
            pointer.initialize(repeating: value, count: capacity)
        }
    }

    init<C: Collection>(_ values: C) where C.Element == Element {
        count = values.count
        source = .heap
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
        switch source {
        case .heap: pointer.deallocate()
        case .zeroed(let memory): memory.deallocate()
        case .arena: break
        }
    }

    var buffer: UnsafeBufferPointer<Element> { UnsafeBufferPointer(start: pointer, count: count) }
}
