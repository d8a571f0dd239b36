import CX86Intrinsics

/// An elementwise operator from one 8-bit type to another (uint8 or int8), evaluated through a
/// 256-entry table filled at prepare time by running the exact integer (or float) arithmetic of
/// TFLite's kernel on every possible input. Eval is one look-up per element, so the table is as
/// bit-exact as the function that filled it.
///
/// Used by the quantized RELU family, LEAKY_RELU, HARD_SWISH, LOGISTIC, TANH, the 8-bit
/// requantizing QUANTIZE, and ADD, SUB and MUL of a one-element constant (`binary`). A table that
/// only adds a constant to every byte (the converter's uint8 ↔ int8 QUANTIZE of a model's input
/// or output: `x ± 128` at equal scales) is applied as that addition, which vectorizes; other
/// tables by byte shuffles where the CPU has them (`ByteLookup`). Threads take ranges of the
/// elements.
struct ByteLookupKernel: PartitionedKernel {
    /// Output bit patterns, indexed by the input's bit pattern (`UInt8(truncatingIfNeeded: x)`).
    let table: PackedBuffer<UInt8>
    /// `c` where every entry is `x &+ c` (the table is then not read).
    let offset: UInt8?
    let count: Int
    let input: Int, output: Int

    /// Fills the table with `f(x)` for every value `x` of the input type `In`; `f` returns a value
    /// already inside the output type's range, whose low byte is stored.
    ///
    /// Example: `In = Int8`, `f = { $0 + 128 }` (int8 → uint8 with the same scale) maps the
    /// input byte `0x80` (−128) to `0x00`.
    init<In: FixedWidthInteger>(_: In.Type, count: Int, input: Int, output: Int, _ f: (Int32) -> Int32) {
        precondition(In.bitWidth == 8, "byte tables take 8-bit inputs")
        var bytes = [UInt8](repeating: 0, count: 256)
        for value in Int32(In.min) ... Int32(In.max) {
            bytes[Int(UInt8(truncatingIfNeeded: value))] = UInt8(truncatingIfNeeded: f(value))
        }
        self.init(bytes: bytes, count: count, input: input, output: output)
    }

    /// Uses a ready table of 8-bit values (such as `ActivationLookupTable` builds), already
    /// indexed by the input's bit pattern.
    init<T: FixedWidthInteger>(table values: [T], count: Int, input: Int, output: Int) {
        precondition(T.bitWidth == 8 && values.count == 256, "byte tables have 256 8-bit entries")
        self.init(bytes: values.map { UInt8(truncatingIfNeeded: $0) }, count: count, input: input, output: output)
    }

    /// An 8-bit binary operator (`f`, its reference arithmetic on one pair of elements) of which
    /// one operand is a constant of one element, as a table over the other operand's bytes:
    /// `f(x, c)`, or `f(c, x)` where the constant is the left operand. A single value broadcast
    /// leaves the other operand's elements in their order, so the output is the table applied
    /// to them. Nil unless one operand is such a constant of type `T` and the other has the
    /// output's `outputCount` elements.
    static func binary<T: FixedWidthInteger>(_: T.Type, lhs: TensorDescriptor, rhs: TensorDescriptor, output: Int, outputCount: Int,
                                             _ f: (T, T) -> T) -> ByteLookupKernel? {
        precondition(T.bitWidth == 8, "byte tables take 8-bit operands")
        for (constant, other, constantFirst) in [(lhs, rhs, true), (rhs, lhs, false)] {
            guard constant.elementCount == 1, constant.dataType == other.dataType, other.elementCount == outputCount,
                  !other.isConstant, let data = constant.constantData, data.bytes.count == 1 else { continue }
            let c = T(truncatingIfNeeded: data.bytes[0])
            let table = (0 ..< 256).map { byte in
                let x = T(truncatingIfNeeded: byte)
                return constantFirst ? f(c, x) : f(x, c)
            }
            return ByteLookupKernel(table: table, count: outputCount, input: other.index, output: output)
        }
        return nil
    }

    /// `first` then `second`, where `second` reads only `first`'s output and nothing else does
    /// (`readers`: per tensor, the operators that read it, plus one for a graph output): one
    /// table, `second.table[first.table[x]]` for every byte `x`. Nil otherwise.
    static func composed(_ first: ByteLookupKernel, _ second: ByteLookupKernel, readers: [Int]) -> ByteLookupKernel? {
        guard second.input == first.output, readers[first.output] == 1, second.count == first.count else { return nil }
        let bytes = (0 ..< 256).map { second.table.pointer[Int(first.table.pointer[$0])] }
        return ByteLookupKernel(bytes: bytes, count: first.count, input: first.input, output: second.output)
    }

    private init(bytes: [UInt8], count: Int, input: Int, output: Int) {
        table = PackedBuffer(bytes)
        let c = bytes[0]
        offset = bytes.indices.allSatisfy { bytes[$0] == UInt8(truncatingIfNeeded: $0) &+ c } ? c : nil
        self.count = count
        self.input = input
        self.output = output
    }

    /// The work of one table look-up in the units `TensorMemory.parallelize` counts (a
    /// convolution's multiply-adds): a scalar load and store per element, where the vector units
    /// do 16 multiply-adds. An addition, vectorized, counts 1. (Quantized MUL counts its elements
    /// in it too.)
    static let lookupWork = 16

    func eval(_ memory: TensorMemory) {
        let work = offset == nil ? count * ByteLookup.fastest.elementWork : count
        memory.parallelize(self, count: count, granularity: 64, work: work)
    }

    func evalPart(_ range: Range<Int>, step: Int, worker: Int, memory: TensorMemory) {
        let x = memory.input(input, as: UInt8.self) + range.lowerBound, y = memory.output(output, as: UInt8.self) + range.lowerBound
        if let offset {
            for i in 0 ..< range.count { y[i] = x[i] &+ offset }
        } else {
            ByteLookup.fastest.apply(table.pointer, x, y, count: range.count)
        }
    }
}

/// How a 256-entry byte table is applied to a run of bytes, `y[i] = table[x[i]]`: the same bytes
/// every way, chosen once for the machine (`fastest`).
enum ByteLookup: CaseIterable {
    /// 64 bytes a step, two `vpermt2b` over the table's halves and a blend (AVX-512 VBMI).
    case vbmi
    /// 32 bytes a step, a `vpshufb` per 16-byte row of the table and a tree of blends (AVX2).
    case avx2
    /// One load and one store per byte.
    case scalar

    /// The first of `vbmi`, `avx2`, `scalar` that this machine runs. `vbmi` follows the AVX-512
    /// kernels (`KernelSelection.runsAVX512`), so that `SWIFTLITE_KERNELS=avx2` holds this to
    /// AVX2 as well.
    static let fastest: ByteLookup = allCases.first { $0.runsHere }!

    /// Whether this machine runs this form.
    var runsHere: Bool {
        switch self {
        #if arch(x86_64)
        case .vbmi: KernelSelection.runsAVX512 && swiftlite_cpu_runs_vbmi_lookup() != 0
        case .avx2: swiftlite_cpu_runs_avx2_lookup() != 0
        #else
        case .vbmi, .avx2: false
        #endif
        case .scalar: true
        }
    }

    /// A look-up's work in `TensorMemory.parallelize`'s units: `ByteLookupKernel.lookupWork` for
    /// the scalar loop; VBMI's 64 bytes a step cost about what a vector addition does per byte,
    /// AVX2's 32 bytes a step (16 shuffles, 15 blends) a bit less than half the scalar loop.
    var elementWork: Int {
        switch self {
        case .vbmi: 1
        case .avx2: ByteLookupKernel.lookupWork / 2
        case .scalar: ByteLookupKernel.lookupWork
        }
    }

    /// `y[i] = table[x[i]]` for `i < count`; `table` holds 256 bytes. Only where `runsHere`.
    func apply(_ table: UnsafePointer<UInt8>, _ x: UnsafePointer<UInt8>, _ y: UnsafeMutablePointer<UInt8>, count: Int) {
        switch self {
        #if arch(x86_64)
        case .vbmi: swiftlite_lookup_bytes_vbmi(table, x, y, count)
        case .avx2: swiftlite_lookup_bytes_avx2(table, x, y, count)
        #else
        case .vbmi, .avx2: preconditionFailure("no vector byte look-up on this architecture")
        #endif
        case .scalar:
            for i in 0 ..< count { y[i] = table[Int(x[i])] }
        }
    }
}

extension PrepareContext {
    /// The common checks of an 8-bit elementwise operator: input and output have the same type
    /// (uint8 or int8) and per-tensor quantization. Returns both quantizations.
    func unaryQuantized(input inputSlot: Int = 0, output outputSlot: Int = 0) throws(ModelError)
        -> (input: TensorDescriptor, inputQ: AffineQuantization, output: TensorDescriptor, outputQ: AffineQuantization) {
        let input = try input(inputSlot), output = try output(outputSlot)
        try expect(input, is: .uint8, .int8, role: "input")
        guard output.dataType == input.dataType else {
            throw invalid("output '\(output.name)' has type \(output.dataType), the input \(input.dataType)")
        }
        return (input, try affineQuantization(of: input, role: "input"),
                output, try affineQuantization(of: output, role: "output"))
    }

    /// A `ByteLookupKernel` over node input/output slot 0, filled by `f`, for the input's type.
    func byteLookupKernel(_ input: TensorDescriptor, _ f: (Int32) -> Int32) -> ByteLookupKernel {
        let (i, o) = (node.inputs[0], node.outputs[0])
        if input.dataType == .int8 { return ByteLookupKernel(Int8.self, count: input.elementCount, input: i, output: o, f) }
        return ByteLookupKernel(UInt8.self, count: input.elementCount, input: i, output: o, f)
    }
}

/// `f(x)` for every value `x` of the 8-bit type `In`, indexed by the bit pattern of `x`: the
/// per-operand half of a two-operand kernel (ADD and SUB rescale each operand on its own).
func byteIndexedTable<In: FixedWidthInteger>(_: In.Type, _ f: (Int32) -> Int32) -> PackedBuffer<Int32> {
    precondition(In.bitWidth == 8, "byte tables take 8-bit inputs")
    let table = PackedBuffer<Int32>(count: 256, initializedTo: 0)
    for value in Int32(In.min) ... Int32(In.max) {
        table.pointer[Int(UInt8(truncatingIfNeeded: value))] = f(value)
    }
    return table
}

/// An 8-bit convolution that applies the table of the table operator after it to its output
/// (`OutputTable`), writing that operator's output.
protocol AppliesOutputTable: Kernel {
    /// The tensor written: the convolution's output, or the fused table operator's.
    var output: Int { get set }
    /// The fused table operator's table.
    var outputTable: OutputTable? { get set }
    /// Elements of the convolution's output.
    var outputCount: Int { get }
}

extension AppliesOutputTable {
    /// This convolution followed by the table operator `table` that reads its output, writing
    /// the table operator's output; nil where `table` does not read this output.
    func followed(by table: ByteLookupKernel) -> Self? {
        guard outputTable == nil, let outputTable = OutputTable(table, reading: output, count: outputCount) else { return nil }
        var fused = self
        fused.outputTable = outputTable
        fused.output = table.output
        return fused
    }
}

/// An 8-bit table operator's table applied by the quantized convolution before it to each part
/// of its output as soon as that part is computed (`Plan` fuses the two where the table operator
/// alone reads the convolution's output: LOGISTIC, HARD_SWISH, a swish's LOGISTIC and MUL). The
/// bytes are those of the table operator run after the convolution; the part is still in the
/// core's cache, and the convolution's own output is never written.
struct OutputTable: Sendable {
    let table: PackedBuffer<UInt8>

    /// The table operator `table` where it reads `output`, `count` elements: nil otherwise.
    init?(_ table: ByteLookupKernel, reading output: Int, count: Int) {
        guard table.input == output, table.count == count else { return nil }
        self.table = table.table
    }

    /// `rows` runs of `width` bytes, `stride` apart from `start`, through the table in place.
    func apply(_ start: UnsafeMutablePointer<UInt8>, rows: Int, width: Int, stride: Int) {
        guard width > 0 else { return }
        if width == stride {
            ByteLookup.fastest.apply(table.pointer, start, start, count: rows * width)
            return
        }
        for r in 0 ..< rows {
            let run = start + r * stride
            ByteLookup.fastest.apply(table.pointer, run, run, count: width)
        }
    }
}
