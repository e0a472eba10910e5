"""What a float constant stands for (plan-format section 1), for the numeric runner.

A constant of type T stands for the rational p/q in lowest terms inside the interval of reals
that round to it in T when q*q*w < 1 (w the interval's width), else for its exact binary value.
So float16(2**-12) is 1/4096 and 0.33333334f is 1/3. The numeric runner must read constants the
way the contract does, or it would call a correct plan wrong (0.33333334f against a divide by 3
differs by 1e-8, far above the runner's tolerance) and a wrong one right.
"""
import math
from fractions import Fraction

import numpy as np

# ONNX data type -> significand bits (with the implicit one) and smallest normal exponent
_FORMATS = {10: (11, -14), 16: (8, -126), 1: (24, -126), 11: (53, -1022)}


def _interval(v, bits, emin):
    """[lo, hi] of the reals rounding to v (v > 0, finite) and the width."""
    x = Fraction(v)
    e = max(math.frexp(v)[1] - 1, emin)
    ulp = Fraction(2) ** (e - bits + 1)
    below = ulp / 2 if (x == Fraction(2) ** e and e > emin) else ulp
    lo, hi = x - below / 2, x + ulp / 2
    return lo, hi, hi - lo


def _simplest(lo, hi):
    """The rational of smallest denominator in [lo, hi], 0 <= lo <= hi."""
    fl = math.floor(lo)
    if fl == lo:
        return Fraction(fl)
    if fl + 1 <= hi:
        return Fraction(fl + 1)
    return fl + 1 / _simplest(1 / (hi - fl), 1 / (lo - fl))


def meaning(v, data_type):
    """The rational (Fraction) a float constant stands for, or None for inf/nan."""
    if not math.isfinite(v):
        return None
    if v == 0 or data_type not in _FORMATS:
        return Fraction(v)
    bits, emin = _FORMATS[data_type]
    lo, hi, w = _interval(abs(v), bits, emin)
    r = _simplest(lo, hi)
    if r.denominator * r.denominator * w < 1:
        return r if v > 0 else -r
    return Fraction(v)


def meaning_array(arr, data_type):
    """float64 array of the constants' meanings (nearest float64 of each rational). Every
    element is read, whatever the size: a table read as binary values in one program and as
    meanings in another (a spec table and the ranks' smaller slices of it) would differ."""
    arr = np.asarray(arr, np.float64)
    if data_type not in _FORMATS:
        return arr
    out = arr.copy()
    for u in np.unique(arr[np.isfinite(arr)]):
        m = meaning(float(u), data_type)
        out[arr == u] = float(m)
    return out
