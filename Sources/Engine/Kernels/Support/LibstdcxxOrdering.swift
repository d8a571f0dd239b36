/// The orderings LiteRT's `TFLite_Detection_PostProcess` gets from the C++ standard library, as
/// libstdc++ produces them (the detection `*_ties` goldens confirm LiteRT's order is this one). Which of several equal
/// scores comes first decides which box a detector reports, so these reproduce the library's
/// results for ties too, not only a sorted order:
///
/// - `stableSortDescending`: `std::stable_sort` with `values[a] > values[b]` on values without
///   NaN (the scores that pass a `>=` threshold): any stable sort gives this order (equal values
///   keep index order);
/// - `mergeDescending`: `std::inplace_merge` with `a.score > b.score`: stable, first-run entries
///   ahead of equal second-run ones;
/// - `partialSortDescending`: `std::partial_sort` with `values[a] > values[b]`: *not* stable; its
///   tie order is that of libstdc++'s heap (`__heap_select`, then `__sort_heap`), replicated step
///   by step.
///
/// `Tests/EngineTests/LibstdcxxOrderingTests.swift` checks all three against orderings printed
/// by libstdc++ itself (`Tests/Goldens/make_libstdcxx_orderings.cpp`).
enum LibstdcxxOrdering {
    /// Writes `0..<count` to `order`, sorted by decreasing `values`, none of which is NaN; equal
    /// values keep index order (the result of a stable sort: `>` is a strict weak order on them,
    /// so every stable sort gives this one). A least-significant-digit radix sort (a stable
    /// counting pass per byte) of keys that order as the values do, descending: linear in
    /// `count`, with no data-dependent branch (a merge sort's mispredict on nearly every
    /// comparison of a detector's scores). Both zeros get the key of +0 (they compare equal). `temp` holds `count`
    /// slots, `keys` `2 · count`, `histogram` 256.
    ///
    /// Example: values `[1, 3, 3, −0, 0, 2]` → order `[1, 2, 5, 0, 3, 4]`.
    static func stableSortDescending(_ order: UnsafeMutablePointer<Int32>, count: Int, by values: UnsafePointer<Float>,
                                     temp: UnsafeMutablePointer<Int32>, keys: UnsafeMutablePointer<UInt32>,
                                     histogram: UnsafeMutablePointer<Int>) {
        var sourceKeys = keys, targetKeys = keys + count
        var source = order, target = temp
        for i in 0 ..< count {
            let bits = (values[i] == 0 ? 0 : values[i]).bitPattern
            // Larger values get smaller keys: the ascending order of the bits, inverted.
            let ascending = bits & 0x8000_0000 != 0 ? ~bits : bits | 0x8000_0000
            sourceKeys[i] = ~ascending
            order[i] = Int32(i)
        }
        for shift in stride(from: 0, to: 32, by: 8) {
            histogram.update(repeating: 0, count: 256)
            for i in 0 ..< count { histogram[Int(sourceKeys[i] >> UInt32(shift) & 0xFF)] += 1 }
            // A byte every key shares leaves the order as it is.
            if UnsafeBufferPointer(start: histogram, count: 256).contains(count) { continue }
            var start = 0
            for digit in 0 ..< 256 { (histogram[digit], start) = (start, start + histogram[digit]) }
            for i in 0 ..< count {
                let digit = Int(sourceKeys[i] >> UInt32(shift) & 0xFF)
                let slot = histogram[digit]
                histogram[digit] = slot + 1
                targetKeys[slot] = sourceKeys[i]
                target[slot] = source[i]
            }
            swap(&sourceKeys, &targetKeys)
            swap(&source, &target)
        }
        if source != order { order.update(from: source, count: count) }
    }

    /// Merges the two runs `elements[0..<firstCount]` and the `secondCount` after it, each sorted
    /// by decreasing `score`, keeping first-run entries ahead of equal second-run ones
    /// (`std::inplace_merge`). Only the first run is copied to `temp`, so it needs `firstCount` slots.
    ///
    /// Example: scores `[5, 3 | 4, 3]` → `[5, 4, 3 (first run), 3 (second run)]`.
    @inline(__always)
    static func mergeDescending<Element>(_ elements: UnsafeMutablePointer<Element>, firstCount: Int, secondCount: Int,
                                         temp: UnsafeMutablePointer<Element>, score: (Element) -> Float) {
        temp.update(from: elements, count: firstCount)
        var i = 0, j = firstCount, out = 0
        let end = firstCount + secondCount
        while i < firstCount, j < end {
            if score(elements[j]) > score(temp[i]) {
                elements[out] = elements[j]; j += 1
            } else {
                elements[out] = temp[i]; i += 1
            }
            out += 1
        }
        while i < firstCount { elements[out] = temp[i]; i += 1; out += 1 }
        // Remaining second-run entries are already in place.
    }

    /// Reorders `order[0..<count]` so that its first `prefix` entries index the largest `values`,
    /// largest first, by libstdc++'s `std::partial_sort` algorithm with the comparison
    /// `values[a] > values[b]`: make a heap of the first `prefix` entries (`__make_heap`), swap
    /// every later entry that beats the heap top into it (`__heap_select`), then pop the heap
    /// into sorted order (`__sort_heap`). Any other algorithm would order equal values differently.
    ///
    /// Example: values `[1, 1, 1, 1]`, prefix 4 → order `[1, 3, 0, 2]` (a stable sort gives `[0, 1, 2, 3]`).
    static func partialSortDescending(_ order: UnsafeMutablePointer<Int32>, count: Int, prefix: Int, by values: UnsafePointer<Float>) {
        @inline(__always) func before(_ a: Int32, _ b: Int32) -> Bool { values[Int(a)] > values[Int(b)] }

        /// Sifts the hole at `hole` down to a leaf, then pushes `value` back up (`__adjust_heap`).
        func adjust(_ hole: Int, _ length: Int, _ value: Int32) {
            let top = hole
            var hole = hole, child = hole
            while child < (length - 1) / 2 {
                child = 2 * (child + 1)
                if before(order[child], order[child - 1]) { child -= 1 }
                order[hole] = order[child]
                hole = child
            }
            if length & 1 == 0, child == (length - 2) / 2 {
                child = 2 * (child + 1)
                order[hole] = order[child - 1]
                hole = child - 1
            }
            var parent = (hole - 1) / 2
            while hole > top, before(order[parent], value) {
                order[hole] = order[parent]
                hole = parent
                parent = (hole - 1) / 2
            }
            order[hole] = value
        }

        /// Moves the heap top to `result` and re-heaps `order[0..<length]` with the old `order[result]`.
        func pop(_ length: Int, _ result: Int) {
            let value = order[result]
            order[result] = order[0]
            adjust(0, length, value)
        }

        if prefix >= 2 {
            var parent = (prefix - 2) / 2
            while true {
                adjust(parent, prefix, order[parent])
                if parent == 0 { break }
                parent -= 1
            }
        }
        for i in prefix ..< max(count, prefix) where before(order[i], order[0]) { pop(prefix, i) }
        var last = prefix
        while last > 1 {
            last -= 1
            pop(last, last)
        }
    }
}
