#pragma once
// Comparing computed outputs with expected ones (ONNX test data, `onnx-tv eval --expected`).
//
// Floats: |got - expected| <= atol + rtol * |expected|, with rtol 1e-3 and atol 1e-5 by
// default. The references are float32 (or float16/float64) results of ONNX's numpy reference
// implementation, so they carry float rounding that our exact values do not; 1e-3 relative
// is ONNX's own backend-test tolerance and far above float32 rounding of one op, and the
// absolute term covers results near zero (sums that cancel). Infinities must match exactly.
// Integers and bools are compared exactly; element types and shapes must be equal.
#include <string>

#include "eval/eval.h"

namespace onnx_tv::eval {

struct Tolerance {
  long double rtol = 1e-3L;
  long double atol = 1e-5L;
};

struct Comparison {
  enum class Kind {
    Match,
    Mismatch,     // type, shape or some element out of tolerance
    NanExpected,  // the reference holds NaN where onnx-tv computed a number: out of scope
  };
  Kind kind = Kind::Match;
  // For a mismatch: what differs, and for values the worst element (index, got, expected)
  // and how many elements are out of tolerance.
  std::string message;
};

Comparison compare(const NumericTensor& got, const ir::ConstTensor& expected,
                   const Tolerance& tol = {});

// "0.1234567" with enough digits to tell float32 values apart.
std::string format_number(long double v);

}  // namespace onnx_tv::eval
