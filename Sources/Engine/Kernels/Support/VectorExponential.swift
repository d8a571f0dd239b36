/// `exp` on sixteen float lanes at once, for the float activations built on it (LOGISTIC).
///
/// `x = n·ln 2 + r` with `n` the integer nearest `x / ln 2` and `|r| ≤ ln 2 / 2`; `exp(r)` is
/// the Taylor polynomial to `r⁷` (the first term left out, `r⁸/8!`, is below 5.2e-9 of the result
/// at `|r| = ln 2 / 2`, a tenth of a float's rounding step), and `2^n` is built in the exponent
/// bits, in two factors so that results below the smallest normal float come out as the
/// correctly rounded denormals of `exp(r) · 2^n`. Within 1 ulp of the exact exponential over the
/// whole float range (`VectorExponentialTests` measures it against `Foundation.exp` in Double);
/// NaN stays NaN, `exp(−∞) = 0`, `exp(+∞) = +∞`.
///
/// Every product-sum is one `addingProduct` (a fused multiply-add), so every build and tier
/// computes the same bits: `FMA` where the target has it, the same rounding in software where not.
enum VectorExponential {
    typealias Lanes = SIMD16<Float>

    /// `exp(x)` lane by lane.
    @inline(always)
    static func exp(_ x: Lanes) -> Lanes {
        // Past these the result is +∞ (e^89 > Float.greatestFiniteMagnitude) or 0 (e^−104 is
        // under half the smallest denormal, 2^−150); clamping keeps `n` in −150 ... 129.
        // Comparisons are false for NaN, which passes through to the result.
        var v = x.replacing(with: 89, where: x .> 89)
        v = v.replacing(with: -104, where: v .< -104)
        // n = round(v / ln 2): adding 1.5 · 2^23 leaves n in the low bits of the sum's significand
        // (|v / ln 2| < 2^22), and subtracting it again gives n as a float, exactly.
        let shifter = Lanes(repeating: 12_582_912)
        let shifted = shifter.addingProduct(v, Lanes(repeating: 1.442_695_04))
        let n = shifted - shifter
        // r = v − n·ln 2 in two steps: ln 2 = ln2High + ln2Low, ln2High the float nearest ln 2.
        // The first step is exact (where n ≠ 0, |v| ≥ 1/4, so v and n·ln2High are multiples of
        // 2^−25 whose difference is under 1/2), the second adds the low part's correction with
        // one rounding.
        var r = v.addingProduct(n, Lanes(repeating: -0.693_147_182_464_599_609_375))
        r = r.addingProduct(n, Lanes(repeating: 1.904_654_323_148_236_080_57e-9))
        // 1 + r + r²/2! + … + r⁷/7!, Horner's scheme.
        var p = Lanes(repeating: 1.0 / 5040)
        p = Lanes(repeating: 1.0 / 720).addingProduct(p, r)
        p = Lanes(repeating: 1.0 / 120).addingProduct(p, r)
        p = Lanes(repeating: 1.0 / 24).addingProduct(p, r)
        p = Lanes(repeating: 1.0 / 6).addingProduct(p, r)
        p = Lanes(repeating: 0.5).addingProduct(p, r)
        p = Lanes(repeating: 1).addingProduct(p, r)
        p = Lanes(repeating: 1).addingProduct(p, r)
        // 2^n as 2^a · 2^b with a = ⌊n/2⌋, b = n − a, both within −75 ... 65 for n in −150 ... 129,
        // so each is a normal float (biased exponent `e + 127` in bits 23...30). The integer n is the
        // difference of the two sums' bit patterns (same exponent).
        let integer = unsafeBitCast(shifted, to: SIMD16<Int32>.self) &- unsafeBitCast(shifter, to: SIMD16<Int32>.self)
        let a = integer &>> 1, b = integer &- a
        let bias = SIMD16<Int32>(repeating: 127)
        let scaleA = unsafeBitCast((a &+ bias) &<< 23, to: Lanes.self)
        let scaleB = unsafeBitCast((b &+ bias) &<< 23, to: Lanes.self)
        // p · 2^a is exact (a normal result); the second product rounds once.
        return p * scaleA * scaleB
    }
}
