#pragma once
// GMP behind one header: the exact numbers of the engine and the helpers that go with them.
#include <gmpxx.h>

#include <optional>
#include <string>

namespace onnx_tv::solver {

using Rational = mpq_class;

// The IEEE formats whose constants appear in ONNX files.
enum class FloatFormat { Float16, BFloat16, Float32, Float64 };

// What a finite float constant means (plan-format section 1): with w the width of the interval
// of reals that round to `value` in `format` (round to nearest, ties to even), the rational p/q
// in that interval with q*q*w < 1 if there is one (the simplest rational of the interval, found
// by continued fractions), else the exact binary value. `value` must be finite and exactly
// representable in `format`.
Rational float_meaning(double value, FloatFormat format);

std::string to_string(const Rational& r);

// The integer value of r if it is an integer that fits in int64.
std::optional<long long> as_int64(const Rational& r);

}  // namespace onnx_tv::solver
