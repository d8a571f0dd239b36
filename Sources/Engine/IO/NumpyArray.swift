import Foundation

/// An n-dimensional array in NumPy's `.npy` format (versions 1.0–3.0, little-endian, C order).
///
/// ```swift
/// let input = try NumpyArray(contentsOf: URL(fileURLWithPath: "input.npy"))
/// try interpreter.copy(input.data, toInputAt: 0)
/// ```
package struct NumpyArray: Sendable, Equatable {
    package var dataType: DataType
    package var shape: [Int]
    /// The elements, densely packed in C order, little-endian.
    package var data: Data

    package init(dataType: DataType, shape: [Int], data: Data) {
        self.dataType = dataType
        self.shape = shape
        self.data = data
    }

    package var elementCount: Int { shape.reduce(1, *) }

    /// Problems with a `.npy` file.
    package enum FormatError: Error, Equatable, CustomStringConvertible {
        case notNumpy
        case unsupportedVersion(major: UInt8)
        case malformedHeader(String)
        case unsupportedDescriptor(String)
        case fortranOrder
        case sizeMismatch(expected: Int, actual: Int)

        package var description: String {
            switch self {
            case .notNumpy: return "not a .npy file (missing \\x93NUMPY magic)"
            case .unsupportedVersion(let v): return ".npy format version \(v) is not supported (1, 2 or 3)"
            case .malformedHeader(let why): return "malformed .npy header: \(why)"
            case .unsupportedDescriptor(let d): return "unsupported .npy dtype '\(d)' (little-endian numeric types only)"
            case .fortranOrder: return "Fortran-ordered .npy arrays are not supported; save with C order"
            case let .sizeMismatch(expected, actual): return ".npy data holds \(actual) bytes, the header implies \(expected)"
            }
        }
    }

    /// Reads a `.npy` file.
    /// - Throws: a file-system error, or `FormatError` naming what is unsupported.
    package init(contentsOf url: URL) throws {
        try self.init(npy: Data(contentsOf: url))
    }

    /// Parses the bytes of a `.npy` file.
    package init(npy: Data) throws(FormatError) {
        let bytes = [UInt8](npy)
        guard bytes.count >= 10, bytes[0] == 0x93, Array(bytes[1 ..< 6]) == Array("NUMPY".utf8) else { throw .notNumpy }
        let major = bytes[6]
        let headerLength: Int, headerStart: Int
        switch major {
        case 1:
            headerLength = Int(bytes[8]) | Int(bytes[9]) << 8
            headerStart = 10
        case 2, 3:
            guard bytes.count >= 12 else { throw .malformedHeader("truncated") }
            headerLength = (0 ..< 4).reduce(0) { $0 | Int(bytes[8 + $1]) << (8 * $1) }
            headerStart = 12
        default:
            throw .unsupportedVersion(major: major)
        }
        guard headerLength <= bytes.count - headerStart else { throw .malformedHeader("header length \(headerLength) exceeds the file") }
        let header = String(decoding: bytes[headerStart ..< headerStart + headerLength], as: UTF8.self)
        let descriptor = try Self.value(of: "descr", in: header)
        guard let type = DataType.allCases.first(where: { $0.numpyDescriptor == Self.normalise(descriptor) }) else {
            throw .unsupportedDescriptor(descriptor)
        }
        guard try Self.value(of: "fortran_order", in: header) == "False" else { throw .fortranOrder }
        let shapeText = try Self.value(of: "shape", in: header)
        var shape = [Int]()
        for part in shapeText.trimmingCharacters(in: CharacterSet(charactersIn: "()")).split(separator: ",") {
            let trimmed = part.trimmingCharacters(in: .whitespaces)
            guard !trimmed.isEmpty else { continue }
            guard let d = Int(trimmed), d >= 0 else { throw .malformedHeader("shape '\(shapeText)'") }
            shape.append(d)
        }
        guard let expected = checkedByteCount(shape, elementSize: type.byteSize ?? 1) else {
            throw .malformedHeader("shape \(shape) is too large")
        }
        let payload = headerStart + headerLength
        guard bytes.count - payload == expected else { throw .sizeMismatch(expected: expected, actual: bytes.count - payload) }
        self.init(dataType: type, shape: shape, data: npy.subdata(in: npy.startIndex + payload ..< npy.endIndex))
    }

    /// `<u1` and `|u1` mean the same; so do `<b1` and `|b1`.
    private static func normalise(_ d: String) -> String {
        if d.count == 3, d.hasSuffix("1"), d.first == "<" || d.first == "=" { return "|" + d.dropFirst() }
        if d.first == "=" { return "<" + d.dropFirst() }
        return d
    }

    /// The text of `key`'s value in the header dictionary (quotes stripped).
    private static func value(of key: String, in header: String) throws(FormatError) -> String {
        guard let keyRange = header.range(of: "'\(key)'") else { throw .malformedHeader("no '\(key)' key") }
        var rest = header[keyRange.upperBound...].drop { $0 == " " || $0 == ":" }
        if rest.first == "(" {
            guard let close = rest.firstIndex(of: ")") else { throw .malformedHeader("unterminated '\(key)'") }
            return String(rest[...close])
        }
        if rest.first == "'" || rest.first == "\"" {
            let quote = rest.removeFirst()
            guard let close = rest.firstIndex(of: quote) else { throw .malformedHeader("unterminated '\(key)'") }
            return String(rest[..<close])
        }
        return String(rest.prefix { $0 != "," && $0 != "}" }).trimmingCharacters(in: .whitespaces)
    }

    /// The `.npy` (version 1.0) encoding of this array.
    package func npyData() -> Data {
        let shapeText = shape.count == 1 ? "(\(shape[0]),)" : "(" + shape.map(String.init).joined(separator: ", ") + ")"
        var header = "{'descr': '\(dataType.numpyDescriptor ?? "|u1")', 'fortran_order': False, 'shape': \(shapeText), }"
        // Pad with spaces so the data starts on a 64-byte boundary, ending the header with '\n'.
        let unpadded = 10 + header.utf8.count + 1
        header += String(repeating: " ", count: (64 - unpadded % 64) % 64) + "\n"
        let length = header.utf8.count
        var out: Data
        if length <= 0xFFFF {
            out = Data([0x93] + Array("NUMPY".utf8) + [1, 0])
            out.append(contentsOf: [UInt8(length & 0xff), UInt8(length >> 8)])
        } else {
            // Version 2.0: a 4-byte header length (only very high ranks need it).
            out = Data([0x93] + Array("NUMPY".utf8) + [2, 0])
            out.append(contentsOf: (0 ..< 4).map { UInt8(truncatingIfNeeded: length >> (8 * $0)) })
        }
        out.append(contentsOf: Array(header.utf8))
        out.append(data)
        return out
    }

    /// The elements converted to `Float` (for comparisons).
    package func floats() -> [Float] {
        data.withUnsafeBytes { raw -> [Float] in
            // The memberwise initialiser does not validate: never read past the data.
            let n = Swift.min(shape.allSatisfy { $0 >= 0 } ? elementCount : 0, raw.count / Swift.max(dataType.byteSize ?? 1, 1))
            func load<T>(_ t: T.Type, _ f: (T) -> Float) -> [Float] {
                (0 ..< n).map { f(raw.loadUnaligned(fromByteOffset: $0 * MemoryLayout<T>.size, as: T.self)) }
            }
            switch dataType {
            case .float32: return load(Float.self) { $0 }
            case .float64: return load(Double.self) { Float($0) }
            case .float16: return load(UInt16.self) { Float(Float16(bitPattern: $0)) }
            case .int8: return load(Int8.self) { Float($0) }
            case .uint8, .bool: return load(UInt8.self) { Float($0) }
            case .int16: return load(Int16.self) { Float($0) }
            case .uint16: return load(UInt16.self) { Float($0) }
            case .int32: return load(Int32.self) { Float($0) }
            case .uint32: return load(UInt32.self) { Float($0) }
            case .int64: return load(Int64.self) { Float($0) }
            case .uint64: return load(UInt64.self) { Float($0) }
            case .string: return []
            }
        }
    }
}
