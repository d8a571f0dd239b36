/// `exp` on eight float lanes at once (one AVX2 register; sixteen-lane callers call it on each
/// half), for the float activations built on it (LOGISTIC).
///
/// `x = n·ln 2 + r` with `n` the integer nearest `x / ln 2` and `|r| ≤ ln 2 / 2`; `exp(r)` is a
/// polynomial of degree 6 (relative error at most 3.2e-9, a nineteenth of a float's rounding
/// step), and `2^n` is built in the exponent bits. The product `exp(r) · 2^n` is rounded once, so
/// results below the smallest normal float are correctly rounded denormals of it. Within 1 ulp of
/// the exact exponential over the whole float range (`VectorExponentialTests` measures it against
/// `Foundation.exp` in Double); NaN stays NaN, `exp(−∞) = 0`, `exp(+∞) = +∞`.
///
/// Every product-sum is one `addingProduct` (a fused multiply-add), so every build and tier
/// computes the same bits: `FMA` where the target has it, the same rounding in software where not.
/// (On AVX2 the LOGISTIC kernel runs the same operations written with intrinsics,
/// `swiftlite_logistic_f32x8`.)
enum VectorExponential {
    typealias Lanes = SIMD8<Float>

    /// 1.5 · 2^23 + 127: adding `x / ln 2` to it leaves `n + 127` in the low bits of the sum's
    /// significand (|x / ln 2| < 2^22), so the sum's bits shifted left by 23 are `2^n` where `n`
    /// is a normal float's exponent (−126 ... 127); subtracting it again gives `n`, exactly.
    static let shifter: Float = 12_583_039

    /// `exp(x)` lane by lane, `2^n` in two factors (every lane, any value).
    @inline(always)
    static func exp(_ x: Lanes) -> Lanes {
        // Past 89 the result is +∞ (e^89 > Float.greatestFiniteMagnitude); e^−104 is under half the
        // smallest denormal, 2^−150. Clamping keeps `n` in −150 ... 129; a NaN lane passes through.
        let (shifted, p) = reduced(FloatGEMM.clamp(x, -104, 89))
        // 2^n as 2^a · 2^b with a = ⌊n/2⌋, b = n − a, both within −75 ... 65, so each is a normal
        // float. The integer n is the difference of the two sums' bit patterns (same exponent).
        let integer = unsafeBitCast(shifted, to: SIMD8<Int32>.self) &- unsafeBitCast(Lanes(repeating: shifter), to: SIMD8<Int32>.self)
        let a = integer &>> 1, b = integer &- a
        let bias = SIMD8<Int32>(repeating: 127)
        let scaleA = unsafeBitCast((a &+ bias) &<< 23, to: Lanes.self)
        let scaleB = unsafeBitCast((b &+ bias) &<< 23, to: Lanes.self)
        // p · 2^a is exact (a normal result); the second product rounds once.
        return p * scaleA * scaleB
    }

    /// `exp(x)` lane by lane where every lane is at most 88 or NaN (a larger lane gives an
    /// unspecified value); the bits of `exp(_:)`. Where every lane is at least −87.5, `n` is at
    /// least −126 and `2^n` one normal float: one product, rounded once as in `exp(_:)`.
    @inline(always)
    static func exp(notAbove88 x: Lanes) -> Lanes {
        guard !any(x .< -87.5) else { return exp(x) }
        let (shifted, p) = reduced(x)
        return p * unsafeBitCast(unsafeBitCast(shifted, to: SIMD8<Int32>.self) &<< 23, to: Lanes.self)
    }

    /// `shifter + n` and `exp(r)` for `x = n·ln 2 + r`.
    @inline(always)
    private static func reduced(_ v: Lanes) -> (shifted: Lanes, p: Lanes) {
        let shifter = Lanes(repeating: shifter)
        let shifted = shifter.addingProduct(v, Lanes(repeating: 1.442_695_04))
        let n = shifted - shifter
        // r = v − n·ln 2 in two steps: ln 2 = ln2High + ln2Low, ln2High the float nearest ln 2.
        // The first step is exact (where n ≠ 0, |v| ≥ 1/4, so v and n·ln2High are multiples of
        // 2^−25 whose difference is under 1/2), the second adds the low part's correction with
        // one rounding.
        var r = v.addingProduct(n, Lanes(repeating: -0.693_147_182_464_599_609_375))
        r = r.addingProduct(n, Lanes(repeating: 1.904_654_323_148_236_080_57e-9))
        // 1 + r + r²·(c2 + c3·r + … + c6·r⁴) by Horner's scheme, the c's those of least largest
        // relative error on |r| ≤ ln 2 / 2 as floats (scripts/fit_exp_polynomial.py).
        var p = Lanes(repeating: 1.381_829_963e-3)
        p = Lanes(repeating: 8.368_532_173e-3).addingProduct(p, r)
        p = Lanes(repeating: 4.166_829_214e-2).addingProduct(p, r)
        p = Lanes(repeating: 1.666_652_262e-1).addingProduct(p, r)
        p = Lanes(repeating: 4.999_999_404e-1).addingProduct(p, r)
        p = Lanes(repeating: 1).addingProduct(p, r)
        p = Lanes(repeating: 1).addingProduct(p, r)
        return (shifted, p)
    }
}
