/// Sparse constant tensors (the schema's `SparsityParameters`), densified once at load so that
/// every kernel sees ordinary dense constants.
///
/// A sparse tensor keeps its dense `shape`; its buffer holds only the stored values, in the
/// order of a traversal described by:
///
/// - `block_map` — for each of `k` block dimensions, the original dimension it blocks;
/// - `traversal_order` — a permutation of the `n + k` expanded dimensions (the `n` original
///   dimensions, each divided by its block size, then the block dimensions), outermost first;
///   the first `n` entries must be original dimensions, as TFLite's converter requires;
/// - `dim_metadata` — one entry per traversal level: `DENSE` with its size, or `SPARSE_CSR` with
///   `array_segments` (for each position of the previous level, where its run of indices
///   starts; one more entry than there are positions) and `array_indices` (int32, uint16 or
///   uint8 coordinates along this level).
///
/// A 4×4 matrix with 2×2 blocks, two of them non-zero, has `traversal_order [0, 1, 2, 3]`,
/// `block_map [0, 1]`, metadata `[DENSE 2, CSR segments [0, 1, 2] indices [0, 1], DENSE 2,
/// DENSE 2]` and 8 values. Densifying walks the levels as TFLite's `FormatConverter` does;
/// every index, segment and size is checked first, so a malformed tensor is a
/// `ModelError.invalidTensor` naming the rule it breaks, never an out-of-bounds access.
enum Sparsity {
    enum Format: Sendable, Equatable { case dense, sparseCSR }

    /// One traversal level.
    struct Level: Sendable, Equatable {
        var format: Format
        var denseSize: Int
        var segments: [Int]
        var indices: [Int]
    }

    /// The parameters as read from the flatbuffer, before validation.
    struct Parameters: Sendable, Equatable {
        var traversalOrder: [Int]
        var blockMap: [Int]
        var levels: [Level]
    }

    /// Reads the tensor's `sparsity` table (schema field 6 of `Tensor`).
    static func parameters(_ table: Table) throws -> Parameters {
        let traversal = try table.vector(0)?.integers(Int32.self) ?? []
        let blockMap = try table.vector(1)?.integers(Int32.self) ?? []
        let levels = try (table.vector(2)?.tables() ?? []).enumerated().map { i, t in
            let format: Format
            switch try t.scalar(0, default: Int8(0)) {
            case 0: format = .dense
            case 1: format = .sparseCSR
            case let code: throw ModelError.malformed("dim_metadata[\(i)] has unknown format \(code)")
            }
            return Level(format: format, denseSize: Int(try t.scalar(1, default: Int32(0))),
                         segments: try indexVector(t, typeSlot: 2, valueSlot: 3, level: i, role: "array_segments"),
                         indices: try indexVector(t, typeSlot: 4, valueSlot: 5, level: i, role: "array_indices"))
        }
        return Parameters(traversalOrder: traversal, blockMap: blockMap, levels: levels)
    }

    /// A `SparseIndexVector` union: 1 = Int32Vector, 2 = Uint16Vector, 3 = Uint8Vector, each a
    /// table whose field 0 is the vector; absent is empty.
    private static func indexVector(_ t: Table, typeSlot: Int, valueSlot: Int, level: Int, role: String) throws -> [Int] {
        let kind = try t.scalar(typeSlot, default: UInt8(0))
        guard kind != 0 else { return [] }
        guard let value = try t.table(valueSlot) else { throw ModelError.malformed("dim_metadata[\(level)].\(role) is declared but missing") }
        switch kind {
        case 1: return try value.vector(0)?.integers(Int32.self) ?? []
        case 2: return try value.vector(0)?.integers(UInt16.self) ?? []
        case 3: return try value.vector(0)?.integers(UInt8.self) ?? []
        default: throw ModelError.malformed("dim_metadata[\(level)].\(role) has unknown index vector type \(kind)")
        }
    }

    /// Parameters checked against a dense shape and a buffer (`validate`): what `densify` walks.
    struct Layout {
        let parameters: Parameters
        let shape: [Int]
        let elementSize: Int
        /// Each original dimension's block size (1 where it has no block dimension).
        let blockSize: [Int]
        /// The stored values: the positions of the last traversal level.
        let positions: Int
    }

    /// Checks every size, index and segment of `p` against `shape` and a buffer of
    /// `valueBytes` bytes (`elementSize` per stored value), before anything is allocated.
    ///
    /// - Throws: a message naming the rule a malformed parameter breaks (the caller wraps it
    ///   with the tensor's index and name).
    static func validate(_ p: Parameters, shape: [Int], elementSize: Int, valueBytes: Int) throws(SparsityError) -> Layout {
        let n = shape.count, k = p.blockMap.count, levels = n + k
        guard p.traversalOrder.count == levels, Set(p.traversalOrder) == Set(0 ..< levels) else {
            throw SparsityError("traversal_order \(p.traversalOrder) is not a permutation of the \(levels) expanded dimensions (rank \(n), \(k) blocks)")
        }
        guard p.traversalOrder.prefix(n).allSatisfy({ $0 < n }) else {
            throw SparsityError("traversal_order \(p.traversalOrder) must list the \(n) original dimensions before the block dimensions")
        }
        guard p.blockMap.allSatisfy({ (0 ..< n).contains($0) }), Set(p.blockMap).count == k else {
            throw SparsityError("block_map \(p.blockMap) must name distinct dimensions of the rank-\(n) shape \(shape)")
        }
        guard p.levels.count == levels else {
            throw SparsityError("dim_metadata has \(p.levels.count) entries, traversal_order \(levels)")
        }
        // Block sizes come from the metadata of the block dimensions, which must be dense.
        var blockSize = [Int](repeating: 1, count: n)
        for j in 0 ..< k {
            let level = p.levels[p.traversalOrder.firstIndex(of: n + j)!]
            guard level.format == .dense, level.denseSize >= 1, shape[p.blockMap[j]] % level.denseSize == 0 else {
                throw SparsityError("block dimension \(j) (of dimension \(p.blockMap[j]), size \(shape[p.blockMap[j]])) must be DENSE with a size ≥ 1 that divides it, got \(level.format) \(level.denseSize)")
            }
            blockSize[p.blockMap[j]] = level.denseSize
        }
        // The size of every expanded dimension, and the number of positions per level.
        let expanded = (0 ..< levels).map { d in d < n ? shape[d] / blockSize[d] : p.levels[p.traversalOrder.firstIndex(of: d)!].denseSize }
        var positions = 1
        for (level, entry) in p.levels.enumerated() {
            let size = expanded[p.traversalOrder[level]]
            switch entry.format {
            case .dense:
                guard entry.denseSize == size else {
                    throw SparsityError("dim_metadata[\(level)] is DENSE of size \(entry.denseSize), its dimension has \(size)")
                }
                let (product, overflow) = positions.multipliedReportingOverflow(by: size)
                guard !overflow, product <= maxTensorBytes else { throw SparsityError("dim_metadata[\(level)] makes too many positions") }
                positions = product
            case .sparseCSR:
                let s = entry.segments
                guard s.count == positions + 1, s.first == 0 else {
                    throw SparsityError("dim_metadata[\(level)].array_segments has \(s.count) entries starting at \(s.first.map(String.init) ?? "none"), expected \(positions + 1) starting at 0")
                }
                for i in 0 ..< positions where s[i] > s[i + 1] {
                    throw SparsityError("dim_metadata[\(level)].array_segments decrease at entry \(i) (\(s[i]) > \(s[i + 1]))")
                }
                guard s[positions] == entry.indices.count else {
                    throw SparsityError("dim_metadata[\(level)].array_segments end at \(s[positions]), there are \(entry.indices.count) array_indices")
                }
                if let bad = entry.indices.first(where: { $0 < 0 || $0 >= size }) {
                    throw SparsityError("dim_metadata[\(level)].array_indices holds \(bad), outside its dimension of size \(size)")
                }
                positions = entry.indices.count
            }
        }
        guard valueBytes == positions * elementSize else {
            throw SparsityError("the buffer holds \(valueBytes) bytes, the sparsity parameters describe \(positions) values of \(elementSize) bytes")
        }
        return Layout(parameters: p, shape: shape, elementSize: elementSize, blockSize: blockSize, positions: positions)
    }

    /// The dense bytes of a sparse constant: `values` (the buffer `layout` was validated
    /// against) scattered into a zero-filled tensor of the layout's shape, written to
    /// `destination` (its element count × `elementSize` bytes).
    static func densify(_ layout: Layout, values: UnsafeRawBufferPointer, into destination: UnsafeMutableRawBufferPointer) {
        let p = layout.parameters, shape = layout.shape, elementSize = layout.elementSize, blockSize = layout.blockSize
        let n = shape.count, levels = n + p.blockMap.count
        destination.initializeMemory(as: UInt8.self, repeating: 0)
        var strides = [Int](repeating: 1, count: n)
        for d in (0 ..< n).dropLast().reversed() { strides[d] = strides[d + 1] * shape[d + 1] }
        // Walk the levels in traversal order, as TFLite's FormatConverter::Populate does.
        let levelOf = (0 ..< n).map { d in p.traversalOrder.firstIndex(of: d)! }
        let blockLevelOf: [Int?] = (0 ..< n).map { d in p.blockMap.firstIndex(of: d).map { p.traversalOrder.firstIndex(of: n + $0)! } }
        var coordinate = [Int](repeating: 0, count: levels)
        var next = 0
        func visit(_ level: Int, _ position: Int) {
            if level == levels {
                var offset = 0
                for d in 0 ..< n {
                    var index = coordinate[levelOf[d]]
                    if let i = blockLevelOf[d] { index = index * blockSize[d] + coordinate[i] }
                    offset += index * strides[d]
                }
                (destination.baseAddress! + offset * elementSize).copyMemory(from: values.baseAddress! + next * elementSize, byteCount: elementSize)
                next += 1
                return
            }
            let entry = p.levels[level]
            switch entry.format {
            case .dense:
                for i in 0 ..< entry.denseSize {
                    coordinate[level] = i
                    visit(level + 1, position * entry.denseSize + i)
                }
            case .sparseCSR:
                for i in entry.segments[position] ..< entry.segments[position + 1] {
                    coordinate[level] = entry.indices[i]
                    visit(level + 1, i)
                }
            }
        }
        if layout.positions > 0 { visit(0, 0) }
    }
}

/// Why a sparse tensor's parameters are invalid (wrapped into `ModelError.invalidTensor`).
struct SparsityError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension Graph {
    /// What a model's sparse tensors may densify to, all together: 64 times the file's bytes, at
    /// least 64 MiB. A sparse tensor stores its kept blocks, so its dense form outgrows the file
    /// by its sparsity (a few times for pruned weights); an outer CSR level with no entries lets
    /// a few hundred bytes declare gigabytes of zeros.
    struct DensifyBudget {
        let limit: Int
        var remaining: Int

        init(fileBytes: Int) {
            let (scaled, overflow) = fileBytes.multipliedReportingOverflow(by: 64)
            limit = max(64 << 20, overflow ? Int.max : scaled)
            remaining = limit
        }
    }

    /// The dense constant of sparse tensor `t` (index `index`), whose stored values are `data`,
    /// validated before its memory is taken from `budget`.
    static func densifiedConstant(_ t: SchemaTensor, sparsity: Table, index: Int, name: String, type: DataType, shape: [Int],
                                  data: ConstantData?, budget: inout DensifyBudget, copies: AlignedCopies) throws -> ConstantData {
        func fail(_ reason: String) -> ModelError { .invalidTensor(index: index, name: name, reason: "sparse tensor: \(reason)") }
        guard let size = type.byteSize, type != .string else { throw fail("element type \(type) cannot be sparse") }
        guard let data else { throw fail("has no constant data (only constants may be sparse)") }
        let parameters: Sparsity.Parameters
        do { parameters = try Sparsity.parameters(sparsity) } catch let error as ModelError { throw fail("\(error)") }
        let layout: Sparsity.Layout
        do {
            layout = try Sparsity.validate(parameters, shape: shape, elementSize: size, valueBytes: data.bytes.count)
        } catch {
            throw fail(error.description)
        }
        let bytes = shape.reduce(1, *) * size
        guard bytes <= budget.remaining else {
            throw fail("its dense shape \(shape) needs \(bytes) bytes; a model's sparse tensors may densify to \(budget.limit) bytes in all (64 × the file, at least 64 MiB)")
        }
        budget.remaining -= bytes
        let destination = copies.allocate(byteCount: bytes)
        Sparsity.densify(layout, values: data.bytes, into: destination)
        return ConstantData(bytes: UnsafeRawBufferPointer(destination))
    }
}
