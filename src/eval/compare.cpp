#include "eval/compare.h"

#include <cmath>
#include <cstdio>

#include "ir/tensor_util.h"

namespace onnx_tv::eval {

std::string format_number(long double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9Lg", v);
  return buf;
}

Comparison compare(const NumericTensor& got, const ir::ConstTensor& expected,
                   const Tolerance& tol) {
  Comparison c;
  auto fail = [&](const std::string& m) {
    c.kind = Comparison::Kind::Mismatch;
    c.message = "output '" + got.name + "': " + m;
    return c;
  };
  if (got.dtype != expected.dtype) {
    return fail("type " + ir::dtype_name(got.dtype) + ", expected " +
                ir::dtype_name(expected.dtype));
  }
  if (got.shape != expected.shape) {
    return fail("shape " + ir::shape_string(got.shape) + ", expected " +
                ir::shape_string(expected.shape));
  }
  const bool real = ir::is_float(expected.dtype);
  // The worst element is the one furthest out of tolerance, relative to its allowance.
  long double worst = 0;
  int64_t worst_at = -1, bad = 0;
  bool nan_expected = false;
  for (size_t i = 0; i < got.values.size(); ++i) {
    const long double g = got.values[i];
    const long double e = real ? (long double)expected.reals[i] : (long double)expected.ints[i];
    long double excess = 0;
    if (std::isnan(e)) {
      if (!std::isnan(g)) nan_expected = true;
      continue;
    }
    if (std::isnan(g) || std::isinf(e) || std::isinf(g)) {
      if (g != e) excess = INFINITY;
    } else if (real) {
      const long double err = std::fabs(g - e), allowed = tol.atol + tol.rtol * std::fabs(e);
      if (err > allowed) excess = err / allowed;
    } else if (g != e) {
      excess = INFINITY;
    }
    if (excess > 0) {
      ++bad;
      if (worst_at < 0 || excess > worst) worst = excess, worst_at = int64_t(i);
    }
  }
  if (bad > 0) {
    const long double e = real ? (long double)expected.reals[size_t(worst_at)]
                               : (long double)expected.ints[size_t(worst_at)];
    return fail(std::to_string(bad) + " of " + std::to_string(got.values.size()) +
                " elements differ; worst at " +
                ir::index_string(ir::unravel(worst_at, got.shape)) + ": got " +
                format_number(got.values[size_t(worst_at)]) + ", expected " + format_number(e));
  }
  if (nan_expected) {
    c.kind = Comparison::Kind::NanExpected;
    c.message = "output '" + got.name + "': the reference holds NaN where the value is a real "
                "number";
  }
  return c;
}

}  // namespace onnx_tv::eval
