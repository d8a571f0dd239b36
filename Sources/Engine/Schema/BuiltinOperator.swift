/// A TFLite builtin operator code (the schema's `BuiltinOperator` enum).
///
/// Kept open (a struct, not an enum) so that a model using an operator newer than this engine still
/// loads far enough to be inspected and to fail with a message that names the operator.
public struct BuiltinOperator: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The schema code (`BuiltinOperator` value in the flatbuffer), including codes this engine does not know.
    public let rawValue: Int32
    /// The operator with schema code `rawValue`; every value is accepted (unknown codes name themselves `BUILTIN_<code>`).
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// `ADD` (schema code 0).
    public static let add = Self(rawValue: 0)
    /// `AVERAGE_POOL_2D` (schema code 1).
    public static let averagePool2D = Self(rawValue: 1)
    /// `CONCATENATION` (schema code 2).
    public static let concatenation = Self(rawValue: 2)
    /// `CONV_2D` (schema code 3).
    public static let conv2D = Self(rawValue: 3)
    /// `DEPTHWISE_CONV_2D` (schema code 4).
    public static let depthwiseConv2D = Self(rawValue: 4)
    /// `DEQUANTIZE` (schema code 6).
    public static let dequantize = Self(rawValue: 6)
    /// `FULLY_CONNECTED` (schema code 9).
    public static let fullyConnected = Self(rawValue: 9)
    /// `LOGISTIC` (schema code 14).
    public static let logistic = Self(rawValue: 14)
    /// `MAX_POOL_2D` (schema code 17).
    public static let maxPool2D = Self(rawValue: 17)
    /// `MUL` (schema code 18).
    public static let mul = Self(rawValue: 18)
    /// `RELU` (schema code 19).
    public static let relu = Self(rawValue: 19)
    /// `RELU_N1_TO_1` (schema code 20).
    public static let reluN1To1 = Self(rawValue: 20)
    /// `RELU6` (schema code 21).
    public static let relu6 = Self(rawValue: 21)
    /// `RESHAPE` (schema code 22).
    public static let reshape = Self(rawValue: 22)
    /// `RESIZE_BILINEAR` (schema code 23).
    public static let resizeBilinear = Self(rawValue: 23)
    /// `SOFTMAX` (schema code 25).
    public static let softmax = Self(rawValue: 25)
    /// `TANH` (schema code 28).
    public static let tanh = Self(rawValue: 28)
    /// `CUSTOM` (schema code 32).
    public static let custom = Self(rawValue: 32)
    /// `PAD` (schema code 34).
    public static let pad = Self(rawValue: 34)
    /// `MEAN` (schema code 40).
    public static let mean = Self(rawValue: 40)
    /// `SUB` (schema code 41).
    public static let sub = Self(rawValue: 41)
    /// `SQUEEZE` (schema code 43).
    public static let squeeze = Self(rawValue: 43)
    /// `STRIDED_SLICE` (schema code 45).
    public static let stridedSlice = Self(rawValue: 45)
    /// `PADV2` (schema code 60).
    public static let padV2 = Self(rawValue: 60)
    /// `PACK` (schema code 83).
    public static let pack = Self(rawValue: 83)
    /// `RESIZE_NEAREST_NEIGHBOR` (schema code 97).
    public static let resizeNearestNeighbor = Self(rawValue: 97)
    /// `LEAKY_RELU` (schema code 98).
    public static let leakyRelu = Self(rawValue: 98)
    /// `QUANTIZE` (schema code 114).
    public static let quantize = Self(rawValue: 114)
    /// `HARD_SWISH` (schema code 117).
    public static let hardSwish = Self(rawValue: 117)
    /// `DEPTH_TO_SPACE` (schema code 5).
    public static let depthToSpace = Self(rawValue: 5)
    /// `SPACE_TO_DEPTH` (schema code 26).
    public static let spaceToDepth = Self(rawValue: 26)
    /// `GATHER` (schema code 36).
    public static let gather = Self(rawValue: 36)
    /// `TRANSPOSE` (schema code 39).
    public static let transpose = Self(rawValue: 39)
    /// `DIV` (schema code 42).
    public static let div = Self(rawValue: 42)
    /// `EXP` (schema code 47).
    public static let exp = Self(rawValue: 47)
    /// `SPLIT` (schema code 49).
    public static let split = Self(rawValue: 49)
    /// `CAST` (schema code 53).
    public static let cast = Self(rawValue: 53)
    /// `PRELU` (schema code 54).
    public static let prelu = Self(rawValue: 54)
    /// `MAXIMUM` (schema code 55).
    public static let maximum = Self(rawValue: 55)
    /// `ARG_MAX` (schema code 56).
    public static let argMax = Self(rawValue: 56)
    /// `MINIMUM` (schema code 57).
    public static let minimum = Self(rawValue: 57)
    /// `TRANSPOSE_CONV` (schema code 67).
    public static let transposeConv = Self(rawValue: 67)
    /// `SUM` (schema code 74).
    public static let sum = Self(rawValue: 74)
    /// `RSQRT` (schema code 76).
    public static let rsqrt = Self(rawValue: 76)
    /// `SHAPE` (schema code 77).
    public static let shape = Self(rawValue: 77)
    /// `ARG_MIN` (schema code 79).
    public static let argMin = Self(rawValue: 79)
    /// `REDUCE_PROD` (schema code 81).
    public static let reduceProd = Self(rawValue: 81)
    /// `REDUCE_MAX` (schema code 82).
    public static let reduceMax = Self(rawValue: 82)
    /// `SQUARED_DIFFERENCE` (schema code 99).
    public static let squaredDifference = Self(rawValue: 99)
    /// `MIRROR_PAD` (schema code 100).
    public static let mirrorPad = Self(rawValue: 100)
    /// `SPLIT_V` (schema code 102).
    public static let splitV = Self(rawValue: 102)
    /// `DENSIFY` (schema code 124).
    public static let densify = Self(rawValue: 124)
    /// `GELU` (schema code 150).
    public static let gelu = Self(rawValue: 150)

    /// The schema's name for the operator, e.g. `CONV_2D`.
    public var name: String {
        let index = Int(rawValue)
        return Self.names.indices.contains(index) ? Self.names[index] : "BUILTIN_\(rawValue)"
    }

    /// The schema name, as `name`.
    public var description: String { name }

    /// Names of schema codes 0 ... 161, in order.
    private static let names: [String] = """
        ADD AVERAGE_POOL_2D CONCATENATION CONV_2D DEPTHWISE_CONV_2D DEPTH_TO_SPACE DEQUANTIZE \
        EMBEDDING_LOOKUP FLOOR FULLY_CONNECTED HASHTABLE_LOOKUP L2_NORMALIZATION L2_POOL_2D \
        LOCAL_RESPONSE_NORMALIZATION LOGISTIC LSH_PROJECTION LSTM MAX_POOL_2D MUL RELU RELU_N1_TO_1 \
        RELU6 RESHAPE RESIZE_BILINEAR RNN SOFTMAX SPACE_TO_DEPTH SVDF TANH CONCAT_EMBEDDINGS SKIP_GRAM \
        CALL CUSTOM EMBEDDING_LOOKUP_SPARSE PAD UNIDIRECTIONAL_SEQUENCE_RNN GATHER BATCH_TO_SPACE_ND \
        SPACE_TO_BATCH_ND TRANSPOSE MEAN SUB DIV SQUEEZE UNIDIRECTIONAL_SEQUENCE_LSTM STRIDED_SLICE \
        BIDIRECTIONAL_SEQUENCE_RNN EXP TOPK_V2 SPLIT LOG_SOFTMAX DELEGATE BIDIRECTIONAL_SEQUENCE_LSTM \
        CAST PRELU MAXIMUM ARG_MAX MINIMUM LESS NEG PADV2 GREATER GREATER_EQUAL LESS_EQUAL SELECT SLICE \
        SIN TRANSPOSE_CONV SPARSE_TO_DENSE TILE EXPAND_DIMS EQUAL NOT_EQUAL LOG SUM SQRT RSQRT SHAPE POW \
        ARG_MIN FAKE_QUANT REDUCE_PROD REDUCE_MAX PACK LOGICAL_OR ONE_HOT LOGICAL_AND LOGICAL_NOT UNPACK \
        REDUCE_MIN FLOOR_DIV REDUCE_ANY SQUARE ZEROS_LIKE FILL FLOOR_MOD RANGE RESIZE_NEAREST_NEIGHBOR \
        LEAKY_RELU SQUARED_DIFFERENCE MIRROR_PAD ABS SPLIT_V UNIQUE CEIL REVERSE_V2 ADD_N GATHER_ND COS \
        WHERE RANK ELU REVERSE_SEQUENCE MATRIX_DIAG QUANTIZE MATRIX_SET_DIAG ROUND HARD_SWISH IF WHILE \
        NON_MAX_SUPPRESSION_V4 NON_MAX_SUPPRESSION_V5 SCATTER_ND SELECT_V2 DENSIFY SEGMENT_SUM \
        BATCH_MATMUL PLACEHOLDER_FOR_GREATER_OP_CODES CUMSUM CALL_ONCE BROADCAST_TO RFFT2D CONV_3D IMAG \
        REAL COMPLEX_ABS HASHTABLE HASHTABLE_FIND HASHTABLE_IMPORT HASHTABLE_SIZE REDUCE_ALL \
        CONV_3D_TRANSPOSE VAR_HANDLE READ_VARIABLE ASSIGN_VARIABLE BROADCAST_ARGS RANDOM_STANDARD_NORMAL \
        BUCKETIZE RANDOM_UNIFORM MULTINOMIAL GELU DYNAMIC_UPDATE_SLICE RELU_0_TO_1 UNSORTED_SEGMENT_PROD \
        UNSORTED_SEGMENT_MAX UNSORTED_SEGMENT_SUM ATAN2 UNSORTED_SEGMENT_MIN SIGN BITCAST BITWISE_XOR \
        RIGHT_SHIFT
        """.split(separator: " ").map(String.init)
}
