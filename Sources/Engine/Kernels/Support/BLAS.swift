import CBLAS

/// The engine's only BLAS caller.
enum BLAS {
    /// C[m×n] = A[m×k] · B[k×n] (+ C when `accumulate`), all row-major and densely packed.
    @inline(__always)
    static func gemm(m: Int, n: Int, k: Int,
                     a: UnsafePointer<Float>, b: UnsafePointer<Float>, c: UnsafeMutablePointer<Float>,
                     transposeB: Bool = false, accumulate: Bool = false) {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, transposeB ? CblasTrans : CblasNoTrans,
                    Int32(m), Int32(n), Int32(k), 1, a, Int32(k), b, Int32(transposeB ? k : n),
                    accumulate ? 1 : 0, c, Int32(n))
    }

    /// y[m] = A[m×n] · x[n] (+ y when `accumulate`), A row-major and densely packed.
    @inline(__always)
    static func gemv(m: Int, n: Int, a: UnsafePointer<Float>, x: UnsafePointer<Float>, y: UnsafeMutablePointer<Float>,
                     accumulate: Bool = false) {
        cblas_sgemv(CblasRowMajor, CblasNoTrans, Int32(m), Int32(n), 1, a, Int32(n), x, 1, accumulate ? 1 : 0, y, 1)
    }

    /// Makes OpenBLAS single-threaded (process-wide), once. Its threaded routines split the sums
    /// differently for different thread counts; the engine's own threads split only outputs, so
    /// results do not depend on the thread count.
    static func pinToOneThread() { _ = pinned }

    private static let pinned: Void = { openblas_set_num_threads(1) }()
}
