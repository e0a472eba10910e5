#include "ir/graph.h"

#include <cmath>

#include "common/errors.h"

namespace onnx_tv::ir {

std::string Node::describe(size_t index) const {
  std::string op = domain.empty() || domain == "ai.onnx" ? op_type : domain + "." + op_type;
  if (!name.empty()) return op + " node '" + name + "'";
  return op + " node #" + std::to_string(index) + " (unnamed)";
}

Tensor to_tensor(solver::Context& ctx, const ConstTensor& c) {
  std::vector<solver::Value> data;
  const int64_t n = element_count(c.shape);
  data.reserve(n);
  if (is_float(c.dtype)) {
    ONNX_TV_ASSERT(int64_t(c.reals.size()) == n, "float constant with wrong element count");
    solver::FloatFormat fmt = c.dtype == DType::Float16    ? solver::FloatFormat::Float16
                              : c.dtype == DType::BFloat16 ? solver::FloatFormat::BFloat16
                              : c.dtype == DType::Float    ? solver::FloatFormat::Float32
                                                           : solver::FloatFormat::Float64;
    for (double x : c.reals) {
      if (std::isnan(x)) throw MathError("constant holds NaN");
      if (std::isinf(x)) {
        data.push_back(x > 0 ? solver::Context::pos_inf() : solver::Context::neg_inf());
      } else {
        data.push_back(ctx.constant(c.exact ? solver::Rational(x) : solver::float_meaning(x, fmt)));
      }
    }
  } else {
    ONNX_TV_ASSERT(int64_t(c.ints.size()) == n, "integer constant with wrong element count");
    for (int64_t x : c.ints) data.push_back(ctx.constant((long long)x));
  }
  return make_tensor(c.dtype, c.shape, std::move(data));
}

const Attribute* Node::attribute(const std::string& n) const {
  auto it = attributes.find(n);
  return it == attributes.end() ? nullptr : &it->second;
}

void check_declared_shapes(const Graph& g,
                           const std::function<std::optional<Shape>(const std::string&)>& shape_of) {
  auto check = [&](const ValueInfo& vi, const char* what) {
    if (!vi.shape) return;
    const std::optional<Shape> actual = shape_of(vi.name);
    if (!actual) return;
    bool bad = vi.shape->size() != actual->size();
    for (size_t d = 0; !bad && d < actual->size(); ++d)
      bad = (*vi.shape)[d].size && *(*vi.shape)[d].size != (*actual)[d];
    if (!bad) return;
    std::string declared = "[";
    for (size_t d = 0; d < vi.shape->size(); ++d) {
      const auto& dim = (*vi.shape)[d];
      declared += (d ? ", " : "") + (dim.size ? std::to_string(*dim.size)
                                              : (dim.symbol.empty() ? "?" : dim.symbol));
    }
    throw InputError(g.file + ": " + what + " '" + vi.name + "' is declared with shape " +
                     declared + "] but its inputs make it " + shape_string(*actual));
  };
  for (const auto& vi : g.outputs) check(vi, "graph output");
  for (const auto& [name, vi] : g.value_info) check(vi, "value");
}

}  // namespace onnx_tv::ir
