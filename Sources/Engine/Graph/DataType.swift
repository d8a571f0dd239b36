/// The element type of a tensor.
public enum DataType: String, Sendable, CaseIterable {
    case float32, float16, float64, int8, uint8, int16, uint16, int32, uint32, int64, uint64, bool, string

    /// Bytes per element, or nil for variable-length `string` tensors.
    public var byteSize: Int? {
        switch self {
        case .int8, .uint8, .bool: return 1
        case .float16, .int16, .uint16: return 2
        case .float32, .int32, .uint32: return 4
        case .float64, .int64, .uint64: return 8
        case .string: return nil
        }
    }

    /// The numpy dtype string (`<f4`, `|u1`, ...) for `.npy` files.
    public var numpyDescriptor: String? {
        switch self {
        case .float32: return "<f4"
        case .float16: return "<f2"
        case .float64: return "<f8"
        case .int8: return "|i1"
        case .uint8: return "|u1"
        case .int16: return "<i2"
        case .uint16: return "<u2"
        case .int32: return "<i4"
        case .uint32: return "<u4"
        case .int64: return "<i8"
        case .uint64: return "<u8"
        case .bool: return "|b1"
        case .string: return nil
        }
    }

    /// Maps the schema's `TensorType` code; nil for types the engine does not represent.
    init?(schemaCode: Int8) {
        switch schemaCode {
        case 0: self = .float32
        case 1: self = .float16
        case 2: self = .int32
        case 3: self = .uint8
        case 4: self = .int64
        case 5: self = .string
        case 6: self = .bool
        case 7: self = .int16
        case 9: self = .int8
        case 10: self = .float64
        case 12: self = .uint64
        case 15: self = .uint32
        case 16: self = .uint16
        default: return nil
        }
    }
}
