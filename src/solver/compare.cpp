// Ordering of constants: exact for rationals, numeric for constants with atoms (exp(1/3))
// when the difference is clearly larger than the rounding error of the evaluation.
#include <cmath>

#include "solver/context_impl.h"
#include "solver/evaluator.h"

namespace onnx_tv::solver {

std::optional<int> Context::compare(Value a, Value b) const {
  if (a == b) return 0;
  if (!is_constant(a) || !is_constant(b)) return std::nullopt;
  if (!a.is_finite() || !b.is_finite()) {
    int x = a.is_finite() ? 0 : a.inf, y = b.is_finite() ? 0 : b.inf;
    return x > y ? 1 : -1;  // equal infinities were caught by a == b
  }
  auto ra = as_rational(a), rb = as_rational(b);
  if (ra && rb) return cmp(*ra, *rb) > 0 ? 1 : cmp(*ra, *rb) < 0 ? -1 : 0;
  Evaluator ev(*this, [](const std::string& s) -> Rational {
    throw InternalError("compare evaluated symbol " + s);
  });
  long double x = ev.approx(a), y = ev.approx(b);
  if (std::isnan(x) || std::isnan(y) || std::isinf(x) || std::isinf(y)) return std::nullopt;
  // Each function evaluation loses a few ulps; 1e-12 relative is far beyond that and far
  // below any difference that matters between distinct exact constants of modest size.
  long double margin = 1e-12L * std::max<long double>({std::fabs(x), std::fabs(y), 1e-300L});
  if (x - y > margin) return 1;
  if (y - x > margin) return -1;
  return std::nullopt;
}

}  // namespace onnx_tv::solver
