#pragma once
// Test helpers for the kernels: building nodes, attributes and tensors, running one node, and
// comparing results with expected exact values (printing all three on failure).
#include <gtest/gtest.h>

#include <initializer_list>
#include <map>
#include <string>
#include <vector>

#include "ops/registry.h"
#include "solver/evaluator.h"

namespace onnx_tv::ops::testing {

using ir::Attribute;
using ir::DType;
using ir::Shape;
using ir::Tensor;
using solver::Rational;
using solver::Value;

inline Attribute int_attr(int64_t i) {
  Attribute a;
  a.kind = Attribute::Kind::Int;
  a.i = i;
  return a;
}
inline Attribute ints_attr(std::vector<int64_t> v) {
  Attribute a;
  a.kind = Attribute::Kind::Ints;
  a.ints = std::move(v);
  return a;
}
inline Attribute float_attr(float f) {
  Attribute a;
  a.kind = Attribute::Kind::Float;
  a.f = f;
  return a;
}
inline Attribute floats_attr(std::vector<double> v) {
  Attribute a;
  a.kind = Attribute::Kind::Floats;
  a.floats = std::move(v);
  return a;
}
inline Attribute string_attr(std::string s) {
  Attribute a;
  a.kind = Attribute::Kind::String;
  a.s = std::move(s);
  return a;
}
inline Attribute tensor_attr(ir::ConstTensor t) {
  Attribute a;
  a.kind = Attribute::Kind::Tensor;
  a.tensor = std::make_shared<ir::ConstTensor>(std::move(t));
  return a;
}

// A fixture holding one Context, with builders for tensors and a runner for one node.
class OpTest : public ::testing::Test {
 protected:
  solver::Context ctx;

  Value q(long long n, long long d = 1) { return ctx.constant(Rational(long(n), long(d))); }

  Tensor ints(Shape s, std::vector<long long> v, DType t = DType::Int64) {
    std::vector<Value> d;
    for (long long i : v) d.push_back(ctx.constant(i));
    return ir::make_tensor(t, std::move(s), std::move(d));
  }
  // Float tensor of exact rationals given as integers.
  Tensor floats(Shape s, std::vector<long long> v) { return ints(std::move(s), v, DType::Float); }
  Tensor rationals(Shape s, std::vector<Rational> v) {
    std::vector<Value> d;
    for (const Rational& r : v) d.push_back(ctx.constant(r));
    return ir::make_tensor(DType::Float, std::move(s), std::move(d));
  }
  Tensor values(Shape s, std::vector<Value> v, DType t = DType::Float) {
    return ir::make_tensor(t, std::move(s), std::move(v));
  }
  // Symbols name0, name1, ... in row-major order.
  Tensor symbols(const std::string& name, Shape s) {
    std::vector<Value> d;
    for (int64_t i = 0; i < ir::element_count(s); ++i) d.push_back(ctx.symbol(name + std::to_string(i)));
    return ir::make_tensor(DType::Float, std::move(s), std::move(d));
  }

  static ir::Node node(const std::string& op, int opset, size_t n_inputs, size_t n_outputs = 1,
                       std::map<std::string, Attribute> attrs = {}) {
    ir::Node n;
    n.name = "/test/" + op;
    n.op_type = op;
    n.opset = opset;
    for (size_t i = 0; i < n_inputs; ++i) n.inputs.push_back("in" + std::to_string(i));
    for (size_t i = 0; i < n_outputs; ++i) n.outputs.push_back("out" + std::to_string(i));
    n.attributes = std::move(attrs);
    return n;
  }

  // Runs a node; omitted inputs are nullptr.
  std::vector<Tensor> run(const ir::Node& n, std::vector<const Tensor*> in) {
    return run_node(ctx, n, 0, in);
  }
  Tensor run1(const ir::Node& n, std::vector<const Tensor*> in) { return run(n, std::move(in)).at(0); }

  std::string str(const Tensor& t) {
    std::string s = ir::shape_string(t.shape) + " {";
    for (size_t i = 0; i < t.data.size(); ++i) s += (i ? ", " : "") + ctx.to_string(t.data[i]);
    return s + "}";
  }

  // Exact comparison with expected rationals, printing input and expected on failure.
  void expect_rationals(const Tensor& t, const Shape& shape, const std::vector<Rational>& want) {
    EXPECT_EQ(t.shape, shape) << "got " << str(t);
    ASSERT_EQ(t.data.size(), want.size()) << "got " << str(t);
    for (size_t i = 0; i < want.size(); ++i) {
      std::optional<Rational> r = ctx.as_rational(t.data[i]);
      EXPECT_TRUE(r && *r == want[i]) << "element " << i << ": got " << ctx.to_string(t.data[i])
                                      << ", expected " << solver::to_string(want[i])
                                      << "\nwhole result: " << str(t);
    }
  }
  void expect_ints(const Tensor& t, const Shape& shape, const std::vector<long long>& want) {
    std::vector<Rational> w;
    for (long long i : want) w.push_back(Rational(long(i)));
    expect_rationals(t, shape, w);
  }
  // Value equality (canonical forms) elementwise.
  void expect_same(const Tensor& got, const Tensor& want) {
    EXPECT_EQ(got.shape, want.shape);
    ASSERT_EQ(got.data.size(), want.data.size());
    for (size_t i = 0; i < got.data.size(); ++i) {
      EXPECT_EQ(got.data[i], want.data[i]) << "element " << i << ": got "
                                           << ctx.to_string(got.data[i]) << ", expected "
                                           << ctx.to_string(want.data[i]);
    }
  }
  // Numeric check of constant results (through the Evaluator) to `tol`.
  void expect_near(const Tensor& t, const std::vector<long double>& want, long double tol = 1e-12L) {
    solver::Evaluator ev(ctx, [](const std::string& s) -> Rational {
      ADD_FAILURE() << "unexpected symbol " << s;
      return 0;
    });
    ASSERT_EQ(t.data.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      long double v = ev.approx(t.data[i]);
      EXPECT_NEAR(double(v), double(want[i]), double(tol))
          << "element " << i << ": " << ctx.to_string(t.data[i]);
    }
  }
};

// Asserts that `stmt` throws E and that its message contains every string in `parts`.
#define EXPECT_THROW_MSG(stmt, E, ...)                                                     \
  do {                                                                                    \
    try {                                                                                 \
      stmt;                                                                               \
      ADD_FAILURE() << "expected " #E " from " #stmt;                                     \
    } catch (const E& e) {                                                                \
      for (const std::string& part : std::vector<std::string>{__VA_ARGS__}) {             \
        EXPECT_NE(std::string(e.what()).find(part), std::string::npos)                    \
            << "message '" << e.what() << "' lacks '" << part << "'";                    \
      }                                                                                   \
    }                                                                                     \
  } while (0)

}  // namespace onnx_tv::ops::testing
