"""The polynomial of `VectorExponential` (and `swiftlite_exp_reduced_f32x8`): exp(r) on
|r| <= ln 2 / 2 as 1 + r + r^2 (c2 + c3 r + c4 r^2 + c5 r^3 + c6 r^4), the c's chosen to make the
largest relative error as small as it can be, then stored as float32.

    python3 scripts/fit_exp_polynomial.py      (numpy only; prints the coefficients and the error)

With p(r) = 1 + r + r^2 q(r), the relative error (p - e^r) / e^r equals w(r) (q(r) - g(r)) with
g = (e^r - 1 - r) / r^2 and w = r^2 / e^r: a weighted best approximation of g by a quartic.
Lawson's algorithm finds it (weighted least squares, the weights multiplied by the error at every
pass, which drives them onto the points where the error peaks). Rounding the c's to float32
moves the error, so they are rounded one at a time, lowest power first, the others re-fitted
after each. Keeping the constant and linear terms at exactly 1 keeps Horner's last two steps
exact but for their rounding, as in the Taylor polynomial this replaces (to r^7: 5.2e-9 at the
ends, one more multiply-add).
"""
import numpy as np

HALF_WIDTH = np.log(2) / 2
r = np.linspace(-HALF_WIDTH, HALF_WIDTH, 40001)
r = r[np.abs(r) > 1e-5]  # g is 1/2 + O(r) there; the weight r^2 makes those points irrelevant
g = (np.expm1(r) - r) / r**2
w = r**2 / np.exp(r)


def best(fixed):
    """The free coefficients (powers 2...6 not in `fixed`) of the best quartic, and its error."""
    free = [k for k in range(2, 7) if k not in fixed]
    target = g - sum(c * r ** (k - 2) for k, c in fixed.items())
    basis = np.stack([r ** (k - 2) for k in free], axis=1)
    lawson = np.full(r.shape, 1.0 / r.size)
    for _ in range(4000):
        scale = np.sqrt(lawson) * w
        c = np.linalg.lstsq(basis * scale[:, None], target * scale, rcond=None)[0]
        error = np.abs(basis @ c - target) * w
        lawson *= error
        lawson /= lawson.sum()
    return dict(zip(free, c)), error.max()


coefficients = {}
for power in range(2, 7):
    fitted, _ = best(coefficients)
    coefficients[power] = float(np.float32(fitted[power]))
q = sum(c * r ** (k - 2) for k, c in coefficients.items())
error = np.max(np.abs((1 + r + r**2 * q) / np.exp(r) - 1))
for power, c in coefficients.items():
    print(f"c{power} = {c:.9e}  (float32 bits {np.float32(c).view(np.uint32):08x})")
print(f"largest relative error with float32 coefficients, exact arithmetic: {error:.3e}")
