#pragma once
// GMP behind one header: the exact numbers of the engine and the helpers that go with them.
#include <gmpxx.h>

#include <optional>
#include <string>

namespace onnx_tv::solver {

using Rational = mpq_class;

// The IEEE formats whose constants appear in ONNX files.
enum class FloatFormat { Float16, BFloat16, Float32, Float64 };

// What a finite float constant means (plan-format section 1): the rational with the smallest
// denominator among all reals that round to `value` in `format` (round to nearest, ties to
// even). Found by continued fractions over the rounding interval. `value` must be finite and
// exactly representable in `format`.
Rational float_meaning(double value, FloatFormat format);

std::string to_string(const Rational& r);

// The integer value of r if it is an integer that fits in int64.
std::optional<long long> as_int64(const Rational& r);

}  // namespace onnx_tv::solver
